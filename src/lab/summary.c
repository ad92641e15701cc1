/* summary.c - summary.md from report.json (summary.h). */
#include "lab/summary.h"

#include <ctype.h>
#include <stdbool.h>
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

static bool word_char(char c) { return c && (isalnum((unsigned char)c) || (unsigned char)c >= 0x80); }

pacer_err lab_md_escape(buf *out, const char *s) {
    pacer_err rc = PACER_OK;
    for (const char *p = s; !rc && *p; p++) {
        /* an '_' between two word characters never opens or closes emphasis: q8_0 stays as it is */
        bool inner_underscore = *p == '_' && p > s && word_char(p[-1]) && word_char(p[1]);
        if (*p == '\n' || *p == '\r') rc = buf_append_char(out, ' ');
        else if (strchr("|\\`*[]<>&~", *p) || (*p == '_' && !inner_underscore)) rc = buf_appendf(out, "\\%c", *p);
        else rc = buf_append_char(out, *p);
    }
    return rc;
}

pacer_err lab_md_parts(buf *out, const char *const *parts, size_t n) {
    pacer_err rc = PACER_OK;
    for (size_t k = 0; !rc && k < n; k++) rc = k % 2 ? lab_md_escape(out, parts[k]) : buf_append_str(out, parts[k]);
    return rc;
}

/* The hardware facts: the strings are the probes' (CPU and GPU names, OS), escaped. */
pacer_err lab_summary_hardware_of(buf *out, const json_t *hw, const char *power) {
    pacer_err rc = buf_append_str(out, "Hardware: ");
    if (!rc) rc = lab_md_escape(out, json_is_string(json_object_get(hw, "cpu_model")) ? lab_str(hw, "cpu_model") : "unknown CPU");
    if (!rc)
        rc = buf_appendf(out, ", %lld threads, %.1f GiB memory", (long long)json_integer_value(json_object_get(hw, "cpu_threads")),
                         (double)json_integer_value(json_object_get(hw, "memory_bytes")) / (1024.0 * 1024 * 1024));
    const json_t *gpus = json_object_get(hw, "gpus");
    size_t i;
    json_t *g;
    if (!rc && !json_array_size(gpus)) rc = buf_append_str(out, ", no GPU");
    json_array_foreach(gpus, i, g) {
        if (!rc) rc = buf_append_str(out, ", GPU ");
        if (!rc) rc = lab_md_escape(out, json_is_string(json_object_get(g, "name")) ? lab_str(g, "name") : "unnamed");
    }
    const char *parts[] = {", ", lab_str(hw, "os_name"), " ", lab_str(hw, "os_version"), ", kernel ", lab_str(hw, "kernel"), ", power ",
                           power && power[0] ? power : "unknown"};
    return rc ? rc : lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
}

pacer_err lab_summary_hardware(buf *out, const json_t *report) {
    const json_t *run = json_object_get(report, "run");
    return lab_summary_hardware_of(out, json_object_get(json_object_get(run, "provenance"), "hardware_detail"),
                                   lab_str(json_object_get(run, "settings"), "power"));
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
    json_array_foreach(configs, i, c) {
        if (!rc) rc = buf_append_char(out, ' ');
        if (!rc) rc = lab_md_escape(out, lab_str(c, "name"));
        if (!rc) rc = buf_append_str(out, " |");
    }
    if (!rc) rc = buf_append_str(out, "\n|---|");
    for (i = 0; !rc && i < json_array_size(configs); i++) rc = buf_append_str(out, "---|");
    json_array_foreach(cases, k, w) {
        if (!rc) rc = buf_append_str(out, "\n| ");
        if (!rc) rc = lab_md_escape(out, json_string_value(w) ? json_string_value(w) : "");
        if (!rc) rc = buf_append_str(out, " |");
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
    json_array_foreach(rates, i, r) {
        if (!rc) rc = buf_append_str(out, "| ");
        if (!rc) rc = lab_md_escape(out, lab_str(r, "config"));
        if (!rc) rc = buf_appendf(out, " | %lld | %lld |\n", (long long)json_integer_value(json_object_get(r, "valid")),
                                  (long long)json_integer_value(json_object_get(r, "checked")));
    }
    return rc;
}

pacer_err lab_summary_markdown(buf *out, const json_t *report) {
    const json_t *run = json_object_get(report, "run");
    const json_t *sig = json_object_get(run, "signature");
    char digest[13], binary[13], tail[160];
    snprintf(digest, sizeof digest, "%s", lab_str(json_object_get(sig, "suite"), "digest"));
    snprintf(binary, sizeof binary, "%s", lab_str(json_object_get(sig, "binary"), "sha256"));
    snprintf(tail, sizeof tail, "), %lld round(s), status %s; %zu samples recorded, %zu pending.\n",
             (long long)json_integer_value(json_object_get(json_object_get(sig, "selections"), "rounds")),
             lab_str(json_object_get(run, "state"), "status"), json_array_size(json_object_get(report, "samples")),
             json_array_size(json_object_get(report, "pending")));
    const char *parts[] = {"\n\n# Lab run ", lab_str(run, "created_utc"), "\n\nSuite ", lab_str(json_object_get(sig, "suite"), "id"),
                           " (digest ", digest, "), model ", lab_str(json_object_get(sig, "model"), "file"), " (",
                           lab_str(json_object_get(sig, "model"), "identity"), "), engine ", lab_str(sig, "engine"), " (sha256 ",
                           binary, tail};
    pacer_err rc = lab_summary_hardware(out, report);
    if (!rc) rc = lab_md_parts(out, parts, sizeof parts / sizeof parts[0]);
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
