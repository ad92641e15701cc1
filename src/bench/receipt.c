/* receipt.c - receipt fields (one table), attempt writer/reader, aggregates, validator,
 * drafts file. The validator trusts nothing a receipt says about itself: it re-judges
 * every attempt under its suite's rules and recomputes every aggregate. */
#include "bench/receipt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "bench/load.h"
#include "bench/rules.h"
#include "bench/stats.h"
#include "bench/suite.h"
#include "schema/hardware.h"

#define NO_FLAG SIZE_MAX
#define F(name, kind, member, has, doc) \
    {name, kind, offsetof(attempt_sample, member), has, sizeof(((attempt_sample *)0)->member), doc, false}
#define F_OPT(name, kind, member, doc) \
    {name, kind, offsetof(attempt_sample, member), NO_FLAG, sizeof(((attempt_sample *)0)->member), doc, true}
#define HAS(member) offsetof(attempt_sample, member)

const receipt_field receipt_attempt_fields[] = {
    F("route", RECEIPT_KIND_ROUTE, route, NO_FLAG, "API route the request used: completions | chat"),
    F("status", RECEIPT_KIND_STATUS, status, NO_FLAG, "ok | incomplete | failed | cancelled, under the suite's rules"),
    F("reason", RECEIPT_KIND_STR, reason, NO_FLAG, "why the attempt is not ok, in pacer's words; empty when ok"),
    F_OPT("server_message", RECEIPT_KIND_STR, server_message,
          "what the server said about it: a short excerpt through bench/sanitize (no paths, hosts, addresses, keys "
          "or prompt text); empty when it said nothing; the full text stays in the run's local log"),
    F("http_status", RECEIPT_KIND_I64, http_status, NO_FLAG, "HTTP status; 0 when no response arrived"),
    F("finish_reason", RECEIPT_KIND_STR, finish_reason, NO_FLAG,
      "the server's finish_reason: stop | length | content_filter | tool_calls | function_call | other; empty when none"),
    F("has_usage", RECEIPT_KIND_BOOL, has_usage, NO_FLAG, "a usage object was received"),
    F("prompt_tokens", RECEIPT_KIND_I64, prompt_tokens, HAS(has_usage), "usage.prompt_tokens"),
    F("completion_tokens", RECEIPT_KIND_I64, completion_tokens, HAS(has_usage), "usage.completion_tokens"),
    F("first_text_ns", RECEIPT_KIND_I64, first_text_ns, HAS(has_first_text), "first non-empty delivery - request start"),
    F("duration_ns", RECEIPT_KIND_I64, duration_ns, NO_FLAG, "end of response - request start"),
    F("delivery_span_ns", RECEIPT_KIND_I64, delivery_span_ns, NO_FLAG, "last - first non-empty delivery"),
    F("deliveries", RECEIPT_KIND_I64, deliveries, NO_FLAG, "SSE events with non-empty content or reasoning"),
    F("output_bytes", RECEIPT_KIND_I64, output_bytes, NO_FLAG, "bytes of decoded output (the text is never stored)"),
    F("stream_tok_s", RECEIPT_KIND_F64, stream_tok_s, HAS(has_stream_tok_s), "(completion_tokens - 1) / delivery span"),
    F("server_prompt_ms", RECEIPT_KIND_F64, server_prompt_ms, HAS(has_server_prompt_ms), "server-reported prefill ms"),
    F("server_tok_s", RECEIPT_KIND_F64, server_predicted_per_second, HAS(has_server_predicted_per_second),
      "server-reported generation tok/s"),
    F("token_hash", RECEIPT_KIND_STR, token_hash, NO_FLAG, "server-reported hash of the output tokens; empty when none"),
};
const size_t receipt_attempt_field_count = sizeof receipt_attempt_fields / sizeof receipt_attempt_fields[0];

const receipt_top_field receipt_top_fields[] = {
    {"schema_version", JSON_INTEGER, NULL},
    {"run_id", JSON_STRING, "run"},
    {"created_utc", JSON_STRING, "created (UTC)"},
    {"client", JSON_OBJECT, NULL},
    {"mode", JSON_STRING, "mode"},
    {"suite", JSON_OBJECT, NULL},
    {"model", JSON_OBJECT, NULL},
    {"backend", JSON_OBJECT, NULL},
    {"platform", JSON_OBJECT, NULL},
    {"hardware", JSON_OBJECT, NULL},
    {"manifest", JSON_OBJECT, NULL},
    {"ranked", JSON_TRUE, NULL}, /* JSON_TRUE stands for "a boolean" */
    {"unranked_reasons", JSON_ARRAY, NULL},
    {"settings", JSON_OBJECT, NULL},
    {"cells", JSON_ARRAY, NULL},
    {"cancelled", JSON_TRUE, NULL},
    {"exit_status", JSON_INTEGER, "exit status"},
};
const size_t receipt_top_field_count = sizeof receipt_top_fields / sizeof receipt_top_fields[0];

const receipt_fact_field receipt_fact_fields[] = {
    {"model.checkpoint_format", JSON_STRING, false, "checkpoint",
     "managed runs: gguf (one GGUF file) | hf-dir (a checkpoint directory: config.json plus weight files)"},
    {"model.checkpoint_hashes", JSON_ARRAY, false, NULL,
     "managed runs: one {file, sha256} per weight file (a GGUF: its one file; hf-dir: every *.safetensors, or "
     "*.bin when there are none); attached runs: the SHA-256 strings an accepted manifest attests"},
    {"model.checkpoint_hashes[].file", JSON_STRING, false, NULL, "file name inside the checkpoint, never a path"},
    {"model.checkpoint_hashes[].sha256", JSON_STRING, false, NULL, "SHA-256 of the file, 64 lowercase hex digits"},
    {"settings.sequence_slots", JSON_INTEGER, true, NULL,
     "managed runs: the sequence slots the engine was started with (1: it decodes one request at a time); null "
     "in attached runs"},
    {"hardware.volume.read_sample", JSON_OBJECT, false, "read sample",
     "managed runs and `pacer probe --read-sample`: the uncached read of the (largest) weight file, taken before "
     "the engine starts; absent with --no-read-sample"},
    {"hardware.volume.read_sample.bytes", JSON_INTEGER, true, NULL, "bytes read (at most 2 GB); null when skipped"},
    {"hardware.volume.read_sample.seconds", JSON_REAL, true, NULL, "time the read took; null when skipped"},
    {"hardware.volume.read_sample.gb_per_s", JSON_REAL, true, NULL, "bytes / seconds / 1e9; null when skipped"},
    {"hardware.volume.read_sample.method", JSON_STRING, false, NULL,
     "o_direct | fadvise (pages dropped with posix_fadvise DONTNEED first) | none (skipped)"},
    {"hardware.volume.read_sample.skipped", JSON_STRING, false, NULL,
     "present when no honest figure could be taken, and why: memory-file-system, pages-stay-cached, not-found, "
     "cannot-read, empty-file, no-memory, too-fast-to-time"},
    {"client.calibration", JSON_OBJECT, false, NULL,
     "load sweeps: the client's own cost and capacity, measured before each level against an in-process loopback "
     "SSE emitter"},
    {"client.calibration.method", JSON_STRING, false, NULL, "loopback-emitter"},
    {"client.calibration.budget_ms", JSON_REAL, false, NULL, "how long each calibration measured (--calibration-ms)"},
    {"client.calibration.client_limit_share", JSON_REAL, false, NULL,
     "a level delivering above this share of its calibrated maximum is client-limited (0.5)"},
    {"client.calibration.levels", JSON_ARRAY, false, NULL, "one per load level, in the same order"},
    {"client.calibration.levels[].streams", JSON_INTEGER, false, NULL,
     "streams calibrated: the level's concurrency; a rate level: 64"},
    {"client.calibration.levels[].deliveries", JSON_INTEGER, false, NULL, "deliveries within the budget"},
    {"client.calibration.levels[].cpu_ns", JSON_INTEGER, false, NULL, "CPU time of the client's thread in the budget"},
    {"client.calibration.levels[].wall_ns", JSON_INTEGER, false, NULL, "wall time of the budget as it ran"},
    {"client.calibration.levels[].cpu_ns_per_delivery", JSON_REAL, true, NULL, "cpu_ns / deliveries; null: none"},
    {"client.calibration.levels[].max_deliveries_per_s", JSON_REAL, false, NULL,
     "deliveries / CPU seconds: what one core of this client can take; 0 when nothing was measured"},
    {"load", JSON_OBJECT, false, NULL, "a load sweep (--concurrency or --rate): one level per value"},
    {"load.kind", JSON_STRING, false, NULL, "concurrency | rate"},
    {"load.workload", JSON_STRING, false, NULL, "the suite workload every attempt sends"},
    {"load.setting", JSON_STRING, false, NULL, "the suite setting (temperature, seeds) of every attempt"},
    {"load.route", JSON_STRING, false, NULL, "completions | chat"},
    {"load.temperature", JSON_REAL, false, NULL, "the setting's temperature"},
    {"load.max_tokens", JSON_INTEGER, false, NULL, "max_tokens of every attempt"},
    {"load.seed_base", JSON_INTEGER, false, NULL, "a sampled attempt's seed is seed_base + its index"},
    {"load.requests", JSON_INTEGER, true, NULL, "--requests per level; null: the default or --duration"},
    {"load.duration_s", JSON_REAL, true, NULL, "--duration per level; null: none"},
    {"load.seed", JSON_INTEGER, true, NULL, "rate sweeps: the seed of the arrival schedule; null otherwise"},
    {"load.slo", JSON_OBJECT, true, NULL, "--slo: ttft_ms and itl_ms (each null when not given); null: none"},
    {"load.levels", JSON_ARRAY, false, NULL, "one per level, in the order given"},
    {"load.levels[].concurrency", JSON_INTEGER, true, NULL, "streams kept in flight; null in rate sweeps"},
    {"load.levels[].rate", JSON_REAL, true, NULL, "requests per second; null in concurrency sweeps"},
    {"load.levels[].status", JSON_STRING, false, NULL, "complete (every attempt ok) | incomplete"},
    {"load.levels[].reasons", JSON_ARRAY, false, NULL, "the first 20 attempts that are not ok, and why"},
    {"load.levels[].client_cpu_ns", JSON_INTEGER, false, NULL, "CPU time of the client's thread during the level"},
    {"load.levels[].client_scheduling", JSON_STRING, false, NULL,
     "normal | realtime (--realtime: SCHED_FIFO 1 during the level) | realtime-refused (asked, not allowed); "
     "with --busy-poll: busy-poll, realtime+busy-poll or realtime-refused+busy-poll"},
    {"load.levels[].client_limited", JSON_TRUE, false, NULL,
     "the level's deliveries per second exceeded the client-limit share of its calibrated maximum"},
    {"load.levels[].attempts", JSON_ARRAY, false, NULL, "every attempt of the level, in start order"},
    {"load.levels[].attempts[].start_ns", JSON_INTEGER, false, NULL, "request start - level start"},
    {"load.levels[].attempts[].scheduled_ns", JSON_INTEGER, true, NULL,
     "rate levels: the seeded arrival (ns from the level start); null otherwise"},
    {"load.levels[].attempts[].delivery_ns", JSON_STRING, false, NULL,
     "every delivery's arrival, delta-encoded: first - request start, then each gap, ns, comma-separated"},
    {"load.levels[].aggregates", JSON_OBJECT, false, NULL,
     "the level's figures, recomputed from the attempts by every reader"},
};
const size_t receipt_fact_field_count = sizeof receipt_fact_fields / sizeof receipt_fact_fields[0];

const receipt_fact_field *receipt_fact_find(const char *path) {
    for (size_t i = 0; i < receipt_fact_field_count; i++)
        if (strcmp(receipt_fact_fields[i].path, path) == 0) return &receipt_fact_fields[i];
    return NULL;
}

static bool fact_type_ok(const receipt_fact_field *f, const json_t *v) {
    if (json_is_null(v)) return f->nullable;
    if (f->type == JSON_TRUE) return json_is_boolean(v);
    if (f->type == JSON_REAL) return json_is_number(v);
    return json_typeof(v) == f->type;
}

/* Checks every value at `rest` (the remaining dotted path) below `node` against `f`; false,
 * with the failing value's path in `where`, on a mismatch. A missing parent is no failure:
 * its own entry (if any) judges it. */
static bool fact_walk(const json_t *node, const char *rest, const receipt_fact_field *f, char *where, size_t wn) {
    if (!json_is_object(node)) return true;
    char key[128];
    size_t n = strcspn(rest, ".[");
    if (n >= sizeof key) return false;
    memcpy(key, rest, n);
    key[n] = '\0';
    const json_t *v = json_object_get(node, key);
    if (!v) return true;
    const char *after = rest + n;
    if (strncmp(after, "[]", 2) == 0) {
        if (!json_is_array(v)) return true;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            bool ok = after[2] == '.' ? fact_walk(e, after + 3, f, where, wn) : fact_type_ok(f, e);
            if (!ok) {
                if (after[2] != '.') snprintf(where, wn, "%s", f->path);
                return false;
            }
        }
        return true;
    }
    if (*after == '.') return fact_walk(v, after + 1, f, where, wn);
    if (fact_type_ok(f, v)) return true;
    snprintf(where, wn, "%s", f->path);
    return false;
}

/* The facts the table describes, and what their values may say: no file name is a path, a
 * hash is 64 hex digits, a skipped read sample has no figure and a taken one has. */
static pacer_err facts_validate(const json_t *r, char *err, size_t err_len) {
    char where[160] = "";
    if (!hardware_validate(json_object_get(r, "hardware"), where, sizeof where)) {
        snprintf(err, err_len, "field check failed: %s", where);
        return PACER_ERR_FORMAT;
    }
    for (size_t i = 0; i < receipt_fact_field_count; i++) {
        const receipt_fact_field *f = &receipt_fact_fields[i];
        if (!fact_walk(r, f->path, f, where, sizeof where)) {
            snprintf(err, err_len, "field check failed: '%s' has the wrong type", where);
            return PACER_ERR_FORMAT;
        }
    }
    size_t i;
    json_t *h;
    json_array_foreach(json_get_path(r, "model.checkpoint_hashes"), i, h) {
        /* attested by a manifest: the hash alone; managed: {file, sha256} */
        const char *file = json_get_str(h, "file", "");
        const char *sha = json_is_string(h) ? json_string_value(h) : json_get_str(h, "sha256", "");
        if (strchr(file, '/') || strchr(file, '\\')) {
            snprintf(err, err_len, "privacy check failed: checkpoint file %zu is named by a path", i);
            return PACER_ERR_FORMAT;
        }
        if (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64) {
            snprintf(err, err_len, "field check failed: checkpoint file %zu has no SHA-256", i);
            return PACER_ERR_FORMAT;
        }
    }
    json_t *rs = json_get_path(r, "hardware.volume.read_sample");
    if (json_is_object(rs)) {
        bool skipped = json_object_get(rs, "skipped") != NULL;
        bool figure = json_is_number(json_object_get(rs, "gb_per_s"));
        if (skipped == figure || !json_is_string(json_object_get(rs, "method"))) {
            snprintf(err, err_len, "field check failed: a read sample has either a figure and a method, or a reason "
                                 "it was skipped");
            return PACER_ERR_FORMAT;
        }
    }
    return PACER_OK;
}

static bool *flag_at(attempt_sample *s, size_t off) { return (bool *)((char *)s + off); }
static const bool *cflag_at(const attempt_sample *s, size_t off) { return (const bool *)((const char *)s + off); }

json_t *receipt_attempt_to_json(const attempt_sample *s, int index, bool warmup, bool has_seed, int64_t seed) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "warmup", json_boolean(warmup));
    json_object_set_new(o, "seed", has_seed ? json_integer(seed) : json_null());
    for (size_t i = 0; i < receipt_attempt_field_count; i++) {
        const receipt_field *f = &receipt_attempt_fields[i];
        const char *p = (const char *)s + f->offset;
        json_t *v = NULL;
        if (f->has_offset != NO_FLAG && !*cflag_at(s, f->has_offset)) {
            json_object_set_new(o, f->name, json_null());
            continue;
        }
        switch (f->kind) {
        case RECEIPT_KIND_I64:
            v = json_integer(f->size == sizeof(int) ? *(const int *)p : *(const int64_t *)p);
            break;
        case RECEIPT_KIND_F64: v = isfinite(*(const double *)p) ? json_real(*(const double *)p) : json_null(); break;
        case RECEIPT_KIND_BOOL: v = json_boolean(*(const bool *)p); break;
        case RECEIPT_KIND_STR: v = json_string(p); break;
        case RECEIPT_KIND_ROUTE: v = json_string(attempt_route_name(*(const attempt_route *)p)); break;
        case RECEIPT_KIND_STATUS: v = json_string(attempt_status_name(*(const attempt_status *)p)); break;
        }
        json_object_set_new(o, f->name, v ? v : json_null());
    }
    return o;
}

static bool route_parse(const char *n, attempt_route *r) {
    for (int i = 0; i <= ATTEMPT_ROUTE_CHAT; i++)
        if (strcmp(n, attempt_route_name((attempt_route)i)) == 0) { *r = (attempt_route)i; return true; }
    return false;
}

static bool status_parse(const char *n, attempt_status *st) {
    for (int i = 0; i <= ATTEMPT_CANCELLED; i++)
        if (strcmp(n, attempt_status_name((attempt_status)i)) == 0) { *st = (attempt_status)i; return true; }
    return false;
}

pacer_err receipt_attempt_from_json(const json_t *a, attempt_sample *s, char *err, size_t err_len) {
    memset(s, 0, sizeof *s);
    if (!json_is_object(a)) { snprintf(err, err_len, "an attempt is not an object"); return PACER_ERR_FORMAT; }
    /* has-flags first: a value that is null must have its flag false */
    for (size_t i = 0; i < receipt_attempt_field_count; i++) {
        const receipt_field *f = &receipt_attempt_fields[i];
        json_t *v = json_object_get(a, f->name);
        char *p = (char *)s + f->offset;
        if (!v && f->optional) continue;
        if (!v) { snprintf(err, err_len, "attempt field '%s' is missing", f->name); return PACER_ERR_FORMAT; }
        if (json_is_null(v) && f->has_offset != NO_FLAG) continue;
        bool ok = true;
        switch (f->kind) {
        case RECEIPT_KIND_I64:
            ok = json_is_integer(v);
            if (ok && f->size == sizeof(int)) *(int *)p = (int)json_integer_value(v);
            else if (ok) *(int64_t *)p = json_integer_value(v);
            break;
        case RECEIPT_KIND_F64:
            ok = json_is_number(v);
            if (ok) *(double *)p = json_number_value(v);
            break;
        case RECEIPT_KIND_BOOL:
            ok = json_is_boolean(v);
            if (ok) *(bool *)p = json_is_true(v);
            break;
        case RECEIPT_KIND_STR:
            ok = json_is_string(v) && json_string_length(v) < f->size;
            if (ok) memcpy(p, json_string_value(v), json_string_length(v) + 1);
            break;
        case RECEIPT_KIND_ROUTE: ok = json_is_string(v) && route_parse(json_string_value(v), (attempt_route *)p); break;
        case RECEIPT_KIND_STATUS: ok = json_is_string(v) && status_parse(json_string_value(v), (attempt_status *)p); break;
        }
        if (!ok) { snprintf(err, err_len, "attempt field '%s' has the wrong type or value", f->name); return PACER_ERR_FORMAT; }
        if (f->has_offset != NO_FLAG && f->kind != RECEIPT_KIND_BOOL) *flag_at(s, f->has_offset) = true;
    }
    if (s->has_usage && (json_is_null(json_object_get(a, "prompt_tokens")) ||
                         json_is_null(json_object_get(a, "completion_tokens")))) {
        snprintf(err, err_len, "attempt has usage but null token counts");
        return PACER_ERR_FORMAT;
    }
    s->has_server_timings = s->has_server_prompt_ms || s->has_server_predicted_per_second;
    return PACER_OK;
}

/* The aggregated metrics: how to take each from a sample (false: absent). */
static bool m_stream(const attempt_sample *s, double *v) { *v = s->stream_tok_s; return s->has_stream_tok_s; }
static bool m_first(const attempt_sample *s, double *v) { *v = (double)s->first_text_ns / 1e6; return s->has_first_text; }
static bool m_dur(const attempt_sample *s, double *v) { *v = (double)s->duration_ns / 1e6; return true; }
static bool m_server(const attempt_sample *s, double *v) {
    *v = s->server_predicted_per_second;
    return s->has_server_predicted_per_second;
}
const receipt_metric receipt_metrics[] = {
    {"stream_tok_s", "tok/s", "tok/s", "%.1f", 10, m_stream},
    {"first_text_ms", "first ms", "ms", "%.1f", 12, m_first},
    {"duration_ms", "duration ms", "ms", "%.1f", 12, m_dur},
    {"server_tok_s", "server", "tok/s", "%.1f", 10, m_server},
};
const size_t receipt_metric_count = sizeof receipt_metrics / sizeof receipt_metrics[0];

json_t *receipt_cell_aggregates(const json_t *attempts, int reps) {
    size_t n = json_array_size(attempts);
    attempt_sample *samples = calloc(n ? n : 1, sizeof *samples);
    double *vals = calloc(n ? n : 1, sizeof *vals);
    json_t *out = NULL;
    size_t m = 0;
    char err[128];
    if (!samples || !vals) goto done;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(attempts, i);
        if (json_is_true(json_object_get(a, "warmup"))) continue;
        if (receipt_attempt_from_json(a, &samples[m], err, sizeof err) || samples[m].status != ATTEMPT_OK) goto done;
        m++;
    }
    if ((int)m != reps || m == 0) goto done;
    out = json_object();
    for (size_t k = 0; k < receipt_metric_count; k++) {
        bool all = true;
        for (size_t i = 0; i < m && all; i++) all = receipt_metrics[k].get(&samples[i], &vals[i]);
        stats_summary st;
        if (!all || !stats_summarize(vals, m, &st)) {
            json_object_set_new(out, receipt_metrics[k].name, json_null());
            continue;
        }
        json_object_set_new(out, receipt_metrics[k].name,
                            json_pack("{s:f,s:f,s:f,s:f,s:f,s:I}", "median", st.median, "min", st.min, "max", st.max,
                                      "p10", st.p10, "p90", st.p90, "n", (json_int_t)m));
    }
done:
    free(samples);
    free(vals);
    return out ? out : json_null();
}

bool receipt_numbers_close(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        return fabs(x - y) <= 1e-9 * fmax(1.0, fmax(fabs(x), fabs(y)));
    }
    if (json_typeof(a) != json_typeof(b)) return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            json_t *w = json_object_get(b, k);
            if (!w || !receipt_numbers_close(v, w)) return false;
        }
        return true;
    }
    return json_equal(a, b);
}

bool receipt_rejudge(const rules_context *ctx, const attempt_sample *s, attempt_status *judged) {
    char why[ATTEMPT_REASON_MAX];
    attempt_sample raw = *s;
    raw.status = s->status == ATTEMPT_OK || s->status == ATTEMPT_INCOMPLETE ? ATTEMPT_OK : s->status;
    *judged = rules_judge(ctx, &raw, why, sizeof why);
    /* an attempt the client already marked incomplete may stay so (e.g. no [DONE]) */
    return *judged == s->status || (s->status == ATTEMPT_INCOMPLETE && *judged == ATTEMPT_OK);
}

#define VFAIL(...) do { snprintf(err, err_len, __VA_ARGS__); rc = PACER_ERR_FORMAT; goto out; } while (0)

pacer_err receipt_validate(const json_t *r, char *err, size_t err_len) { return receipt_validate_suite(r, NULL, err, err_len); }

/* What the checks of one receipt carry: its suite, as loaded, and the run's settings. */
typedef struct receipt_check {
    suite s;
    const char *sid;
    int reps, warm;
    bool chat_only, standard, any_incomplete, any_cancel;
} receipt_check;

/* What the checks of one cell carry. */
typedef struct cell_check {
    size_t ci;
    double temp;
    const suite_setting *st;
    attempt_route route;
    rules_context ctx;
    int measured, warmups;
    bool ok;
} cell_check;

/* The receipt's suite: the file the run used (its digest must be the receipt's), else the
 * built-in suite of its id and digest; version and rule version must be the suite's. */
static pacer_err check_suite(const json_t *r, const char *suite_file, receipt_check *k, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    json_t *js = json_object_get(r, "suite");
    const char *sdig = json_get_str(js, "digest", "");
    char want[65], lerr[200];
    k->sid = json_get_str(js, "id", "");
    if (suite_file) {
        rc = suite_load(suite_file, &k->s, lerr, sizeof lerr);
        if (rc) VFAIL("suite check failed: %s", lerr);
        if (strcmp(k->s.digest, sdig) != 0 || strcmp(k->s.id, k->sid) != 0)
            VFAIL("digest check failed: the receipt's suite %s (%.16s...) is not %s (%s, %.16s...)", k->sid, sdig,
                  suite_file, k->s.id, k->s.digest);
    } else {
        if (suite_builtin_digest(k->sid, want) != PACER_OK) {
            snprintf(err, err_len, "custom suite '%s' (digest %.16s...) not validated: pass --suite FILE, the suite file the run used",
                     k->sid, sdig);
            return PACER_ERR_NOT_FOUND;
        }
        if (strcmp(want, sdig) != 0)
            VFAIL("digest check failed: suite digest %.16s... does not match built-in %s (%.16s...)", sdig, k->sid, want);
        rc = suite_load(k->sid, &k->s, lerr, sizeof lerr);
        if (rc) VFAIL("suite check failed: %s", lerr);
    }
    if (json_get_int(js, "version", -1) != k->s.version || json_get_int(js, "rule_version", -1) != k->s.rule_version)
        VFAIL("suite check failed: version or rule_version differs from %s", k->sid);
    k->standard = json_is_true(json_object_get(js, "standard"));
out:
    return rc;
}

/* Repetitions, warm-ups and chat-only as the suite allows them. */
static pacer_err check_settings(const json_t *r, receipt_check *k, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    json_t *set = json_object_get(r, "settings");
    k->reps = (int)json_get_int(set, "repetitions", -1);
    k->warm = (int)json_get_int(set, "warmups", -1);
    k->chat_only = json_get_bool(set, "chat_only", false);
    if (k->reps < 1 || k->warm < 0) VFAIL("settings check failed: repetitions/warmups");
    if (k->standard && (k->reps != k->s.repetitions || k->warm != k->s.warmups))
        VFAIL("settings check failed: a standard run must use the suite's repetitions and warm-ups");
    if (k->chat_only && k->s.rule_version < 2) VFAIL("settings check failed: chat-only runs need rule version 2");
out:
    return rc;
}

/* One attempt of a cell: well formed, on the cell's route, with the suite's seed, a
 * stream_tok_s that follows from its counts, and the status its suite's rules give it. */
static pacer_err check_attempt(receipt_check *k, cell_check *cc, const json_t *a, size_t ai, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    size_t ci = cc->ci;
    char lerr[200];
    attempt_sample smp;
    rc = receipt_attempt_from_json(a, &smp, lerr, sizeof lerr);
    if (rc) VFAIL("attempt check failed: cell %zu attempt %zu: %s", ci, ai, lerr);
    if (smp.route != cc->route)
        VFAIL("route check failed: cell %zu attempt %zu used route %s", ci, ai, attempt_route_name(smp.route));
    bool is_warm = json_is_true(json_object_get(a, "warmup"));
    json_t *seed = json_object_get(a, "seed");
    int64_t index = json_get_int(a, "index", -1);
    bool seed_ok = cc->temp == 0.0 ? json_is_null(seed)
                                   : json_is_integer(seed) && json_integer_value(seed) == cc->st->seed_base + (is_warm ? 0 : index);
    if (!seed_ok) VFAIL("seed check failed: cell %zu attempt %zu does not use the suite's seed", ci, ai);
    is_warm ? cc->warmups++ : cc->measured++;
    if (smp.has_usage && smp.has_stream_tok_s && smp.delivery_span_ns > 0) {
        double t = (double)(smp.completion_tokens - 1) / ((double)smp.delivery_span_ns / 1e9);
        if (fabs(t - smp.stream_tok_s) > 1e-6 * fmax(1.0, t))
            VFAIL("measurement check failed: cell %zu attempt %zu stream_tok_s does not follow from its "
                  "token count and delivery span", ci, ai);
    }
    if (smp.status == ATTEMPT_CANCELLED) {
        k->any_cancel = true;
        cc->ok = false;
        return PACER_OK;
    }
    attempt_status judged;
    if (!receipt_rejudge(&cc->ctx, &smp, &judged))
        VFAIL("rules check failed: cell %zu attempt %zu is '%s' but the %s rules make it '%s'", ci, ai,
              attempt_status_name(smp.status), k->sid, attempt_status_name(judged));
    if (smp.status != ATTEMPT_OK) cc->ok = false;
out:
    return rc;
}

/* One cell: a workload and setting of the suite, its settings, its attempts, its status and
 * aggregates as they follow from the attempts. */
static pacer_err check_cell(receipt_check *k, const json_t *c, size_t ci, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    const suite *s = &k->s;
    const char *wname = json_get_str(c, "workload", ""), *sname = json_get_str(c, "setting", "");
    const suite_workload *w = NULL;
    cell_check cc = {.ci = ci, .ok = true};
    for (int i = 0; i < s->n_workloads; i++) if (strcmp(s->workloads[i].name, wname) == 0) w = &s->workloads[i];
    for (int i = 0; i < s->n_settings; i++) if (strcmp(s->settings[i].name, sname) == 0) cc.st = &s->settings[i];
    if (!w || !cc.st) VFAIL("cell check failed: cell %zu names no workload/setting of %s", ci, k->sid);
    cc.temp = json_get_num(c, "temperature", -1);
    int max_tokens = (int)json_get_int(c, "max_tokens", -1);
    if (k->standard && (max_tokens != w->max_tokens || cc.temp != cc.st->temperature))
        VFAIL("cell check failed: cell %zu settings differ from the suite", ci);
    if (max_tokens < 1 || cc.temp < 0) VFAIL("cell check failed: cell %zu max_tokens/temperature", ci);
    cc.route = k->chat_only ? ATTEMPT_ROUTE_CHAT : w->route;
    cc.ctx = (rules_context){s->rule_version, max_tokens, cc.temp == 0.0, s->natural_stop_min_tokens};
    json_t *atts = json_object_get(c, "attempts");
    if (!json_is_array(atts)) VFAIL("cell check failed: cell %zu has no attempts array", ci);
    size_t ai;
    json_t *a;
    json_array_foreach(atts, ai, a) if ((rc = check_attempt(k, &cc, a, ai, err, err_len))) return rc;
    if (cc.measured != k->reps || cc.warmups > k->warm) cc.ok = false;
    if (cc.measured > k->reps || cc.warmups > k->warm) VFAIL("cell check failed: cell %zu has too many attempts", ci);
    const char *cstat = json_get_str(c, "status", "");
    if (strcmp(cstat, cc.ok ? "complete" : "incomplete") != 0)
        VFAIL("cell check failed: cell %zu is marked '%s' but its attempts make it %s", ci, cstat,
              cc.ok ? "complete" : "incomplete");
    json_t *agg = receipt_cell_aggregates(atts, k->reps);
    bool same = receipt_numbers_close(agg, json_object_get(c, "aggregates") ? json_object_get(c, "aggregates") : json_null());
    json_decref(agg);
    if (!same) VFAIL("aggregate check failed: cell %zu (%s/%s) aggregates do not match its raw samples", ci, wname, sname);
    if (!cc.ok) k->any_incomplete = true;
out:
    return rc;
}

/* The run's ending: cell count, exit status and ranking as they follow from the cells. */
static pacer_err check_ending(const json_t *r, const receipt_check *k, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    bool cancelled = json_is_true(json_object_get(r, "cancelled"));
    size_t n_cells = json_array_size(json_object_get(r, "cells")), want_cells = (size_t)(k->s.n_workloads * k->s.n_settings);
    if (!cancelled && k->standard && n_cells != want_cells)
        VFAIL("cell check failed: %zu cells, the suite has %zu", n_cells, want_cells);
    int want_exit = cancelled ? 130 : k->any_incomplete ? 2 : 0;
    if (k->any_cancel && !cancelled) VFAIL("exit check failed: a cancelled attempt in a run not marked cancelled");
    if (json_integer_value(json_object_get(r, "exit_status")) != want_exit)
        VFAIL("exit check failed: exit_status should be %d", want_exit);
    /* the structural part of ranking; the full rule set (bench/rank.c) is the runner's and
     * inspect's, so that a board can judge a receipt's standing by its own policy */
    bool ranked = json_is_true(json_object_get(r, "ranked"));
    if (ranked && (!k->standard || k->any_incomplete || cancelled ||
                   strcmp(json_get_str(json_object_get(r, "hardware"), "source", "unknown"), "unknown") == 0))
        VFAIL("rank check failed: a ranked receipt must be standard, complete and have known hardware");
out:
    return rc;
}

pacer_err receipt_validate_suite(const json_t *r, const char *suite_file, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    receipt_check k;
    memset(&k, 0, sizeof k);
    if (!json_is_object(r)) VFAIL("not a receipt: the document is not a JSON object");
    for (size_t i = 0; i < receipt_top_field_count; i++) {
        const receipt_top_field *f = &receipt_top_fields[i];
        json_t *v = json_object_get(r, f->name);
        bool ok = v && (f->type == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == f->type);
        if (!ok) VFAIL("field check failed: '%s' is missing or has the wrong type", f->name);
    }
    if ((rc = facts_validate(r, err, err_len))) goto out;
    if (json_integer_value(json_object_get(r, "schema_version")) != RECEIPT_SCHEMA_VERSION)
        VFAIL("schema check failed: unknown schema_version");
    if ((rc = check_suite(r, suite_file, &k, err, err_len)) || (rc = check_settings(r, &k, err, err_len))) goto out;
    size_t ci;
    json_t *c;
    json_array_foreach(json_object_get(r, "cells"), ci, c) if ((rc = check_cell(&k, c, ci, err, err_len))) goto out;
    rules_context load_rules = {k.s.rule_version, 0, false, k.s.natural_stop_min_tokens};
    bool load_incomplete = false;
    if ((rc = load_validate(r, &load_rules, &load_incomplete, err, err_len))) goto out;
    k.any_incomplete |= load_incomplete;
    rc = check_ending(r, &k, err, err_len);
out:
    suite_free(&k.s);
    return rc;
}

pacer_err receipt_parse(const char *text, size_t len, json_t **out, char *err, size_t err_len) {
    json_error_t je;
    *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!*out) {
        snprintf(err, err_len, "not valid JSON: %s (line %d)", je.text, je.line);
        return PACER_ERR_PARSE;
    }
    return PACER_OK;
}

pacer_err receipt_read(const char *path, json_t **out, char *err, size_t err_len) {
    buf b;
    buf_init(&b, RECEIPT_FILE_MAX);
    *out = NULL;
    pacer_err rc = file_read_all(path, &b);
    /* errno still names the cause of an I/O error ("Is a directory"): more useful than the code */
    if (rc) snprintf(err, err_len, "cannot read the receipt: %s", rc == PACER_ERR_IO && errno ? strerror(errno) : pacer_strerror(rc));
    else rc = receipt_parse(b.data, b.len, out, err, err_len);
    buf_free(&b);
    return rc;
}

pacer_err receipt_paths(const char *output, const char *run_id, char *path, size_t path_n, char *drafts,
                        size_t drafts_n, char *err, size_t err_len) {
    int w;
    if (output) {
        w = snprintf(path, path_n, "%s", output);
    } else {
        const char *home = path_home();
        char dir[4096];
        if (!home || !run_id) { snprintf(err, err_len, "no home directory: pass --output FILE"); return PACER_ERR_IO; }
        if (snprintf(dir, sizeof dir, "%s/.pacer/benchmarks", home) >= (int)sizeof dir || dir_create_all(dir, 0700)) {
            snprintf(err, err_len, "cannot create the receipts directory under ~/.pacer");
            return PACER_ERR_IO;
        }
        w = snprintf(path, path_n, "%s/%s.json", dir, run_id);
    }
    size_t n = strlen(path);
    if (w < 0 || (size_t)w >= path_n) { snprintf(err, err_len, "the receipt path is too long"); return PACER_ERR_TOO_BIG; }
    if (n > 5 && strcmp(path + n - 5, ".json") == 0) w = snprintf(drafts, drafts_n, "%.*s.drafts.json", (int)(n - 5), path);
    else w = snprintf(drafts, drafts_n, "%s.drafts.json", path);
    if (w < 0 || (size_t)w >= drafts_n) { snprintf(err, err_len, "the receipt path is too long"); return PACER_ERR_TOO_BIG; }
    return PACER_OK;
}

pacer_err receipt_write(const char *path, const json_t *doc) {
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
    if (!text) return PACER_ERR_NOMEM;
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (!withnl) { free(text); return PACER_ERR_NOMEM; }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    pacer_err rc = file_write_atomic(path, withnl, n + 1, 0600);
    free(withnl);
    return rc;
}

bool receipt_add_i64(int64_t *sum, int64_t v) {
    int64_t r;
    if (__builtin_add_overflow(*sum, v, &r)) return false;
    *sum = r;
    return true;
}

json_t *receipt_drafts_new(const char *run_id, bool drafter_passed) {
    return json_pack("{s:i,s:s,s:b,s:[],s:n,s:[]}", "schema_version", RECEIPT_SCHEMA_VERSION, "run_id", run_id,
                     "drafter_passed", drafter_passed, "attempts", "totals", "notes");
}

static json_t *opt_int(bool has, int64_t v) { return has ? json_integer(v) : json_null(); }

json_t *receipt_drafts_counts(const attempt_sample *s) {
    return json_pack("{s:o,s:o,s:o}", "verify_rounds", opt_int(s->has_verify_rounds, s->verify_rounds),
                     "draft_proposed", opt_int(s->has_draft_n, s->draft_n), "draft_accepted",
                     opt_int(s->has_draft_n_accepted, s->draft_n_accepted));
}

pacer_err receipt_drafts_add(json_t *drafts, int cell, int index, bool warmup, const attempt_sample *s) {
    json_t *a = json_pack("{s:i,s:i,s:b}", "cell", cell, "index", index, "warmup", warmup);
    json_t *counts = receipt_drafts_counts(s);
    if (!a || !counts || json_object_update(a, counts)) { json_decref(a); json_decref(counts); return PACER_ERR_NOMEM; }
    json_decref(counts);
    return json_array_append_new(json_object_get(drafts, "attempts"), a) ? PACER_ERR_NOMEM : PACER_OK;
}

pacer_err receipt_drafts_finish(json_t *drafts) {
    static const char *const keys[] = {"verify_rounds", "draft_proposed", "draft_accepted"};
    json_t *totals = json_object(), *notes = json_object_get(drafts, "notes");
    if (!totals) return PACER_ERR_NOMEM;
    for (size_t k = 0; k < 3; k++) {
        int64_t sum = 0;
        bool any = false, overflow = false;
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(drafts, "attempts"), i, a) {
            json_t *v = json_object_get(a, keys[k]);
            if (!json_is_integer(v)) continue;
            any = true;
            if (!receipt_add_i64(&sum, json_integer_value(v))) overflow = true;
        }
        json_object_set_new(totals, keys[k], any && !overflow ? json_integer(sum) : json_null());
        if (overflow) {
            char msg[96];
            snprintf(msg, sizeof msg, "total %s is null: the sum passes 64 bits", keys[k]);
            json_array_append_new(notes, json_string(msg));
        }
    }
    bool drafted = false; /* some attempt reported proposed draft tokens */
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(drafts, "attempts"), i, a) drafted |= json_integer_value(json_object_get(a, "draft_proposed")) > 0;
    if (json_is_true(json_object_get(drafts, "drafter_passed")) && !drafted)
        json_array_append_new(notes, json_string("a drafter was passed, but the server drafted no tokens"));
    json_object_set_new(drafts, "totals", totals);
    return PACER_OK;
}
