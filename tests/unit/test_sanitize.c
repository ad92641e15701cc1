/* test_sanitize.c - the sanitizer of server text: each class it removes (paths, URLs, host
 * names, IPv4/IPv6, e-mail, tokens and keys, UUIDs and MACs, private names, prompt and
 * fixture runs), what it must leave alone, control characters, UTF-8 boundaries, length
 * caps, very long input, the check the board calls, the vocabularies and the receipt check. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "bench/sanitize.h"
#include "bench/suite.h"

static char out_buf[512];

/* Sanitized text (into a 256-byte buffer, so the excerpt is not cut for these cases). */
static const char *san(const sanitize_context *c, const char *in) {
    sanitize_text(c, in, strlen(in), out_buf, 256);
    return out_buf;
}

static bool valid_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned lo, hi;
        size_t len = utf8_lead((unsigned char)s[i], &lo, &hi);
        if (!len || i + len > n) return false;
        if (len > 1 && ((unsigned char)s[i + 1] < lo || (unsigned char)s[i + 1] > hi)) return false;
        for (size_t k = 2; k < len; k++)
            if (((unsigned char)s[i + k] & 0xC0) != 0x80) return false;
        i += len;
    }
    return true;
}

static void expect(const sanitize_context *c, const char *in, const char *want) {
    const char *got = san(c, in);
    cr_expect_str_eq(got, want, "sanitize(\"%s\")", in);
    cr_expect(!sanitize_check(c, got, strlen(got), NULL), "check finds something in the output of \"%s\"", in);
}

static void expect_what(const sanitize_context *c, const char *in, const char *want_what) {
    const char *what = NULL;
    cr_expect(sanitize_check(c, in, strlen(in), &what), "check misses \"%s\"", in);
    cr_expect(what && strcmp(what, want_what) == 0, "\"%s\": check says '%s', want '%s'", in, what ? what : "(none)",
              want_what);
}

Test(sanitize, paths) {
    expect(NULL, "cannot open /home/alice/models/llama-3-8b.gguf: no such file", "cannot open <path>: no such file");
    expect(NULL, "failed to load '~/models/q4.gguf'", "failed to load '<path>'");
    expect(NULL, "see ./run/x.log and ../cache/y", "see <path> and <path>");
    expect(NULL, "file C:\\Users\\bob\\m.gguf missing", "file <path> missing");
    expect(NULL, "at \\\\nas\\share\\m.bin", "at <path>");
    expect(NULL, "read $HOME/.cache/hf failed", "read <path> failed");
    expect(NULL, "/home/John Smith/models/m.gguf is missing", "<path> is missing");
    expect(NULL, "model=/srv/models/a.gguf", "model=<path>");
    expect_what(NULL, "open /var/lib/x", "a file-system path");
    /* not paths */
    expect(NULL, "12.5 tok/s with text/event-stream and/or a / b", "12.5 tok/s with text/event-stream and/or a / b");
    expect(NULL, "org/model-7B not found", "org/model-7B not found");
}

Test(sanitize, urls) {
    expect(NULL, "proxy error for https://gpu-7.internal.example.com:8443/v1/completions?x=1.",
           "proxy error for <url>.");
    expect(NULL, "(see http://10.0.0.3/x)", "(see <url>)");
    expect_what(NULL, "s3://bucket/key", "a URL");
}

Test(sanitize, host_names) {
    expect(NULL, "upstream connect error to gpu-node-17.cluster.local", "upstream connect error to <host>");
    expect(NULL, "connection to localhost:8080 refused", "connection to <host> refused");
    expect(NULL, "host gpubox7 unreachable; hostname=inference-a", "host <host> unreachable; hostname=<host>");
    expect(NULL, "reached node3.example.net/models/x", "reached <host>");
    expect_what(NULL, "from box.corp.example.org", "a host name");
    /* not host names: files, versions, numbers, words */
    expect(NULL, "model.gguf, llama.cpp, config.json, tokenizer.model, v1.2.3, 3.20GHz, e.g. this",
           "model.gguf, llama.cpp, config.json, tokenizer.model, v1.2.3, 3.20GHz, e.g. this");
    expect(NULL, "the host is unreachable at 10:15:30", "the host is unreachable at 10:15:30");
    expect(NULL, "torch.cuda.OutOfMemoryError at line:42, status:503", "torch.cuda.OutOfMemoryError at line:42, status:503");
}

Test(sanitize, ipv4) {
    expect(NULL, "connect to 10.0.0.12 failed", "connect to <address> failed");
    expect(NULL, "bind 192.168.1.5:8080, route 10.1.0.0/16.", "bind <address>, route <address>.");
    expect_what(NULL, "peer 127.0.0.1", "an IP address");
    /* not addresses */
    expect(NULL, "version 1.2.3.4.5, 1.2.3, 256.1.1.1", "version 1.2.3.4.5, 1.2.3, 256.1.1.1");
}

Test(sanitize, ipv6) {
    expect(NULL, "via fe80::1%eth0 now", "via <address> now");
    expect(NULL, "peer 2001:db8:85a3::8a2e:370:7334.", "peer <address>.");
    expect(NULL, "listen [::1]:8080", "listen [<address>]:8080");
    expect(NULL, "mapped ::ffff:192.0.2.1 ok", "mapped <address> ok");
    expect(NULL, "full 2001:0db8:0000:0000:0000:ff00:0042:8329", "full <address>");
    expect_what(NULL, "fd00:1234::77", "an IP address");
    /* not addresses: times, scopes, too few groups */
    expect(NULL, "at 10:15:30, std::vector, Foo::Bar, 1:2:3", "at 10:15:30, std::vector, Foo::Bar, 1:2:3");
}

Test(sanitize, email) {
    expect(NULL, "contact ops-team+gpu@example.org.", "contact <email>.");
    expect(NULL, "login alice@gpubox failed", "login <email> failed");
    expect_what(NULL, "x a.b@c.io y", "an e-mail address");
}

Test(sanitize, tokens_and_keys) {
    expect(NULL, "Authorization: Bearer abcDEF123456ghiJKL rejected", "Authorization: Bearer <secret> rejected");
    expect(NULL, "bad key sk-proj-AbCdEf0123456789XyZ", "bad key <secret>");
    expect(NULL, "hf_AbCdEfGhIjKlMnOpQrStUvWx is invalid", "<secret> is invalid");
    expect(NULL, "api_key=12345678abc", "api_key=<secret>");
    expect(NULL, "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "jwt <secret>");
    expect(NULL, "request chatcmpl-Zx8Kq2Lm9Np4Rt7Vw1Yb3 failed", "request <secret> failed");
    expect(NULL, "password: \"hunter2hunter2\"", "password: \"<secret>\"");
    expect_what(NULL, "token=AbC123dEf456", "a token or key");
    /* not secrets: digests, model names, prose about tokens */
    const char *fine = "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 of "
                       "Meta-Llama-3.1-8B-Instruct-Q4_K_M; token limit exceeded; max_tokens must be <= 4096; "
                       "ConnectionRefusedError";
    expect(NULL, fine, fine);
}

Test(sanitize, uuids_and_macs) {
    expect(NULL, "device GPU-5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13 lost", "device GPU-<id> lost");
    expect(NULL, "nic aa:bb:cc:dd:ee:ff and 00-1A-2B-3C-4D-5E", "nic <id> and <id>");
    expect_what(NULL, "5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13", "a UUID or MAC address");
}

Test(sanitize, private_names) {
    sanitize_context *c = sanitize_context_new();
    cr_assert(c);
    cr_assert_eq(sanitize_context_add_word(c, "GPUbox"), PACER_OK);
    cr_assert_eq(sanitize_context_add_word(c, "jo"), PACER_OK); /* too short: ignored */
    expect(c, "on gpubox: failed, gpuboxes fine, jo fine", "on <name>: failed, gpuboxes fine, jo fine");
    expect_what(c, "GPUBOX down", "a private name of this run");
    sanitize_context_free(c);
}

Test(sanitize, prompt_runs) {
    sanitize_context *c = sanitize_context_new();
    cr_assert(c);
    const char *prompt = "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1)\n";
    cr_assert_eq(sanitize_context_add_text(c, prompt, strlen(prompt)), PACER_OK);
    /* quoted verbatim, with its line breaks escaped, or through control characters */
    const char *got = san(c, "prompt too long: 'def fibonacci(n):\\n    return n' exceeds");
    cr_expect(strstr(got, "<prompt>") && !strstr(got, "fibonacci") && !strstr(got, "return"), "%s", got);
    got = san(c, "bad input def fibonacci(n):\r\n\treturn n if");
    cr_expect(strstr(got, "<prompt>") && !strstr(got, "fibonacci"), "%s", got);
    /* runs shorter than 8 survive */
    expect(c, "error: def fib!", "error: def fib!");
    expect_what(c, "x fibonacci y", "text of the prompt or a fixture");
    /* the patterns still apply inside prompt text */
    expect(NULL, "def fibonacci(n):", "def fibonacci(n):");
    sanitize_context_free(c);
}

Test(sanitize, suite_fixtures) {
    suite s;
    char err[200];
    cr_assert_eq(suite_load("community-v2", &s, err, sizeof err), PACER_OK, "%s", err);
    sanitize_context *c = sanitize_context_new();
    cr_assert_eq(sanitize_context_add_suite(c, &s), PACER_OK);
    const char *got = san(c, "HTTP 400: cannot tokenize 'class RateLimiter:' (context full)");
    cr_expect(!strstr(got, "RateLimiter"), "%s", got);
    got = san(c, "refused: I'm moving a small team's Postgres database");
    cr_expect(!strstr(got, "Postgres"), "%s", got);
    sanitize_context_free(c);
    suite_free(&s);
}

Test(sanitize, control_and_format_characters) {
    expect(NULL, "  a\x01" "b\tc\r\nd\x7f" "e  ", "a b c d e");
    expect(NULL, "x\xc2\x85y\xe2\x80\xa8z", "x y z"); /* C1 NEL, line separator */
    /* a zero-width space cannot hide a key from the detectors */
    expect(NULL, "key sk-\xe2\x80\x8b" "AbCdEf0123456789XyZ", "key <secret>");
    expect_what(NULL, "a\nb", "a control or format character");
    expect_what(NULL, "a\xe2\x80\x8b" "b", "a control or format character");
    cr_expect(!sanitize_check(NULL, "a  b <path> <prompt>", 20, NULL));
}

Test(sanitize, invalid_utf8_becomes_replacement_characters) {
    expect(NULL, "a\xff" "b\xc3(c\xed\xa0\x80" "d\xe2\x82", "a\xef\xbf\xbd" "b\xef\xbf\xbd(c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "d\xef\xbf\xbd\xef\xbf\xbd");
    expect_what(NULL, "a\xc0\xaf", "invalid UTF-8");
}

/* A match that starts or ends inside a character takes the whole character; a cut never
 * splits one. */
Test(sanitize, utf8_boundaries) {
    sanitize_context *c = sanitize_context_new();
    const char *prompt = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x97\xe3\x83\xad"; /* 日本語のプロ */
    cr_assert_eq(sanitize_context_add_text(c, prompt, strlen(prompt)), PACER_OK);
    /* 本語の = 9 bytes: windows start and end inside characters */
    const char *got = san(c, "x \xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae y");
    cr_expect_str_eq(got, "x <prompt> y");
    /* a run of 8 bytes that starts mid-character in the prompt: ASCII + 2.33 characters */
    sanitize_context_free(c);

    char in[600];
    size_t n = 0;
    for (int i = 0; i < 150; i++) n += (size_t)snprintf(in + n, sizeof in - n, "%s", i % 3 ? "\xc3\xa9" : "\xe2\x82\xac");
    for (size_t size = 1; size < 80; size++) {
        char out[80];
        size_t len = sanitize_text(NULL, in, n, out, size);
        cr_expect(len < size && strlen(out) == len, "size %zu: length %zu", size, len);
        cr_expect(valid_utf8(out, len), "size %zu: invalid UTF-8", size);
        if (size > 4) cr_expect(len >= 3 && strcmp(out + len - 3, "...") == 0, "size %zu: no ... mark", size);
    }
    /* a placeholder is never cut in half */
    char out[10];
    sanitize_text(NULL, "abc /home/x/y", 13, out, sizeof out);
    cr_expect_str_eq(out, "abc...");
}

Test(sanitize, excerpt_cap) {
    char in[1000], out[SANITIZE_EXCERPT_MAX + 1];
    memset(in, 'w', sizeof in);
    for (size_t i = 5; i < sizeof in; i += 6) in[i] = ' ';
    size_t len = sanitize_text(NULL, in, sizeof in, out, sizeof out);
    cr_expect_eq(len, strlen(out));
    cr_expect(len <= SANITIZE_EXCERPT_MAX && len >= SANITIZE_EXCERPT_MAX - 8, "%zu", len);
    cr_expect_str_eq(out + len - 3, "...");
}

/* Input far beyond the cap: only SANITIZE_INPUT_MAX bytes are read, so time and memory stay
 * bounded whatever the input; pathological shapes for each detector included. */
Test(sanitize, very_long_input, .timeout = 60) {
    static const char *const shapes[] = {"a", "/", "/a", "1.", "::", "a:", "@a", "a.", "sk-", "token=", "\\n", "\xe2\x82",
                                         "\xc3\xa9", "~", "GPU-", "aB3", "<pa", "a b/"};
    size_t n = 16u << 20;
    char *in = malloc(n);
    cr_assert(in);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        size_t sl = strlen(shapes[k]);
        for (size_t i = 0; i < n; i++) in[i] = shapes[k][i % sl];
        char out[SANITIZE_EXCERPT_MAX + 1];
        size_t len = sanitize_text(NULL, in, n, out, sizeof out);
        cr_expect(len <= SANITIZE_EXCERPT_MAX && valid_utf8(out, len), "shape '%s'", shapes[k]);
        cr_expect(len >= 3 && strcmp(out + len - 3, "...") == 0, "shape '%s': not marked as cut: %s", shapes[k], out);
        cr_expect(!sanitize_check(NULL, out, len, NULL), "shape '%s'", shapes[k]);
        cr_expect(sanitize_check(NULL, in, n, NULL), "shape '%s': an over-long string passes the check", shapes[k]);
    }
    free(in);
}

/* Property: for random mixtures of every pattern's pieces, the output is valid UTF-8,
 * within its cap, and the check finds nothing in it; a second pass changes nothing. */
Test(sanitize, output_always_passes_the_check) {
    static const char *const parts[] = {
        "/",        "/home/u/", "~/",      "x",        ".",     ":",     "@",        "10.0.0.",   "1",      "ff",
        "::",       "-",        "_",       " ",        "\n",    "\\n",   "sk-",      "AbC9dEf8",  "Bearer ", "host ",
        "example",  ".com",     ".gguf",   "http",     "://",   "\xc3\xa9", "\xe2\x82\xac", "\xff", "<path>",
        "<",        ">",        "token=",  "def fibonacci(n", "):", "aa:bb:cc:dd:ee:ff", "5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13",
        "gpubox",   "\xe2\x80\x8b", "(", "'", "=",     "C:\\",  "$HOME/",  "%",  "[",   "]"};
    sanitize_context *c = sanitize_context_new();
    cr_assert_eq(sanitize_context_add_text(c, "def fibonacci(n):\n    return n\n", 31), PACER_OK);
    cr_assert_eq(sanitize_context_add_word(c, "gpubox"), PACER_OK);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    char in[400], out[200], again[200];
    for (int iter = 0; iter < 10000; iter++) {
        size_t n = 0;
        for (;;) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            const char *p = parts[rng % (sizeof parts / sizeof parts[0])];
            size_t pl = strlen(p);
            if (n + pl >= sizeof in || (rng >> 40) % 23 == 0) break;
            memcpy(in + n, p, pl);
            n += pl;
        }
        size_t size = 4 + (size_t)((rng >> 20) % (sizeof out - 4));
        size_t len = sanitize_text(c, in, n, out, size);
        cr_assert(len < size && valid_utf8(out, len), "iteration %d", iter);
        const char *what = NULL;
        cr_assert(!sanitize_check(c, out, len, &what), "iteration %d: '%.*s' -> '%s' still holds %s", iter, (int)n, in,
                  out, what);
        size_t len2 = sanitize_text(c, out, len, again, sizeof again);
        cr_assert(len2 == len && memcmp(out, again, len) == 0, "iteration %d: not stable: '%s' -> '%s'", iter, out,
                  again);
    }
    sanitize_context_free(c);
}

Test(sanitize, vocabularies) {
    cr_expect_str_eq(sanitize_vocab(sanitize_finish_reasons, "stop"), "stop");
    cr_expect_str_eq(sanitize_vocab(sanitize_finish_reasons, "length"), "length");
    cr_expect_str_eq(sanitize_vocab(sanitize_finish_reasons, "eos /home/x"), "other");
    cr_expect_str_eq(sanitize_vocab(sanitize_finish_reasons, ""), "");
    cr_expect_str_eq(sanitize_vocab(sanitize_backends, "cuda"), "cuda");
    cr_expect_str_eq(sanitize_vocab(sanitize_backends, "CUDA on gpubox"), "other");
}

static json_t *receipt_with(const char *path, json_t *value) {
    json_t *r = json_pack("{s:{s:s},s:{s:s},s:{s:s,s:s},s:{s:{s:s},s:[{s:s}]},s:{s:s},s:[],s:[{s:[],s:[{s:s,s:s,s:s,s:s}]}],"
                          "s:{s:[{s:[],s:[{s:s,s:s,s:s,s:s}]}]}}",
                          "manifest", "reason", "", "platform", "name", "linux-x86_64", "model", "revision", "abc",
                          "served_model_id", "org/m", "hardware", "cpu", "model", "Test CPU", "gpus", "name", "Test GPU",
                          "backend", "name", "cuda", "unranked_reasons", "cells", "reasons", "attempts", "reason",
                          "HTTP 500", "server_message", "out of memory", "finish_reason", "stop", "token_hash", "abc123",
                          "load", "levels", "reasons", "attempts", "reason", "HTTP 500", "server_message", "out of memory",
                          "finish_reason", "length", "token_hash", "abc123");
    cr_assert(r);
    if (path) {
        json_t *at = r;
        char key[64];
        const char *p = path;
        for (;;) {
            size_t k = strcspn(p, ".");
            snprintf(key, sizeof key, "%.*s", (int)k, p);
            if (!p[k]) break;
            at = json_object_get(at, key);
            if (json_is_array(at)) at = json_array_get(at, 0);
            p += k + 1;
        }
        json_object_set_new(at, key, value);
    }
    return r;
}

Test(sanitize, receipt_check_names_the_field) {
    sanitize_context *c = sanitize_context_new();
    cr_assert_eq(sanitize_context_add_text(c, "the secret prompt text", 22), PACER_OK);
    char err[200];
    json_t *r = receipt_with(NULL, NULL);
    cr_expect_eq(sanitize_check_receipt(r, c, err, sizeof err), PACER_OK, "%s", err);
    json_decref(r);
    static const struct { const char *path, *value, *want; } cases[] = {
        {"cells.attempts.server_message", "quoting the secret prompt", "cells[0].attempts[0].server_message holds text of the prompt"},
        {"cells.attempts.reason", "HTTP 500 from 10.1.2.3", "cells[0].attempts[0].reason holds an IP address"},
        {"cells.attempts.finish_reason", "eos", "cells[0].attempts[0].finish_reason is not one of its fixed values"},
        {"cells.attempts.token_hash", "sk-AbCdEf0123456789XyZ", "token_hash holds a token or key"},
        {"cells.reasons", "ask alice@example.org", "cells[0].reasons[0] holds an e-mail address"},
        {"manifest.reason", "from gpu.example.com", "manifest.reason holds a host name"},
        {"platform.name", "linux\n", "platform.name holds a control"},
        {"model.revision", "/srv/rev", "model.revision holds a file-system path"},
        {"model.served_model_id", "/home/u/m.gguf", "model.served_model_id holds a file-system path"},
        {"hardware.cpu.model", "CPU of a@b.io", "hardware.cpu.model holds an e-mail"},
        {"hardware.gpus.name", "GPU fe80::1", "hardware.gpus[0].name holds an IP address"},
        {"backend.name", "cuda@box", "backend.name is not one of its fixed values"},
        /* a load sweep's levels are checked as cells are */
        {"load.levels.attempts.server_message", "quoting the secret prompt",
         "load.levels[0].attempts[0].server_message holds text of the prompt"},
        {"load.levels.attempts.reason", "HTTP 502 from gpu.example.com", "load.levels[0].attempts[0].reason holds a host name"},
        {"load.levels.attempts.token_hash", "Bearer sk-AbCdEf0123456789XyZ", "load.levels[0].attempts[0].token_hash holds a token"},
        {"load.levels.attempts.finish_reason", "eos /home/u", "load.levels[0].attempts[0].finish_reason is not one of its fixed"},
        {"load.levels.reasons", "see /home/alice/log", "load.levels[0].reasons[0] holds a file-system path"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = strstr(cases[i].path, ".reasons") ? json_pack("[s]", cases[i].value) : json_string(cases[i].value);
        r = receipt_with(cases[i].path, v);
        err[0] = '\0';
        cr_expect_eq(sanitize_check_receipt(r, c, err, sizeof err), PACER_ERR_FORMAT, "%s passes", cases[i].path);
        cr_expect(strstr(err, cases[i].want) && !strstr(err, cases[i].value), "%s: '%s'", cases[i].path, err);
        json_decref(r);
    }
    /* pacer's own words are not matched against the prompt, only the server's excerpt is */
    r = receipt_with("cells.attempts.reason", json_string("the secret prompt text"));
    cr_expect_eq(sanitize_check_receipt(r, c, err, sizeof err), PACER_OK, "%s", err);
    json_decref(r);
    sanitize_context_free(c);
}
