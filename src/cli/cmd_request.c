/* cmd_request.c - 'pacer request': one measured streamed request against a running server,
 * printed as the sample's JSON on stdout. The debugging tool for everything built on attempts. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "bench/attempt.h"
#include "bench/receipt.h"
#include "cli/cli.h"

static volatile sig_atomic_t request_cancel;
static void request_on_signal(int sig) { request_cancel = 1; }

static const char request_help[] =
    "usage: pacer request --server URL [options]\n"
    "\n"
    "Sends one streamed OpenAI-compatible request and prints the measured sample as JSON.\n"
    "\n"
    "  --server URL            base URL of the server (a trailing /v1 is accepted)\n"
    "  --route chat|completions  API route (default completions: /v1/completions)\n"
    "  --prompt TEXT           prompt text (default \"Hello\")\n"
    "  --prompt-file FILE      read the prompt from FILE\n"
    "  --tokens N              max_tokens (default 64)\n"
    "  --temperature T         default 0 (greedy)\n"
    "  --top-k K, --top-p P    sent only when > 0\n"
    "  --seed S                sampling seed\n"
    "  --model-id M            the request's \"model\" field\n"
    "  --api-key KEY           sent as a Bearer token\n"
    "  --no-thinking           ask the server to turn reasoning off\n"
    "  --no-prompt-cache       ask the server not to reuse a cached prompt\n"
    "  --connect-timeout MS, --first-byte-timeout MS, --idle-timeout MS, --total-timeout MS\n"
    "\n"
    "Exit status: 0 ok, 2 incomplete, 3 failed, 130 cancelled (Ctrl-C), 1 usage error.\n";

/* Parses a number option; returns false (after a message) when it is not one. */
static bool request_num(const char *opt, const char *v, double lo, double *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || d < lo) {
        cli_error("%s: '%s' is not a valid number", opt, v);
        return false;
    }
    *out = d;
    return true;
}

int cmd_request(int argc, char **argv) {
    attempt_request req = {.route = ATTEMPT_ROUTE_COMPLETIONS, .prompt = "Hello", .max_tokens = 64};
    char *prompt_file_text = NULL;
    int rc = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(request_help, stdout);
            rc = 0;
            goto out;
        }
        if (strcmp(a, "--no-thinking") == 0) {
            req.disable_thinking = true;
            continue;
        }
        if (strcmp(a, "--no-prompt-cache") == 0) {
            req.disable_prompt_cache = true;
            continue;
        }
        if (i + 1 >= argc) {
            cli_error("%s needs a value (see 'pacer request --help')", a);
            goto out;
        }
        const char *v = argv[++i];
        double d = 0;
        if (strcmp(a, "--server") == 0) req.server_url = v;
        else if (strcmp(a, "--route") == 0) {
            if (strcmp(v, "chat") == 0) req.route = ATTEMPT_ROUTE_CHAT;
            else if (strcmp(v, "completions") == 0) req.route = ATTEMPT_ROUTE_COMPLETIONS;
            else {
                cli_error("--route: '%s' is not chat or completions", v);
                goto out;
            }
        } else if (strcmp(a, "--prompt") == 0) req.prompt = v;
        else if (strcmp(a, "--prompt-file") == 0) {
            buf b;
            buf_init(&b, 64 << 20);
            pacer_err e = file_read_all(v, &b);
            if (e) {
                cli_error("cannot read %s: %s", v, pacer_strerror(e));
                buf_free(&b);
                goto out;
            }
            free(prompt_file_text);
            prompt_file_text = buf_detach(&b);
            req.prompt = prompt_file_text;
        } else if (strcmp(a, "--model-id") == 0) req.model_id = v;
        else if (strcmp(a, "--api-key") == 0) req.api_key = v;
        else if (strcmp(a, "--tokens") == 0) {
            if (!request_num(a, v, 1, &d)) goto out;
            req.max_tokens = (int)d;
        } else if (strcmp(a, "--temperature") == 0) {
            if (!request_num(a, v, 0, &d)) goto out;
            req.temperature = d;
        } else if (strcmp(a, "--top-k") == 0) {
            if (!request_num(a, v, 0, &d)) goto out;
            req.top_k = (int)d;
        } else if (strcmp(a, "--top-p") == 0) {
            if (!request_num(a, v, 0, &req.top_p)) goto out;
        } else if (strcmp(a, "--seed") == 0) {
            if (!request_num(a, v, -9.2e18, &d)) goto out;
            req.has_seed = true;
            req.seed = (int64_t)d;
        } else if (strcmp(a, "--connect-timeout") == 0 || strcmp(a, "--first-byte-timeout") == 0 ||
                   strcmp(a, "--idle-timeout") == 0 || strcmp(a, "--total-timeout") == 0) {
            if (!request_num(a, v, 1, &d)) goto out;
            int64_t *slot = a[2] == 'c' ? &req.connect_timeout_ms : a[2] == 'f' ? &req.first_byte_timeout_ms
                          : a[2] == 'i' ? &req.idle_timeout_ms : &req.total_timeout_ms;
            *slot = (int64_t)d;
        } else {
            cli_error("unknown option '%s' (see 'pacer request --help')", a);
            goto out;
        }
    }
    if (!req.server_url) {
        cli_error("--server URL is required (see 'pacer request --help')");
        goto out;
    }
    struct sigaction sa = {.sa_handler = request_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    req.cancel_flag = &request_cancel;
    attempt_sample s;
    if (attempt_run(&req, &s)) {
        cli_error("%s", s.reason);
        goto out;
    }
    /* the receipt's own attempt fields (index 0, not a warm-up), with the drafting counts
     * a receipt keeps in its drafts file */
    json_t *j = receipt_attempt_to_json(&s, 0, false, req.has_seed, req.seed);
    if (j) json_object_set_new(j, "drafts", receipt_drafts_counts(&s));
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    if (text) printf("%s\n", text);
    free(text);
    json_decref(j);
    static const int exit_codes[] = {0, 2, 3, 130};
    rc = exit_codes[s.status];
    if (s.status != ATTEMPT_OK)
        cli_error("%s: %s%s%s", attempt_status_name(s.status), s.reason, s.server_message[0] ? ": " : "", s.server_message);
out:
    free(prompt_file_text);
    return rc;
}
