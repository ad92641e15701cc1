/* manifest.c - manifest checks and fetch. A missing optional fact stays unknown; a fact
 * that is present but malformed or contradicts another rejects the whole manifest, so a
 * receipt never mixes attested facts with guesses. */
#include "bench/manifest.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "bench/sanitize.h"
#include "schema/hardware.h"
#include "schema/manifest.h"
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

/* An optional integer member: true when absent (*out stays -1) or an integer >= lo. */
static bool opt_int(const json_t *obj, const char *key, json_int_t lo, json_int_t hi, json_int_t *out) {
    const json_t *v = json_object_get(obj, key);
    *out = -1;
    if (!v) return true;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) return false;
    *out = json_integer_value(v);
    return true;
}

/* Checks one hardware object and builds its copy of attested facts in *out (new
 * reference; schema/hardware.h's builder), then refuses a name that holds something private.
 * Returns false with `why` filled (a field path below the object, e.g. ".gpus[0] is invalid"). */
static bool hardware_copy(const json_t *h, json_t **out, char *why, size_t why_n) {
    *out = hardware_copy_attested(h, "attested", why, why_n);
    if (!*out) return false;
    const char *what = manifest_private(json_string_value(json_object_get(json_object_get(*out, "cpu"), "model")));
    if (what) snprintf(why, why_n, ".cpu.model holds %s", what);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(*out, "gpus"), i, g) {
        if (what) break;
        if ((what = manifest_private(json_string_value(json_object_get(g, "name")))))
            snprintf(why, why_n, ".gpus[%zu].name holds %s", i, what);
    }
    if (what) {
        json_decref(*out);
        *out = NULL;
    }
    return what == NULL;
}

/* An optional short name: true when absent ("" in out) or well formed (copied). */
static bool opt_name(const json_t *d, const char *key, char *out, size_t n) {
    const json_t *v = json_object_get(d, key);
    out[0] = '\0';
    if (!v) return true;
    if (!is_name(json_string_value(v), n)) return false;
    snprintf(out, n, "%s", json_string_value(v));
    return true;
}

/* The member `id` of the manifest `d` (NULL when absent): every name comes from the table. */
static json_t *member(const json_t *d, manifest_field_id id) { return json_object_get(d, manifest_fields[id].name); }

/* An optional string fact of the table: "" when absent, else well formed and private-free. */
static bool opt_fact(const json_t *d, manifest_field_id id, char *out, size_t n, char *why, size_t why_n) {
    if (!opt_name(d, manifest_fields[id].name, out, n)) {
        snprintf(why, why_n, "%s is invalid", manifest_fields[id].name);
        return false;
    }
    const char *what = manifest_private(out[0] ? out : NULL);
    if (what) snprintf(why, why_n, "%s holds %s", manifest_fields[id].name, what);
    return what == NULL;
}

pacer_err manifest_parse(const char *text, size_t len, manifest *m) {
    pacer_err rc = PACER_OK;
    memset(m, 0, sizeof *m);
    json_t *d = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *hw = NULL, *ranks_out = NULL, *hashes = NULL;
    char why[160];
    size_t i;
    json_t *g;
    if (!json_is_object(d)) { snprintf(m->reason, sizeof m->reason, "manifest is not a JSON object"); rc = PACER_ERR_PARSE; goto out; }
    if (!manifest_fields_check(d, why, sizeof why)) MFAIL("%s", why);
    if (json_integer_value(member(d, MF_VERSION)) != MANIFEST_VERSION) MFAIL("manifest_version is not %d", MANIFEST_VERSION);
    if (!opt_name(d, manifest_fields[MF_BACKEND].name, m->backend, sizeof m->backend)) MFAIL("backend is invalid");
    bool known = !m->backend[0];
    for (int k = 0; m->backend[0] && sanitize_backends[k]; k++) known = known || strcmp(m->backend, sanitize_backends[k]) == 0;
    if (!known) MFAIL("backend is unknown");
    if (!opt_fact(d, MF_PLATFORM, m->platform, sizeof m->platform, why, sizeof why)) MFAIL("%s", why);
    if (!opt_name(d, manifest_fields[MF_REVISION].name, m->revision, sizeof m->revision)) MFAIL("revision is invalid");
    for (const char *p = m->revision; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') MFAIL("revision has invalid characters");
    if (!opt_fact(d, MF_REVISION, m->revision, sizeof m->revision, why, sizeof why)) MFAIL("%s", why);
    if (!opt_fact(d, MF_PYTHON_VERSION, m->python_version, sizeof m->python_version, why, sizeof why)) MFAIL("%s", why);
    json_int_t ranks;
    if (!opt_int(d, manifest_fields[MF_RANK_COUNT].name, 1, MANIFEST_MAX_RANKS, &ranks)) MFAIL("rank_count is invalid");
    m->rank_count = ranks > 0 ? (int)ranks : 0;
    json_t *h = member(d, MF_HARDWARE);
    if (h && !hardware_copy(h, &hw, why, sizeof why)) MFAIL("hardware%s", why);
    json_t *rk = member(d, MF_RANKS);
    if (rk) {
        if (json_array_size(rk) < 1 || json_array_size(rk) > MANIFEST_MAX_RANKS) MFAIL("ranks is invalid");
        if (m->rank_count && (size_t)m->rank_count != json_array_size(rk)) MFAIL("ranks and rank_count disagree");
        m->rank_count = (int)json_array_size(rk);
        ranks_out = json_array();
        json_array_foreach(rk, i, g) {
            json_t *one;
            if (!hardware_copy(json_object_get(g, "hardware"), &one, why, sizeof why)) MFAIL("ranks[%zu].hardware%s", i, why);
            json_array_append_new(ranks_out, one);
        }
    }
    json_t *sums = json_object_get(member(d, MF_CHECKPOINT), "sha256");
    if (sums && (!json_is_array(sums) || json_array_size(sums) > 256)) MFAIL("checkpoint.sha256 is invalid");
    json_array_foreach(sums, i, g) {
        if (!is_hex64(json_string_value(g))) MFAIL("checkpoint.sha256[%zu] is not a SHA-256", i);
        if (!hashes) hashes = json_array();
        json_array_append_new(hashes, json_string(json_string_value(g)));
    }
    m->version = MANIFEST_VERSION;
    m->hardware = hw;
    m->rank_hardware = ranks_out;
    m->checkpoint_hashes = hashes;
    hw = ranks_out = hashes = NULL;
    m->accepted = true;
out:
    if (!m->accepted) {
        m->backend[0] = m->platform[0] = m->revision[0] = m->python_version[0] = '\0';
        m->rank_count = 0;
    }
    if (!m->accepted && len) m->rejected_text = strndup(text, len); /* NULL on OOM: only the log loses it */
    json_decref(hw);
    json_decref(ranks_out);
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
    json_decref(m->rank_hardware);
    json_decref(m->checkpoint_hashes);
    free(m->rejected_text);
    m->hardware = m->rank_hardware = m->checkpoint_hashes = NULL;
    m->rejected_text = NULL;
}
