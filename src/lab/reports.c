/* reports.c - regenerating a lab run's reports from its files (reports.h). */
#include "lab/reports.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "lab/gallery.h"
#include "lab/plot.h"
#include "lab/readme.h"
#include "lab/record.h"
#include "lab/report.h"
#include "lab/results.h"
#include "lab/summary.h"

#define PAGE_MAX (512u << 20)

static bool listed(const json_t *arr, const char *s) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_string_value(v) && !strcmp(json_string_value(v), s)) return true;
    return false;
}

/* The record against its plan entry and the run's signature. */
static bool record_agrees(const lab_record *r, const char *id, const json_t *sig, char *why, size_t n) {
    const json_t *sel = json_object_get(sig, "selections");
    char made[LAB_ID_MAX + 64];
    snprintf(made, sizeof made, "r%lld-%s-%s", (long long)r->round, r->workload, r->config);
    const json_t *cap = json_object_get(json_object_get(sig, "caps"), r->workload);
    if (strcmp(r->id, id) || strcmp(made, id)) snprintf(why, n, "its fields make the id %s", made);
    else if (!listed(json_object_get(sel, "configs"), r->config)) snprintf(why, n, "configuration %s is not in the run's selections", r->config);
    else if (!listed(json_object_get(sel, "cases"), r->workload)) snprintf(why, n, "workload %s is not in the run's selections", r->workload);
    else if (!json_is_integer(cap) || r->cap > json_integer_value(cap)) snprintf(why, n, "its cap %lld is above the run's", (long long)r->cap);
    else return true;
    return false;
}

pacer_err lab_reports_load(const char *dir, json_t **report, char *err, size_t err_len) {
    json_t *run = NULL;
    *report = NULL;
    pacer_err rc = lab_results_read_json(dir, LAB_RUN_FILE, &run, err, err_len);
    if (rc) return rc;
    const json_t *plan = json_object_get(run, "plan"), *sig = json_object_get(run, "signature");
    if (!json_is_array(plan) || !json_is_object(sig) || strcmp(json_string_value(json_object_get(run, "format")) ? json_string_value(json_object_get(run, "format")) : "", LAB_FORMAT)) {
        snprintf(err, err_len, "%s/%s is not a lab run", dir, LAB_RUN_FILE);
        json_decref(run);
        return PACER_ERR_FORMAT;
    }
    lab_record *recs = calloc(json_array_size(plan) + 1, sizeof *recs);
    size_t k = 0, i;
    json_t *id;
    rc = recs ? PACER_OK : PACER_ERR_NOMEM;
    json_array_foreach(plan, i, id) {
        if (rc) break;
        const char *sid = json_string_value(id) ? json_string_value(id) : "";
        char why[LAB_REASON_MAX + 64] = "";
        pacer_err r = lab_results_read_sample(dir, sid, &recs[k], why, sizeof why);
        if (r == PACER_ERR_NOT_FOUND) continue;
        if (r == PACER_OK && record_agrees(&recs[k], sid, sig, why, sizeof why)) {
            k++;
            continue;
        }
        if (r == PACER_OK) lab_record_free(&recs[k]);
        snprintf(err, err_len, "sample %s fails its own checks: %s", sid, why);
        rc = r == PACER_OK ? PACER_ERR_FORMAT : r;
    }
    if (!rc && !(*report = lab_report_build(run, recs, k))) rc = PACER_ERR_NOMEM;
    for (i = 0; recs && i < k; i++) lab_record_free(&recs[i]);
    free(recs);
    json_decref(run);
    return rc;
}

static pacer_err write_buf(const char *dir, const char *name, buf *b, char *err, size_t err_len) {
    char path[PATH_MAX];
    pacer_err rc = snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ? PACER_ERR_TOO_BIG : PACER_OK;
    if (!rc) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        rc = dir_create_all(path, 0755);
        *slash = '/';
    }
    if (!rc) rc = file_write_atomic(path, b->data ? b->data : "", b->len, 0644);
    if (rc) snprintf(err, err_len, "cannot write %s: %s", path, pacer_strerror(rc));
    buf_reset(b);
    return rc;
}

pacer_err lab_reports_write(const char *dir, json_t **out, char *err, size_t err_len) {
    json_t *rep = NULL;
    pacer_err rc = lab_reports_load(dir, &rep, err, err_len);
    if (!rc) rc = lab_results_write_json(dir, LAB_REPORT_FILE, rep, true, err, err_len);
    buf b;
    buf_init(&b, PAGE_MAX);
    if (!rc && (rc = lab_summary_markdown(&b, rep))) snprintf(err, err_len, "cannot build %s", LAB_SUMMARY_FILE);
    if (!rc) rc = write_buf(dir, LAB_SUMMARY_FILE, &b, err, err_len);
    if (!rc && (rc = lab_plot_decode(&b, rep))) snprintf(err, err_len, "cannot draw %s", LAB_PLOT_DECODE);
    if (!rc) rc = write_buf(dir, LAB_PLOT_DECODE, &b, err, err_len);
    if (!rc && (rc = lab_plot_length_time(&b, rep))) snprintf(err, err_len, "cannot draw %s", LAB_PLOT_LENGTH_TIME);
    if (!rc) rc = write_buf(dir, LAB_PLOT_LENGTH_TIME, &b, err, err_len);
    if (!rc) rc = lab_gallery_html(&b, dir, rep, err, err_len);
    if (!rc) rc = write_buf(dir, LAB_GALLERY_FILE, &b, err, err_len);
    buf_free(&b);
    if (out && !rc) *out = rep;
    else json_decref(rep);
    return rc;
}

pacer_err lab_reports_write_readme(const char *dir, char *err, size_t err_len) {
    json_t *rep = NULL;
    pacer_err rc = lab_reports_load(dir, &rep, err, err_len);
    buf b;
    buf_init(&b, PAGE_MAX);
    if (!rc && (rc = lab_readme_markdown(&b, rep))) snprintf(err, err_len, "cannot build %s", LAB_README_FILE);
    if (!rc) rc = write_buf(dir, LAB_README_FILE, &b, err, err_len);
    buf_free(&b);
    json_decref(rep);
    return rc;
}
