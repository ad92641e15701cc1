/* prefill_report.c - pairs, paired ratios and summary.md of `pacer lab prefill`
 * (prefill_report.h). */
#include "lab/prefill_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/stats.h"
#include "lab/report.h"
#include "lab/summary.h"

#define OUTPUT_SHOWN 60 /* bytes of a sample's output summary.md shows */

void lab_ratio_paired(const double *before, const double *after, size_t n, lab_ratio *out) {
    memset(out, 0, sizeof *out);
    double *r = malloc((n ? n : 1) * sizeof *r);
    size_t k = 0;
    for (size_t i = 0; r && i < n; i++)
        if (isfinite(before[i]) && isfinite(after[i]) && before[i] > 0 && after[i] > 0) r[k++] = after[i] / before[i];
    stats_summary s;
    if (k && stats_summarize(r, k, &s)) *out = (lab_ratio){.has = true, .median = s.median, .min = s.min, .max = s.max, .n = k};
    free(r);
}

bool lab_prefill_usable(const json_t *sample) {
    const char *finish = lab_str(sample, "finish");
    return (!strcmp(finish, "eos") || !strcmp(finish, "capped")) && !strcmp(lab_str(sample, "validity"), "valid");
}

/* obj[key] when it is a number, else NAN. */
static double num(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const json_t *sample_by_id(const json_t *samples, const char *id) {
    size_t i;
    json_t *s;
    json_array_foreach(samples, i, s) if (id[0] && !strcmp(lab_str(s, "id"), id)) return s;
    return NULL;
}

static bool same_cell(const json_t *o, const char *length_key, const char *length, const char *config) {
    return !strcmp(lab_str(o, length_key), length) && !strcmp(lab_str(o, "config"), config);
}

/* The pair of (round, length, config) in `pairs`, made (with `first` ran first) when absent. */
static json_t *pair_for(json_t *pairs, json_int_t round, const char *length, const char *config, const char *first) {
    size_t i;
    json_t *p;
    json_array_foreach(pairs, i, p) if (json_integer_value(json_object_get(p, "round")) == round && same_cell(p, "length", length, config)) return p;
    p = json_pack("{s:I,s:s,s:s,s:s,s:n,s:n}", "round", round, "length", length, "config", config, "first", first, "before",
                  "after");
    json_array_append_new(pairs, p);
    return p;
}

/* A usable sample's rate `key`, else NAN. */
static double rate(const json_t *s, const char *key) { return s && lab_prefill_usable(s) ? num(s, key) : NAN; }

static json_t *ratio_json(double before, double after) {
    lab_ratio r;
    lab_ratio_paired(&before, &after, 1, &r);
    return r.has ? json_real(r.median) : json_null();
}

/* Why a pair gives no ratio, or NULL when it does. */
static void pair_why(const json_t *b, const json_t *a, char *why, size_t n) {
    why[0] = '\0';
    const json_t *side[2] = {b, a};
    const char *name[2] = {"before", "after"};
    for (int k = 0; k < 2 && !why[0]; k++) {
        const json_t *s = side[k];
        if (!s) snprintf(why, n, "the %s sample did not run", name[k]);
        else if (strcmp(lab_str(s, "validity"), "valid"))
            snprintf(why, n, "the %s sample is %s: %s", name[k], lab_str(s, "validity"), lab_str(s, "validity_reason"));
        else if (!lab_prefill_usable(s))
            snprintf(why, n, "the %s sample ended %s%s%s", name[k], lab_str(s, "finish"), lab_str(s, "error")[0] ? ": " : "",
                     lab_str(s, "error"));
    }
    if (!why[0] && !(num(b, "prefill_tok_s") > 0 && num(a, "prefill_tok_s") > 0)) snprintf(why, n, "no prefill rate was measured");
}

static void pair_judge(json_t *p, const json_t *samples) {
    const json_t *b = sample_by_id(samples, lab_str(p, "before")), *a = sample_by_id(samples, lab_str(p, "after"));
    char why[320];
    pair_why(b, a, why, sizeof why);
    json_object_set_new(p, "why", why[0] ? json_string(why) : json_null());
    json_object_set_new(p, "ratio", ratio_json(rate(b, "prefill_tok_s"), rate(a, "prefill_tok_s")));
    json_object_set_new(p, "server_ratio", ratio_json(rate(b, "server_prefill_tok_s"), rate(a, "server_prefill_tok_s")));
    bool both = b && a && lab_prefill_usable(b) && lab_prefill_usable(a);
    json_object_set_new(p, "outputs", !both ? json_null() : json_string(strcmp(lab_str(b, "output"), lab_str(a, "output")) ? "differ" : "same"));
}

static json_t *ratio_stats_json(const lab_ratio *r) {
    return r->has ? json_pack("{s:f,s:f,s:f,s:I}", "median", r->median, "min", r->min, "max", r->max, "n", (json_int_t)r->n)
                  : json_null();
}

/* {"median", "min", "max", "n"} of the usable samples' prefill_tok_s of one build, or null. */
static json_t *rate_stats(const json_t *samples, const char *length, const char *config, const char *binary) {
    size_t i, k = 0;
    json_t *s;
    double *v = malloc((json_array_size(samples) + 1) * sizeof *v);
    json_array_foreach(samples, i, s) {
        double x = same_cell(s, "workload", length, config) && !strcmp(lab_str(s, "binary"), binary) ? rate(s, "prefill_tok_s") : NAN;
        if (v && isfinite(x)) v[k++] = x;
    }
    json_t *o = v ? lab_report_stats(v, k) : json_null();
    free(v);
    return o;
}

/* The prompt tokens the first usable sample of `binary` reported, or null. */
static json_t *prompt_tokens(const json_t *samples, const char *length, const char *config, const char *binary) {
    size_t i;
    json_t *s;
    json_array_foreach(samples, i, s) {
        const json_t *t = json_object_get(s, "prefill_tokens");
        if (same_cell(s, "workload", length, config) && !strcmp(lab_str(s, "binary"), binary) && lab_prefill_usable(s) && json_is_integer(t))
            return json_incref((json_t *)t);
    }
    return json_null();
}

static json_t *length_entry(const json_t *pairs, const json_t *samples, const char *length, const char *config) {
    size_t n = json_array_size(pairs), k = 0, without = 0, i;
    double *v = malloc((4 * n + 1) * sizeof *v);
    if (!v) return NULL;
    double *b = v, *a = v + n, *sb = v + 2 * n, *sa = v + 3 * n;
    json_t *differ = json_array(), *p;
    int compared = 0, same = 0;
    json_array_foreach(pairs, i, p) {
        if (!same_cell(p, "length", length, config)) continue;
        const json_t *bs = sample_by_id(samples, lab_str(p, "before")), *as = sample_by_id(samples, lab_str(p, "after"));
        b[k] = rate(bs, "prefill_tok_s"), a[k] = rate(as, "prefill_tok_s");
        sb[k] = rate(bs, "server_prefill_tok_s"), sa[k] = rate(as, "server_prefill_tok_s");
        k++;
        without += json_is_null(json_object_get(p, "ratio"));
        const char *o = lab_str(p, "outputs");
        compared += o[0] != '\0';
        if (!strcmp(o, "same")) same++;
        else if (o[0]) json_array_append(differ, json_object_get(p, "round"));
    }
    lab_ratio r, sr;
    lab_ratio_paired(b, a, k, &r);
    lab_ratio_paired(sb, sa, k, &sr);
    free(v);
    return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:{s:o,s:o},s:I,s:I,s:{s:i,s:i,s:o}}", "length", length, "config", config, "ratio",
                     ratio_stats_json(&r), "server_ratio", ratio_stats_json(&sr), "before_tok_s",
                     rate_stats(samples, length, config, "before"), "after_tok_s", rate_stats(samples, length, config, "after"),
                     "prompt_tokens", "before", prompt_tokens(samples, length, config, "before"), "after",
                     prompt_tokens(samples, length, config, "after"), "pairs", (json_int_t)k, "pairs_without_ratio",
                     (json_int_t)without, "outputs", "compared", compared, "same", same, "differ_rounds", differ);
}

json_t *lab_prefill_report_build(const json_t *head) {
    json_t *rep = json_deep_copy(head);
    if (!rep) return NULL;
    const json_t *samples = json_object_get(head, "samples");
    json_t *pairs = json_array(), *lengths = json_array(), *s, *l, *c;
    size_t i, k;
    json_array_foreach(samples, i, s) {
        const char *binary = lab_str(s, "binary");
        json_t *p = pair_for(pairs, json_integer_value(json_object_get(s, "round")), lab_str(s, "workload"), lab_str(s, "config"), binary);
        if (p && (!strcmp(binary, "before") || !strcmp(binary, "after"))) json_object_set_new(p, binary, json_string(lab_str(s, "id")));
    }
    json_array_foreach(pairs, i, s) pair_judge(s, samples);
    const json_t *settings = json_object_get(head, "settings");
    json_array_foreach(json_object_get(settings, "lengths"), i, l) json_array_foreach(json_object_get(settings, "configs"), k, c) {
        json_t *e = json_is_string(l) && json_is_string(c) ? length_entry(pairs, samples, json_string_value(l), json_string_value(c)) : NULL;
        if (e) json_array_append_new(lengths, e);
    }
    json_object_set_new(rep, "pairs", pairs);
    json_object_set_new(rep, "lengths", lengths);
    return rep;
}

/* "1.053 (0.981-1.102) n=3", or "-". */
static pacer_err stats_cell(buf *out, const json_t *st, const char *fmt) {
    if (!json_is_object(st)) return buf_append_str(out, " - |");
    char f[80];
    snprintf(f, sizeof f, " %s (%s-%s) n=%%lld |", fmt, fmt, fmt);
    return buf_appendf(out, f, num(st, "median"), num(st, "min"), num(st, "max"), (long long)json_integer_value(json_object_get(st, "n")));
}

static pacer_err tokens_cell(buf *out, const json_t *pt) {
    const json_t *b = json_object_get(pt, "before"), *a = json_object_get(pt, "after");
    if (!json_is_integer(b) && !json_is_integer(a)) return buf_append_str(out, " - |");
    if (json_is_integer(b) && json_is_integer(a) && json_integer_value(b) == json_integer_value(a))
        return buf_appendf(out, " %lld |", (long long)json_integer_value(b));
    char bt[24] = "-", at[24] = "-";
    if (json_is_integer(b)) snprintf(bt, sizeof bt, "%lld", (long long)json_integer_value(b));
    if (json_is_integer(a)) snprintf(at, sizeof at, "%lld", (long long)json_integer_value(a));
    return buf_appendf(out, " %s / %s (they differ) |", bt, at);
}

static pacer_err outputs_cell(buf *out, const json_t *o) {
    json_int_t compared = json_integer_value(json_object_get(o, "compared"));
    const json_t *differ = json_object_get(o, "differ_rounds");
    if (!compared) return buf_append_str(out, " not compared |");
    if (!json_array_size(differ)) return buf_appendf(out, " same (%lld round%s) |", (long long)compared, compared == 1 ? "" : "s");
    pacer_err rc = buf_append_str(out, " differ in round");
    size_t i;
    json_t *r;
    json_array_foreach(differ, i, r) if (!rc) rc = buf_appendf(out, "%s %lld", i ? "," : (json_array_size(differ) > 1 ? "s" : ""), (long long)json_integer_value(r));
    return rc ? rc : buf_appendf(out, " of %lld |", (long long)compared);
}

static pacer_err ratio_table(buf *out, const json_t *report) {
    pacer_err rc = buf_append_str(out, "\n## Prefill after/before\n\n| length | configuration | prompt tokens | before tok/s | after tok/s | "
                                       "ratio (client) | ratio (server) | greedy tokens | pairs |\n|---|---|---|---|---|---|---|---|---|\n");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(report, "lengths"), i, e) {
        const char *parts[] = {"| ", lab_str(e, "length"), " | ", lab_str(e, "config"), " |"};
        if (!rc) rc = lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
        if (!rc) rc = tokens_cell(out, json_object_get(e, "prompt_tokens"));
        if (!rc) rc = stats_cell(out, json_object_get(e, "before_tok_s"), "%.1f");
        if (!rc) rc = stats_cell(out, json_object_get(e, "after_tok_s"), "%.1f");
        if (!rc) rc = stats_cell(out, json_object_get(e, "ratio"), "%.3f");
        if (!rc) rc = stats_cell(out, json_object_get(e, "server_ratio"), "%.3f");
        if (!rc) rc = outputs_cell(out, json_object_get(e, "outputs"));
        json_int_t without = json_integer_value(json_object_get(e, "pairs_without_ratio"));
        if (!rc) rc = buf_appendf(out, " %lld", (long long)json_integer_value(json_object_get(e, "pairs")));
        if (!rc) rc = buf_appendf(out, without ? ", %lld without a ratio |\n" : " |\n", (long long)without);
    }
    return rc;
}

/* The output cut to OUTPUT_SHOWN bytes at a character boundary, quoted and escaped. */
static pacer_err output_cell(buf *out, const char *text) {
    char cut[OUTPUT_SHOWN + 8];
    size_t n = strlen(text);
    bool longer = n > OUTPUT_SHOWN;
    if (longer) {
        n = OUTPUT_SHOWN;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
    }
    snprintf(cut, sizeof cut, "%.*s", (int)n, text);
    pacer_err rc = buf_append_str(out, " \"");
    if (!rc) rc = lab_md_escape(out, cut);
    return rc ? rc : buf_append_str(out, longer ? "...\" |" : "\" |");
}

static pacer_err sample_table(buf *out, const json_t *report) {
    pacer_err rc = buf_append_str(out, "\n## Samples\n\nIn the order they ran; a sample that is not valid, or ended without an answer, "
                                       "gives its pair no ratio.\n\n| sample | build | finish | validity | prompt tokens | "
                                       "prefill tok/s | server prefill tok/s | output | note |\n|---|---|---|---|---|---|---|---|---|\n");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(report, "samples"), i, s) {
        const char *parts[] = {"| ", lab_str(s, "id"), " | ", lab_str(s, "binary"),
                               json_is_true(json_object_get(s, "first")) ? " (first) | " : " (second) | ", lab_str(s, "finish"), " | ",
                               lab_str(s, "validity"), " |"};
        if (!rc) rc = lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
        const json_t *t = json_object_get(s, "prefill_tokens");
        if (!rc) rc = json_is_integer(t) ? buf_appendf(out, " %lld |", (long long)json_integer_value(t)) : buf_append_str(out, " - |");
        double x = num(s, "prefill_tok_s"), y = num(s, "server_prefill_tok_s");
        if (!rc) rc = isfinite(x) ? buf_appendf(out, " %.1f |", x) : buf_append_str(out, " - |");
        if (!rc) rc = isfinite(y) ? buf_appendf(out, " %.1f |", y) : buf_append_str(out, " - |");
        if (!rc) rc = output_cell(out, lab_str(s, "output"));
        const char *why = lab_str(s, "validity_reason")[0] ? lab_str(s, "validity_reason") : lab_str(s, "error");
        const char *tail[] = {" ", why, " |\n"};
        if (!rc) rc = lab_md_parts(out, tail, 3);
    }
    return rc;
}

/* One build's line: hash, the first line of its --version, its commit and where that came
 * from. */
static pacer_err build_line(buf *out, const char *name, const json_t *b) {
    char sha[13];
    snprintf(sha, sizeof sha, "%s", lab_str(b, "sha256"));
    const char *commit = lab_str(b, "commit"), *version = lab_str(b, "version");
    bool known = commit[0] != '\0';
    const char *parts[] = {"- ", name, ": sha256 ", sha, ", --version: ", version[0] ? version : "(nothing)",
                           known ? ", commit " : ", commit unknown: ", known ? commit : lab_str(b, "commit_note"), known ? " (from " : "",
                           known ? lab_str(b, "commit_source") : "", known ? ")" : "", ""};
    pacer_err rc = lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
    if (!rc && json_is_true(json_object_get(b, "dirty")))
        rc = buf_append_str(out, "; its checkout has uncommitted changes, which the source diff does not show");
    return rc ? rc : buf_append_char(out, '\n');
}

static pacer_err head_lines(buf *out, const json_t *report) {
    const json_t *bins = json_object_get(report, "binaries"), *diff = json_object_get(report, "source_diff");
    const json_t *suite = json_object_get(report, "suite"), *model = json_object_get(report, "model");
    const json_t *settings = json_object_get(report, "settings"), *state = json_object_get(report, "state");
    const char *title[] = {"\n\n# Paired prefill ", lab_str(report, "created_utc"), "\n\n"};
    pacer_err rc = lab_md_parts(out, title, 3);
    if (!rc) rc = build_line(out, "before", json_object_get(bins, "before"));
    if (!rc) rc = build_line(out, "after", json_object_get(bins, "after"));
    if (!rc && !strcmp(lab_str(json_object_get(bins, "before"), "sha256"), lab_str(json_object_get(bins, "after"), "sha256")))
        rc = buf_append_str(out, "- the two builds are the same file (one sha256): the ratios show the spread of the measurement itself\n");
    bool has_diff = json_is_true(json_object_get(diff, "available"));
    const char *dparts[] = {has_diff ? "- source diff: " : "- source diff unavailable: ", lab_str(diff, has_diff ? "summary" : "reason"),
                            has_diff && lab_str(diff, "file")[0] ? " (" : "", lab_str(diff, "file"), has_diff && lab_str(diff, "file")[0] ? ")\n" : "\n"};
    if (!rc) rc = lab_md_parts(out, dparts, 5);
    char digest[13], tail[200];
    snprintf(digest, sizeof digest, "%s", lab_str(suite, "digest"));
    snprintf(tail, sizeof tail, "), %lld round(s), %lld generated tokens a sample; status %s; %zu of %lld samples recorded.\n",
             (long long)json_integer_value(json_object_get(settings, "rounds")), (long long)json_integer_value(json_object_get(settings, "tokens")),
             lab_str(state, "status"), json_array_size(json_object_get(report, "samples")),
             (long long)json_integer_value(json_object_get(settings, "samples")));
    const char *parts[] = {"- engine ", lab_str(settings, "engine"), ", model ", lab_str(model, "file"), " (", lab_str(model, "identity"),
                           "), suite ", lab_str(suite, "id"), " (digest ", digest, tail};
    if (!rc) rc = lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
    const char *reason = lab_str(state, "reason");
    const char *why[] = {"- stopped: ", reason, "\n"};
    if (!rc && reason[0]) rc = lab_md_parts(out, why, 3);
    return rc;
}

pacer_err lab_prefill_summary(buf *out, const json_t *report) {
    const json_t *prov = json_object_get(report, "provenance");
    pacer_err rc = lab_summary_hardware_of(out, json_object_get(prov, "hardware_detail"),
                                           lab_str(json_object_get(report, "settings"), "power"));
    if (!rc) rc = head_lines(out, report);
    if (!rc)
        rc = buf_append_str(out, "\nEach ratio is after/before of prefill tok/s: per round from that round's two samples (odd rounds ran "
                                 "the before build first, even rounds the after build first), then the median over rounds with the "
                                 "least and greatest round in parentheses. Client: prompt tokens / time to the first text; server: "
                                 "prompt tokens / the engine's own prompt time. Each sample is a fresh engine process. The "
                                 "generated tokens check the hand-off from prefill to decode (greedy: the two builds should "
                                 "agree); they are no decode measurement.\n");
    if (!rc) rc = ratio_table(out, report);
    if (!rc) rc = sample_table(out, report);
    return rc;
}
