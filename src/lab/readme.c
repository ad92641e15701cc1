/* readme.c - README.md of a lab run (readme.h). */
#include "lab/readme.h"

#include <stdbool.h>
#include <string.h>

#include "lab/summary.h"

static pacer_err what_was_run(buf *out, const json_t *run) {
    const json_t *sig = json_object_get(run, "signature"), *sel = json_object_get(sig, "selections");
    pacer_err rc = buf_appendf(out, "## What was run\n\n- suite: %s (sha256 %s)\n- model: %s (%s)\n- engine: %s, binary sha256 %s\n"
                                    "- rounds: %lld; state: %s\n- configurations:\n",
                               lab_str(json_object_get(sig, "suite"), "id"), lab_str(json_object_get(sig, "suite"), "digest"),
                               lab_str(json_object_get(sig, "model"), "file"), lab_str(json_object_get(sig, "model"), "identity"),
                               lab_str(sig, "engine"), lab_str(json_object_get(sig, "binary"), "sha256"),
                               (long long)json_integer_value(json_object_get(sel, "rounds")),
                               lab_str(json_object_get(run, "state"), "status"));
    size_t i, k;
    json_t *c, *a;
    json_array_foreach(json_object_get(run, "configurations"), i, c) {
        if (!rc) rc = buf_appendf(out, "  - %s: %s weights, store %s", lab_str(c, "name"), lab_str(c, "weights"), lab_str(c, "store"));
        if (!rc && json_is_integer(json_object_get(c, "threads")))
            rc = buf_appendf(out, ", %lld threads", (long long)json_integer_value(json_object_get(c, "threads")));
        if (!rc && json_array_size(json_object_get(c, "args"))) rc = buf_append_str(out, ", engine arguments:");
        json_array_foreach(json_object_get(c, "args"), k, a) if (!rc) rc = buf_appendf(out, " `%s`", json_string_value(a) ? json_string_value(a) : "");
        if (!rc) rc = buf_append_char(out, '\n');
    }
    if (!rc) rc = buf_append_str(out, "- workloads (answer cap in tokens):");
    json_array_foreach(json_object_get(sel, "cases"), i, c) {
        const char *w = json_string_value(c) ? json_string_value(c) : "";
        if (!rc) rc = buf_appendf(out, "%s %s (%lld)", i ? "," : "", w, (long long)json_integer_value(json_object_get(json_object_get(sig, "caps"), w)));
    }
    return rc ? rc : buf_append_char(out, '\n');
}

static pacer_err notes(buf *out, const json_t *run) {
    pacer_err rc = PACER_OK;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(run, "sessions"), i, s) {
        if (!json_is_string(json_object_get(s, "note"))) continue;
        if (!rc) rc = buf_appendf(out, "\nNote (session started %s):\n\n", lab_str(s, "started_utc"));
        if (!rc) rc = buf_appendf(out, "> %s\n", lab_str(s, "note"));
    }
    return rc;
}

static pacer_err reproduce(buf *out, const json_t *run) {
    pacer_err rc = buf_append_str(out, "\n## How to reproduce\n\nThe command that made this run (paths shown as <model>, "
                                       "<binary>, <suite>, <root>, <results>):\n\n```\n");
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(json_object_get(run, "provenance"), "command"), i, a) {
        const char *s = json_string_value(a) ? json_string_value(a) : "";
        bool plain = s[0] && !strpbrk(s, " \t\n'\"\\$`*?&;|<>()");
        bool placeholder = s[0] == '<' && s[strlen(s) - 1] == '>' && !strpbrk(s, " \t\n'");
        if (!rc) rc = buf_appendf(out, plain || placeholder ? "%s%s" : "%s'%s'", i ? " " : "", s);
    }
    if (!rc)
        rc = buf_append_str(out, "\n```\n\nThe same binary (sha256 above), model and suite make a comparable run; `pacer lab run "
                                 "--resume --output DIR` continues this one. `pacer lab summarize DIR` regenerates report.json, "
                                 "summary.md, the plots and the gallery from the saved samples without inference.\n");
    return rc;
}

pacer_err lab_readme_markdown(buf *out, const json_t *report) {
    const json_t *run = json_object_get(report, "run");
    pacer_err rc = buf_appendf(out, "# Lab run %s\n\n", lab_str(run, "created_utc"));
    if (!rc) rc = what_was_run(out, run);
    if (!rc) rc = buf_append_str(out, "\n## Where\n\n");
    if (!rc) rc = lab_summary_hardware(out, report);
    if (!rc) rc = buf_append_char(out, '\n');
    if (!rc) rc = notes(out, run);
    if (!rc) rc = lab_summary_table(out, report, "decode_tok_s", "Headline: decode tok/s (median (least-greatest) n=samples)");
    if (!rc) rc = buf_append_str(out, "\nAll metrics: [summary.md](summary.md); every answer and drawing: "
                                      "[gallery/index.html](gallery/index.html); the whole: report.json.\n");
    if (!rc) rc = reproduce(out, run);
    return rc;
}
