/* summary.c - summary.md from report.json (summary.h). */
#include "lab/summary.h"

#include <stdio.h>
#include <string.h>

#include "lab/plot.h"

/* The metrics summary.md tabulates: the key in a report cell, the heading, the format. */
static const struct {
    const char *key, *title, *fmt;
} summary_metrics[] = {
    {"prefill_tok_s", "Prefill tok/s (client)", "%.1f"},
    {"decode_tok_s", "Decode tok/s (client)", "%.1f"},
    {"completion_s", "Completion time (s)", "%.2f"},
    {"answer_tokens", "Answer tokens", "%.0f"},
};

/* Exclusion reasons in the order a cell lists them. */
static const char *const excl_keys[] = {"capped", "cycle", "content_invalid", "invalidated", "error"};


const char *lab_str(const json_t *obj, const char *key) {
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

pacer_err lab_summary_hardware(buf *out, const json_t *report) {
    const json_t *run = json_object_get(report, "run");
    const json_t *hw = json_object_get(json_object_get(run, "provenance"), "hardware_detail");
    pacer_err rc = buf_appendf(out, "Hardware: %s, %lld threads, %.1f GiB memory",
                               json_is_string(json_object_get(hw, "cpu_model")) ? lab_str(hw, "cpu_model") : "unknown CPU",
                               (long long)json_integer_value(json_object_get(hw, "cpu_threads")),
                               (double)json_integer_value(json_object_get(hw, "memory_bytes")) / (1024.0 * 1024 * 1024));
    const json_t *gpus = json_object_get(hw, "gpus");
    size_t i;
    json_t *g;
    if (!rc && !json_array_size(gpus)) rc = buf_append_str(out, ", no GPU");
    json_array_foreach(gpus, i, g) if (!rc) rc = buf_appendf(out, ", GPU %s", json_is_string(json_object_get(g, "name")) ? lab_str(g, "name") : "unnamed");
    if (!rc) rc = buf_appendf(out, ", %s %s, kernel %s, power %s", lab_str(hw, "os_name"), lab_str(hw, "os_version"), lab_str(hw, "kernel"),
                             json_is_string(json_object_get(json_object_get(run, "settings"), "power"))
                                 ? lab_str(json_object_get(run, "settings"), "power") : "unknown");
    return rc;
}

static const json_t *find_cell(const json_t *report, const char *config, const char *workload) {
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(report, "cells"), i, c) if (!strcmp(lab_str(c, "config"), config) && !strcmp(lab_str(c, "workload"), workload)) return c;
    return NULL;
}

static pacer_err cell_text(buf *out, const json_t *cell, const char *metric, const char *fmt) {
    const json_t *m = json_object_get(json_object_get(cell, "metrics"), metric);
    pacer_err rc = PACER_OK;
    if (json_is_object(m)) {
        char f[64];
        snprintf(f, sizeof f, "%s (%s-%s) n=%%lld", fmt, fmt, fmt);
        rc = buf_appendf(out, f, json_number_value(json_object_get(m, "median")), json_number_value(json_object_get(m, "min")),
                         json_number_value(json_object_get(m, "max")), (long long)json_integer_value(json_object_get(m, "n")));
    } else {
        rc = buf_append_str(out, "-");
    }
    const json_t *ex = json_object_get(cell, "excluded");
    for (size_t k = 0; !rc && k < sizeof excl_keys / sizeof excl_keys[0]; k++) {
        json_int_t v = json_integer_value(json_object_get(ex, excl_keys[k]));
        if (v) rc = buf_appendf(out, ", %lld %s", (long long)v, excl_keys[k]);
    }
    return rc;
}

static const char *metric_fmt(const char *metric) {
    for (size_t i = 0; i < sizeof summary_metrics / sizeof summary_metrics[0]; i++)
        if (!strcmp(summary_metrics[i].key, metric)) return summary_metrics[i].fmt;
    return "%.2f";
}

pacer_err lab_summary_table(buf *out, const json_t *report, const char *metric, const char *title) {
    const json_t *run = json_object_get(report, "run");
    const json_t *configs = json_object_get(run, "configurations");
    const json_t *cases = json_object_get(json_object_get(json_object_get(run, "signature"), "selections"), "cases");
    size_t i, k;
    json_t *c, *w;
    pacer_err rc = buf_appendf(out, "\n## %s\n\n| workload |", title);
    json_array_foreach(configs, i, c) if (!rc) rc = buf_appendf(out, " %s |", lab_str(c, "name"));
    if (!rc) rc = buf_append_str(out, "\n|---|");
    for (i = 0; !rc && i < json_array_size(configs); i++) rc = buf_append_str(out, "---|");
    json_array_foreach(cases, k, w) {
        if (!rc) rc = buf_appendf(out, "\n| %s |", json_string_value(w) ? json_string_value(w) : "");
        json_array_foreach(configs, i, c) {
            const json_t *cell = find_cell(report, lab_str(c, "name"), json_string_value(w) ? json_string_value(w) : "");
            if (!rc) rc = buf_append_char(out, ' ');
            if (!rc) rc = cell ? cell_text(out, cell, metric, metric_fmt(metric)) : buf_append_str(out, "not run");
            if (!rc) rc = buf_append_str(out, " |");
        }
    }
    return rc ? rc : buf_append_char(out, '\n');
}

static pacer_err svg_rates(buf *out, const json_t *report) {
    const json_t *rates = json_object_get(report, "svg");
    pacer_err rc = buf_append_str(out, "\n## SVG validity\n\n");
    if (!rc && !json_array_size(rates)) return buf_append_str(out, "No SVG answers were checked.\n");
    if (!rc) rc = buf_append_str(out, "| configuration | valid | checked |\n|---|---|---|\n");
    size_t i;
    json_t *r;
    json_array_foreach(rates, i, r) if (!rc) rc = buf_appendf(out, "| %s | %lld | %lld |\n", lab_str(r, "config"),
                                                               (long long)json_integer_value(json_object_get(r, "valid")),
                                                               (long long)json_integer_value(json_object_get(r, "checked")));
    return rc;
}

pacer_err lab_summary_markdown(buf *out, const json_t *report) {
    const json_t *run = json_object_get(report, "run");
    const json_t *sig = json_object_get(run, "signature");
    pacer_err rc = lab_summary_hardware(out, report);
    if (!rc)
        rc = buf_appendf(out,
                         "\n\n# Lab run %s\n\nSuite %s (digest %.12s), model %s (%s), engine %s (sha256 %.12s), %lld round(s), "
                         "status %s; %zu samples recorded, %zu pending.\n",
                         lab_str(run, "created_utc"), lab_str(json_object_get(sig, "suite"), "id"),
                         lab_str(json_object_get(sig, "suite"), "digest"), lab_str(json_object_get(sig, "model"), "file"),
                         lab_str(json_object_get(sig, "model"), "identity"), lab_str(sig, "engine"),
                         lab_str(json_object_get(sig, "binary"), "sha256"),
                         (long long)json_integer_value(json_object_get(json_object_get(sig, "selections"), "rounds")),
                         lab_str(json_object_get(run, "state"), "status"), json_array_size(json_object_get(report, "samples")),
                         json_array_size(json_object_get(report, "pending")));
    if (!rc)
        rc = buf_append_str(out, "\nEach cell: median (least-greatest) n=samples in the median, then the samples kept out of it "
                                 "by why. Only answers that ended by themselves (EOS) and are valid enter a median; "
                                 "completion does not establish correctness.\n");
    for (size_t i = 0; !rc && i < sizeof summary_metrics / sizeof summary_metrics[0]; i++)
        rc = lab_summary_table(out, report, summary_metrics[i].key, summary_metrics[i].title);
    if (!rc) rc = svg_rates(out, report);
    if (!rc)
        rc = buf_appendf(out, "\n## Plots and answers\n\n- [decode tok/s per configuration](%s)\n"
                              "- [answer length against completion time](%s)\n- [gallery: every answer and drawing](%s)\n",
                         LAB_PLOT_DECODE, LAB_PLOT_LENGTH_TIME, LAB_GALLERY_FILE);
    return rc;
}
