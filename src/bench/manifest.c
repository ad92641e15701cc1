/* manifest.c - manifest checks and fetch. Any failed check rejects the whole manifest:
 * a receipt never mixes attested facts with guesses. */
#include "bench/manifest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "bench/sanitize.h"
#include "net/http.h"

static bool is_hex64(const char *s) {
    if (!s || strlen(s) != 64) return false;
    for (int i = 0; i < 64; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return false;
    return true;
}

/* A short printable name: 1..n-1 bytes, no control characters. */
static bool is_name(const char *s, size_t n) {
    if (!s || !*s || strlen(s) >= n) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return false;
    return true;
}

/* What a string holds that must not reach a receipt (a static phrase), or NULL. */
static const char *manifest_private(const char *s) {
    const char *what = NULL;
    return s && sanitize_check(NULL, s, strlen(s), &what) ? what : NULL;
}

#define MFAIL(...) do { snprintf(m->reason, sizeof m->reason, __VA_ARGS__); rc = PACER_ERR_FORMAT; goto out; } while (0)

pacer_err manifest_parse(const char *text, size_t len, manifest *m) {
    pacer_err rc = PACER_OK;
    memset(m, 0, sizeof *m);
    json_t *d = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *hw = NULL, *gpus_out = NULL, *hashes = NULL;
    if (!json_is_object(d)) { snprintf(m->reason, sizeof m->reason, "manifest is not a JSON object"); rc = PACER_ERR_PARSE; goto out; }
    if (json_get_int(d, "manifest_version", 0) != 1) MFAIL("manifest_version is not 1");
    const char *backend = json_get_str(d, "backend", NULL);
    bool known = false;
    for (int i = 0; backend && sanitize_backends[i]; i++) known = known || strcmp(backend, sanitize_backends[i]) == 0;
    if (!known) MFAIL("backend is missing or unknown");
    const char *platform = json_get_str(d, "platform", NULL);
    if (!is_name(platform, sizeof m->platform)) MFAIL("platform is missing or invalid");
    const char *what;
    if ((what = manifest_private(platform))) MFAIL("platform holds %s", what);
    const char *rev = json_get_str(d, "revision", NULL);
    if (!is_name(rev, sizeof m->revision)) MFAIL("revision is missing or invalid");
    for (const char *p = rev; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') MFAIL("revision has invalid characters");
    if ((what = manifest_private(rev))) MFAIL("revision holds %s", what);
    json_t *rank = json_object_get(d, "rank_count");
    if (!json_is_integer(rank) || json_integer_value(rank) < 1 || json_integer_value(rank) > 4096) MFAIL("rank_count is missing or invalid");
    json_t *h = json_object_get(d, "hardware");
    if (!json_is_object(h)) MFAIL("hardware is missing");
    json_t *cpu = json_object_get(h, "cpu");
    const char *cpu_model = json_get_str(cpu, "model", NULL);
    json_t *cores = json_object_get(cpu, "cores");
    if (!is_name(cpu_model, 128) || !json_is_integer(cores) || json_integer_value(cores) < 1) MFAIL("hardware.cpu is missing or invalid");
    if ((what = manifest_private(cpu_model))) MFAIL("hardware.cpu.model holds %s", what);
    json_t *mem = json_object_get(h, "memory_bytes");
    if (!json_is_integer(mem) || json_integer_value(mem) < 1) MFAIL("hardware.memory_bytes is missing or invalid");
    json_t *gpus = json_object_get(h, "gpus");
    json_t *gcount = json_object_get(h, "gpu_count");
    if (!json_is_array(gpus) || !json_is_integer(gcount) || (size_t)json_integer_value(gcount) != json_array_size(gpus))
        MFAIL("hardware.gpus / gpu_count are missing or disagree");
    gpus_out = json_array();
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        const char *name = json_get_str(g, "name", NULL);
        json_t *gm = json_object_get(g, "memory_bytes"), *gc = json_object_get(g, "cores");
        if (!is_name(name, 128) || strstr(name, "GPU-") || !json_is_integer(gm) || json_integer_value(gm) < 0 ||
            !json_is_integer(gc) || json_integer_value(gc) < 0)
            MFAIL("hardware.gpus[%zu] is invalid", i);
        if ((what = manifest_private(name))) MFAIL("hardware.gpus[%zu].name holds %s", i, what);
        json_array_append_new(gpus_out, json_pack("{s:s,s:I,s:I}", "name", name, "memory_bytes",
                                                  json_integer_value(gm), "cores", json_integer_value(gc)));
    }
    json_t *ck = json_object_get(d, "checkpoint");
    json_t *sums = json_object_get(ck, "sha256");
    if (!json_is_array(sums) || json_array_size(sums) < 1 || json_array_size(sums) > 256) MFAIL("checkpoint.sha256 is missing");
    hashes = json_array();
    json_array_foreach(sums, i, g) {
        if (!is_hex64(json_string_value(g))) MFAIL("checkpoint.sha256[%zu] is not a SHA-256", i);
        json_array_append_new(hashes, json_string(json_string_value(g)));
    }
    hw = json_pack("{s:s,s:{s:s,s:I},s:I,s:O,s:I}", "source", "attested", "cpu", "model", cpu_model, "cores",
                   json_integer_value(cores), "memory_bytes", json_integer_value(mem), "gpus", gpus_out, "gpu_count",
                   json_integer_value(gcount));
    snprintf(m->backend, sizeof m->backend, "%s", backend);
    snprintf(m->platform, sizeof m->platform, "%s", platform);
    snprintf(m->revision, sizeof m->revision, "%s", rev);
    m->rank_count = (int)json_integer_value(rank);
    m->hardware = hw;
    m->checkpoint_hashes = hashes;
    hw = hashes = NULL;
    m->accepted = true;
out:
    if (!m->accepted && len) m->rejected_text = strndup(text, len); /* NULL on OOM: only the log loses it */
    json_decref(gpus_out);
    json_decref(hw);
    json_decref(hashes);
    json_decref(d);
    return rc;
}

static pacer_err collect(void *ctx, const char *data, size_t n, int64_t t_ns) {
    (void)t_ns;
    return buf_append((buf *)ctx, data, n);
}

pacer_err manifest_fetch(const char *base_url, const volatile sig_atomic_t *cancel, manifest *m) {
    memset(m, 0, sizeof *m);
    if (!base_url) return PACER_ERR_ARG;
    char url[1024];
    size_t n = strlen(base_url);
    while (n && base_url[n - 1] == '/') n--;
    if (n >= 3 && strncmp(base_url + n - 3, "/v1", 3) == 0) n -= 3;
    if (n + 32 >= sizeof url) return PACER_ERR_ARG;
    snprintf(url, sizeof url, "%.*s/v1/benchmark/manifest", (int)n, base_url);
    buf body;
    buf_init(&body, MANIFEST_MAX);
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 5000, .total_timeout_ms = 15000,
                        .idle_timeout_ms = 10000, .first_byte_timeout_ms = 10000, .cancel_flag = cancel,
                        .on_data = collect, .ctx = &body};
    http_response resp;
    http_response_init(&resp);
    pacer_err rc = http_perform(&req, &resp);
    if (rc == PACER_OK) {
        manifest_parse(body.data ? body.data : "", body.len, m); /* initializes all of m */
    } else {
        snprintf(m->reason, sizeof m->reason, "no manifest (%.200s)",
                 resp.status ? "the server answered with an error status" : resp.reason);
    }
    m->reachable = resp.status != 0;
    http_response_free(&resp);
    buf_free(&body);
    return PACER_OK;
}

void manifest_free(manifest *m) {
    if (!m) return;
    json_decref(m->hardware);
    json_decref(m->checkpoint_hashes);
    free(m->rejected_text);
    m->hardware = m->checkpoint_hashes = NULL;
    m->rejected_text = NULL;
}
