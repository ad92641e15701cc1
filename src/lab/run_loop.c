/* run_loop.c - the samples of a lab run in plan order, each written as soon as it is done
 * (answer, SVG, record, then run.json and report.json), the run's state kept current so
 * that a kill at any moment leaves a directory --resume accepts; then the archive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "lab/archive.h"
#include "lab/report.h"
#include "lab/results.h"
#include "lab/run_internal.h"
#include "lab/sample.h"

static void set_state(lab_ctx *c, const char *status, const char *reason, const char *running) {
    char utc[21];
    clock_utc_iso8601(utc);
    json_object_set_new(c->run, "state", json_pack("{s:s,s:s?,s:s?,s:s}", "status", status, "reason", reason, "running",
                                                   running, "updated_utc", utc));
}

static pacer_err save_run(lab_ctx *c) { return lab_results_write_json(c->o->output, LAB_RUN_FILE, c->run, false, c->err, c->err_len); }

/* report.json from run.json and every record on disk. */
static pacer_err save_report(lab_ctx *c) {
    const lab_plan *p = &c->res->plan;
    lab_record *recs = calloc(p->n ? p->n : 1, sizeof *recs);
    if (!recs) return PACER_ERR_NOMEM;
    size_t k = 0;
    char why[LAB_REASON_MAX];
    for (size_t i = 0; i < p->n; i++)
        if (lab_results_read_sample(c->o->output, p->slots[i].id, &recs[k], why, sizeof why) == PACER_OK) k++;
    json_t *rep = lab_report_build(c->run, recs, k);
    for (size_t i = 0; i < k; i++) lab_record_free(&recs[i]);
    free(recs);
    if (!rep) return PACER_ERR_NOMEM;
    pacer_err rc = lab_results_write_json(c->o->output, LAB_REPORT_FILE, rep, true, c->err, c->err_len);
    json_decref(c->res->report);
    c->res->report = rep;
    return rc;
}

/* The record of an earlier run of a sample, for the new record's "earlier" list: its own
 * earlier runs first, then itself without that list. */
static json_t *earlier_of(const lab_record *old) {
    json_t *list = old->earlier ? json_deep_copy(old->earlier) : json_array();
    json_t *self = lab_record_to_json(old);
    json_object_del(self, "earlier");
    json_array_append_new(list, self);
    return list;
}

static void fill_job(lab_ctx *c, const lab_slot *sl, lab_sample_job *job) {
    lab_run_result *r = c->res;
    memset(job, 0, sizeof *job);
    job->suite = &r->suite;
    job->slot = sl;
    job->cap = r->caps[sl->workload];
    job->engine = &c->engines[sl->config];
    job->store_path = r->stores[sl->config].path;
    job->power = &c->power;
    job->has_memory_limit = c->has_memory_limit;
    job->memory_limit_bytes = c->memory_limit;
    job->cancel = c->o->cancel;
}

/* Runs one slot unless its record stands. Returns the outcome that ends the run, or
 * LAB_OUTCOME_COMPLETE to go on. */
static lab_outcome run_slot(lab_ctx *c, const lab_slot *sl) {
    lab_run_result *r = c->res;
    lab_record old;
    pacer_err rc = lab_results_read_sample(c->o->output, sl->id, &old, c->err, c->err_len);
    if (rc && rc != PACER_ERR_NOT_FOUND) return LAB_OUTCOME_ERROR;
    bool have = rc == PACER_OK;
    if (have && !lab_record_needs_rerun(&old, r->caps[sl->workload])) {
        lab_record_free(&old);
        lab_event ev = {.kind = LAB_EVENT_SAMPLE_SKIP, .id = sl->id, .index = (size_t)sl->index, .total = r->plan.n};
        lab_emit(c, &ev);
        return LAB_OUTCOME_COMPLETE;
    }
    json_t *earlier = have ? earlier_of(&old) : NULL;
    int64_t attempt = have ? old.attempt + 1 : 1;
    if (have) lab_record_free(&old);
    set_state(c, "running", NULL, sl->id);
    lab_outcome out = LAB_OUTCOME_ERROR;
    lab_sample_result s;
    memset(&s, 0, sizeof s);
    if (save_run(c)) goto done;
    lab_event ev = {.kind = LAB_EVENT_SAMPLE_START, .id = sl->id, .index = (size_t)sl->index, .total = r->plan.n};
    lab_emit(c, &ev);
    lab_sample_job job;
    fill_job(c, sl, &job);
    lab_sample_run(&job, &s);
    if (s.cancelled) {
        set_state(c, "cancelled", "stopped by the user; the sample in flight runs again on --resume", NULL);
        snprintf(r->stop_reason, sizeof r->stop_reason, "cancelled during %s", sl->id);
        out = save_run(c) || save_report(c) ? LAB_OUTCOME_ERROR : LAB_OUTCOME_CANCELLED;
        goto done;
    }
    s.rec.attempt = attempt;
    if (lab_results_write_sample(c->o->output, &s, earlier, c->err, c->err_len)) goto done;
    set_state(c, "running", NULL, NULL);
    if (save_run(c) || save_report(c)) goto done;
    ev = (lab_event){.kind = LAB_EVENT_SAMPLE_DONE, .id = sl->id, .rec = &s.rec, .text = c->engines[sl->config].m.log_path, .index = (size_t)sl->index,
                     .total = r->plan.n};
    lab_emit(c, &ev);
    out = LAB_OUTCOME_COMPLETE;
    if (s.stop_suite) {
        snprintf(r->stop_reason, sizeof r->stop_reason, "%.100s: %.150s", sl->id, s.rec.error[0] ? s.rec.error : s.rec.validity_reason);
        set_state(c, "stopped", r->stop_reason, NULL);
        out = save_run(c) ? LAB_OUTCOME_ERROR : LAB_OUTCOME_STOPPED;
    }
done:
    json_decref(earlier);
    lab_sample_result_free(&s);
    return out;
}

static pacer_err archive(lab_ctx *c) {
    lab_run_result *r = c->res;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", c->o->output);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
    snprintf(r->zip, sizeof r->zip, "%s.zip", dir);
    size_t files = 0;
    pacer_err rc = lab_archive_write(dir, r->zip, &files, c->err, c->err_len);
    if (rc) {
        r->zip[0] = '\0';
        return rc;
    }
    lab_event ev = {.kind = LAB_EVENT_ARCHIVED, .text = r->zip, .index = files};
    lab_emit(c, &ev);
    return PACER_OK;
}

lab_outcome lab_run_samples(lab_ctx *c) {
    lab_run_result *r = c->res;
    for (size_t i = 0; i < r->plan.n; i++) {
        lab_outcome out = run_slot(c, &r->plan.slots[i]);
        if (out != LAB_OUTCOME_COMPLETE) return out;
    }
    set_state(c, "complete", NULL, NULL);
    if (save_run(c) || save_report(c)) return LAB_OUTCOME_ERROR;
    if ((c->o->archive || r->preset_archive) && archive(c)) return LAB_OUTCOME_ERROR;
    return LAB_OUTCOME_COMPLETE;
}
