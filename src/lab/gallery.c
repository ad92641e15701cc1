/* gallery.c - gallery/index.html (gallery.h). */
#include "lab/gallery.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "board/html.h"
#include "lab/plot.h"
#include "lab/summary.h"
#include "lab/svg.h"

#define ANSWER_MAX (64u << 20)

static const char gallery_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' file:; "
    "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<style>body{font:15px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:70rem;padding:0 1rem;color:#1d232b;"
    "background:#fbfbfa}h2{border-bottom:2px solid #e2e5e9;margin-top:2.5rem}article{background:#fff;border:1px solid "
    "#e2e5e9;border-radius:6px;padding:.6rem 1rem;margin:.8rem 0}pre{white-space:pre-wrap;word-break:break-word;max-height:"
    "24rem;overflow:auto;background:#f4f5f7;padding:.6rem;margin:.4rem 0}.figs{color:#5b6573;font-size:.9rem;margin:.2rem 0}"
    ".bad{color:#c2255c;font-weight:600}.ok{color:#2b8a3e;font-weight:600}img{max-width:100%;background:#fff;border:1px "
    "solid #e2e5e9}img.drawing{width:20rem;height:auto}.plots img{display:block;margin:.6rem 0}</style>\n";


static pacer_err figures(buf *out, const json_t *s) {
    pacer_err rc = html_appendf(out, "<p class=\"figs\">round %lld, finish %s, %s", (long long)json_integer_value(json_object_get(s, "round")),
                                lab_str(s, "finish"), lab_str(s, "validity"));
    if (!rc && json_is_string(json_object_get(s, "validity_reason"))) rc = html_appendf(out, " (%s)", lab_str(s, "validity_reason"));
    if (!rc && json_is_integer(json_object_get(s, "decode_tokens")))
        rc = html_appendf(out, "; %lld prompt tokens, %lld answer tokens",
                          (long long)json_integer_value(json_object_get(s, "prefill_tokens")),
                          (long long)json_integer_value(json_object_get(s, "decode_tokens")));
    if (!rc && json_is_number(json_object_get(s, "prefill_tok_s")))
        rc = html_appendf(out, "; prefill %.1f tok/s", json_number_value(json_object_get(s, "prefill_tok_s")));
    if (!rc && json_is_number(json_object_get(s, "decode_tok_s")))
        rc = html_appendf(out, "; decode %.1f tok/s", json_number_value(json_object_get(s, "decode_tok_s")));
    if (!rc) rc = html_appendf(out, "; completed in %.2f s", (double)json_integer_value(json_object_get(s, "completion_ns")) / 1e9);
    if (!rc && json_is_string(json_object_get(s, "error"))) rc = html_appendf(out, "; error: %s", lab_str(s, "error"));
    return rc ? rc : buf_append_str(out, "</p>\n");
}

/* The drawing of an svg sample through <img>, with its verdict (the record's and a fresh
 * check of the file: both must say valid). */
static pacer_err drawing(buf *out, const char *dir, const json_t *svg) {
    if (!json_is_object(svg)) return PACER_OK;
    const char *file = lab_str(svg, "file");
    if (!*file) return html_appendf(out, "<p class=\"bad\">no drawing: %s</p>\n", lab_str(svg, "reason"));
    char path[PATH_MAX];
    buf b;
    buf_init(&b, LAB_SVG_MAX_BYTES);
    lab_svg chk = {.valid = false};
    snprintf(chk.reason, sizeof chk.reason, "the file cannot be read");
    if (snprintf(path, sizeof path, "%s/%s", dir, file) < (int)sizeof path && file_read_all(path, &b) == PACER_OK)
        lab_svg_check(b.data ? b.data : "", b.len, &chk);
    buf_free(&b);
    bool ok = json_is_true(json_object_get(svg, "valid")) && chk.valid;
    const char *why = !json_is_true(json_object_get(svg, "valid")) ? lab_str(svg, "reason") : chk.reason;
    pacer_err rc = html_appendf(out, "<img class=\"drawing\" src=\"../%s\" alt=\"the drawing %s\">\n", file, file);
    if (!rc) rc = ok ? buf_append_str(out, "<p class=\"ok\">valid SVG</p>\n") : html_appendf(out, "<p class=\"bad\">invalid SVG: %s</p>\n", why);
    return rc;
}

static pacer_err sample(buf *out, const char *dir, const json_t *s, char *err, size_t err_len) {
    pacer_err rc = html_appendf(out, "<article id=\"%s\"><h4>%s</h4>\n", lab_str(s, "id"), lab_str(s, "id"));
    if (!rc) rc = figures(out, s);
    if (!rc) rc = drawing(out, dir, json_object_get(s, "svg"));
    char path[PATH_MAX];
    buf a;
    buf_init(&a, ANSWER_MAX);
    if (!rc && (snprintf(path, sizeof path, "%s/%s", dir, lab_str(s, "answer_file")) >= (int)sizeof path ||
                file_read_all(path, &a) != PACER_OK)) {
        snprintf(err, err_len, "cannot read the answer of %s (%s)", lab_str(s, "id"), lab_str(s, "answer_file"));
        rc = PACER_ERR_IO;
    }
    if (!rc) rc = buf_append_str(out, "<pre>");
    if (!rc) rc = html_escape_n(out, a.data ? a.data : "", a.len);
    if (!rc) rc = buf_append_str(out, "</pre></article>\n");
    buf_free(&a);
    return rc;
}

pacer_err lab_gallery_html(buf *out, const char *dir, const json_t *report, char *err, size_t err_len) {
    const json_t *run = json_object_get(report, "run");
    const json_t *configs = json_object_get(run, "configurations"), *samples = json_object_get(report, "samples");
    const json_t *cases = json_object_get(json_object_get(json_object_get(run, "signature"), "selections"), "cases");
    pacer_err rc = buf_append_str(out, gallery_head);
    if (!rc) rc = html_appendf(out, "<title>lab run %s</title></head><body>\n<h1>Lab run %s</h1>\n<p>", lab_str(run, "created_utc"),
                               lab_str(run, "created_utc"));
    buf hw;
    buf_init(&hw, 4096);
    if (!rc && !(rc = lab_summary_hardware(&hw, report))) rc = html_escape(out, hw.data);
    buf_free(&hw);
    if (!rc)
        rc = html_appendf(out, "</p>\n<section class=\"plots\"><h2>Plots</h2><img src=\"../%s\" alt=\"decode tok/s per "
                               "configuration\"><img src=\"../%s\" alt=\"answer length against completion time\"></section>\n",
                          LAB_PLOT_DECODE, LAB_PLOT_LENGTH_TIME);
    size_t wi, ci, si;
    json_t *w, *c, *s;
    json_array_foreach(cases, wi, w) {
        const char *wn = json_string_value(w) ? json_string_value(w) : "";
        if (!rc) rc = html_appendf(out, "<section><h2>%s</h2>\n", wn);
        json_array_foreach(configs, ci, c) {
            if (!rc) rc = html_appendf(out, "<h3>%s / %s</h3>\n", wn, lab_str(c, "name"));
            json_array_foreach(samples, si, s) if (!rc && !strcmp(lab_str(s, "workload"), wn) && !strcmp(lab_str(s, "config"), lab_str(c, "name")))
                rc = sample(out, dir, s, err, err_len);
        }
        if (!rc) rc = buf_append_str(out, "</section>\n");
    }
    return rc ? rc : buf_append_str(out, "</body></html>\n");
}
