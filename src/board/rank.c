/* rank.c - standings, counters, trophies and honours over an array of rank_row (see
 * rank.h for the rules). Contributors are grouped by sorting row references by profile id;
 * every value is compared as the double it is. */
#include "board/rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const rank_trophy rank_trophies[] = {
    {"bronze", "Bronze", RANK_MEASURE_RUNS, 1, "1 published run"},
    {"silver", "Silver", RANK_MEASURE_RUNS, 5, "5 published runs"},
    {"gold", "Gold", RANK_MEASURE_RUNS, 10, "10 published runs"},
    {"platinum", "Platinum", RANK_MEASURE_RUNS, 100, "100 published runs"},
    {"model-explorer", "Model explorer", RANK_MEASURE_MODELS, 3, "runs of 3 different models"},
    {"model-cartographer", "Model cartographer", RANK_MEASURE_MODELS, 10, "runs of 10 different models"},
    {"hardware-explorer", "Hardware explorer", RANK_MEASURE_HARDWARE, 2, "runs on 2 different machines"},
    {"hardware-fleet", "Hardware fleet", RANK_MEASURE_HARDWARE, 5, "runs on 5 different machines"},
};
const size_t rank_trophy_count = sizeof rank_trophies / sizeof rank_trophies[0];

static bool empty(const char *s) { return !s || !*s; }
static bool str_eq(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }
static int str_cmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

bool rank_row_selected(const rank_row *r, const rank_filter *f) {
    if (!r->published || !str_eq(r->suite_id, f->suite_id) || !str_eq(r->suite_digest, f->suite_digest)) return false;
    if (!empty(f->model_id) && !str_eq(r->model_id, f->model_id)) return false;
    if (!empty(f->platform) && !str_eq(r->platform, f->platform)) return false;
    if (!empty(f->hardware) && !str_eq(r->hardware, f->hardware)) return false;
    return true;
}

static bool positive(double v) { return isfinite(v) && v > 0; }

bool rank_row_has_speed(const rank_row *r) { return r->complete && r->has_chat_greedy && positive(r->chat_greedy_tok_s); }

bool rank_row_params(const rank_row *r, bool active, int64_t *params) {
    int64_t p = 0;
    if (active && r->has_params_active) p = r->params_active;
    else if (r->has_params_total) p = r->params_total;
    else return false;
    if (p <= 0) return false;
    *params = p;
    return true;
}

/* The value row `r` contributes to `which`; false when it contributes none. */
static bool row_value(const rank_row *r, rank_board which, double *v) {
    int64_t params;
    switch (which) {
    case RANK_MOST_BENCHMARKS: *v = 1; return true;
    case RANK_FASTEST:
        if (!rank_row_has_speed(r)) return false;
        *v = r->chat_greedy_tok_s;
        return true;
    case RANK_SIZE_TOTAL:
    case RANK_SIZE_ACTIVE:
        if (!rank_row_has_speed(r) || !rank_row_params(r, which == RANK_SIZE_ACTIVE, &params)) return false;
        *v = (double)params / 1e9 * r->chat_greedy_tok_s;
        return isfinite(*v);
    case RANK_SPEED_RECORDS:
        if (!r->complete || !r->has_best_tok_s || !positive(r->best_tok_s)) return false;
        *v = r->best_tok_s;
        return true;
    default: return false;
    }
}

/* A selected row, for sorting. */
typedef struct ref {
    const rank_row *r;
    size_t idx;
} ref;

static int ref_by_profile(const void *a, const void *b) {
    const ref *x = a, *y = b;
    int c = str_cmp(x->r->profile_id, y->r->profile_id);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int entry_order(const void *a, const void *b) {
    const rank_entry *x = a, *y = b;
    if (x->value != y->value) return x->value > y->value ? -1 : 1;
    int c = str_cmp(x->display_name, y->display_name);
    if (!c) c = str_cmp(x->profile_id, y->profile_id);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

/* The selected rows as refs (owned by the caller); *n_out their count. */
static pacer_err select_rows(const rank_row *rows, size_t n, const rank_filter *f, ref **out, size_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (empty(f->suite_id) || empty(f->suite_digest)) return PACER_ERR_ARG;
    ref *refs = malloc((n ? n : 1) * sizeof *refs);
    if (!refs) return PACER_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (rank_row_selected(&rows[i], f)) refs[k++] = (ref){&rows[i], i};
    *out = refs;
    *n_out = k;
    return PACER_OK;
}

/* One entry per contributor: the count of selected rows and the best value among them. */
static size_t per_contributor(ref *refs, size_t k, rank_board which, rank_entry *items) {
    qsort(refs, k, sizeof *refs, ref_by_profile);
    size_t m = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i;
        rank_entry e = {.profile_id = refs[i].r->profile_id, .display_name = refs[i].r->display_name};
        bool has = false;
        int64_t newest = 0;
        for (; j < k && str_eq(refs[j].r->profile_id, e.profile_id); j++) {
            const rank_row *r = refs[j].r;
            e.count++;
            double v;
            if (which == RANK_MOST_BENCHMARKS) {
                /* the newest row links the contributor's latest run */
                if (!has || r->created_s >= newest) {
                    newest = r->created_s;
                    e.row = refs[j].idx;
                }
                has = true;
            } else if (row_value(r, which, &v) && (!has || v > e.value)) {
                e.value = v;
                e.row = refs[j].idx;
                has = true;
            }
        }
        if (which == RANK_MOST_BENCHMARKS) e.value = (double)e.count;
        if (has) items[m++] = e;
        i = j;
    }
    return m;
}

pacer_err rank_compute(const rank_row *rows, size_t n, const rank_filter *f, rank_board which, rank_list *out) {
    out->items = NULL;
    out->n = 0;
    if ((unsigned)which >= RANK_BOARD__COUNT) return PACER_ERR_ARG;
    ref *refs;
    size_t k;
    pacer_err rc = select_rows(rows, n, f, &refs, &k);
    if (rc) return rc;
    rank_entry *items = calloc(k ? k : 1, sizeof *items);
    if (!items) { free(refs); return PACER_ERR_NOMEM; }
    size_t m = 0;
    if (which == RANK_SPEED_RECORDS) {
        for (size_t i = 0; i < k; i++) {
            double v;
            if (!row_value(refs[i].r, which, &v)) continue;
            items[m++] = (rank_entry){.profile_id = refs[i].r->profile_id, .display_name = refs[i].r->display_name,
                                      .row = refs[i].idx, .value = v, .count = 1};
        }
    } else {
        m = per_contributor(refs, k, which, items);
    }
    free(refs);
    qsort(items, m, sizeof *items, entry_order);
    for (size_t i = 0; i < m; i++)
        items[i].place = i > 0 && items[i].value == items[i - 1].value ? items[i - 1].place : (int)i + 1;
    out->items = items;
    out->n = m;
    return PACER_OK;
}

void rank_list_free(rank_list *l) {
    if (!l) return;
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Distinct non-empty strings among v[0..n) (sorts v). */
static int64_t distinct(const char **v, size_t n) {
    qsort(v, n, sizeof *v, cmp_str);
    int64_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (*v[i] && (i == 0 || strcmp(v[i], v[i - 1]) != 0)) d++;
    return d;
}

/* Counts runs and distinct contributors, models and hardware of refs[0..k). */
static pacer_err count_refs(const ref *refs, size_t k, rank_counts *out) {
    *out = (rank_counts){.runs = (int64_t)k};
    const char **v = malloc((k ? k : 1) * sizeof *v);
    if (!v) return PACER_ERR_NOMEM;
    for (size_t i = 0; i < k; i++) v[i] = refs[i].r->profile_id ? refs[i].r->profile_id : "";
    out->contributors = distinct(v, k);
    for (size_t i = 0; i < k; i++) v[i] = refs[i].r->model_id ? refs[i].r->model_id : "";
    out->models = distinct(v, k);
    for (size_t i = 0; i < k; i++) v[i] = refs[i].r->hardware ? refs[i].r->hardware : "";
    out->hardware = distinct(v, k);
    free(v);
    return PACER_OK;
}

pacer_err rank_count(const rank_row *rows, size_t n, const rank_filter *f, rank_counts *out) {
    *out = (rank_counts){0};
    ref *refs;
    size_t k;
    pacer_err rc = select_rows(rows, n, f, &refs, &k);
    if (!rc) rc = count_refs(refs, k, out);
    free(refs);
    return rc;
}

/* True when the first place of `which` over the whole suite of `f` includes `profile_id`. */
static pacer_err leads(const rank_row *rows, size_t n, const rank_filter *f, rank_board which, const char *profile_id,
                       bool *out) {
    rank_filter suite_only = {.suite_id = f->suite_id, .suite_digest = f->suite_digest};
    rank_list l;
    *out = false;
    pacer_err rc = rank_compute(rows, n, &suite_only, which, &l);
    if (rc) return rc;
    for (size_t i = 0; i < l.n && l.items[i].place == 1; i++)
        if (str_eq(l.items[i].profile_id, profile_id)) *out = true;
    rank_list_free(&l);
    return PACER_OK;
}

pacer_err rank_profile_compute(const rank_row *rows, size_t n, const rank_filter *f, const char *profile_id,
                               rank_profile *out) {
    *out = (rank_profile){0};
    ref *refs;
    size_t k;
    pacer_err rc = select_rows(rows, n, f, &refs, &k);
    if (rc) return rc;
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (str_eq(refs[i].r->profile_id, profile_id)) refs[m++] = refs[i];
    rank_counts c;
    rc = count_refs(refs, m, &c);
    for (size_t i = 0; i < m && !rc; i++) {
        const rank_row *r = refs[i].r;
        if (rank_row_has_speed(r) && (!out->has_best || r->chat_greedy_tok_s > out->best_tok_s)) {
            out->has_best = true;
            out->best_tok_s = r->chat_greedy_tok_s;
            out->best_row = refs[i].idx;
        }
    }
    free(refs);
    if (rc) return rc;
    out->runs = c.runs;
    out->models = c.models;
    out->hardware = c.hardware;
    for (size_t t = 0; t < rank_trophy_count && t < sizeof out->earned; t++) {
        const rank_trophy *tr = &rank_trophies[t];
        int64_t have = tr->measure == RANK_MEASURE_RUNS ? c.runs : tr->measure == RANK_MEASURE_MODELS ? c.models : c.hardware;
        out->earned[t] = have >= tr->need;
        if (tr->measure != RANK_MEASURE_RUNS) continue;
        if (out->earned[t]) out->prev_milestone = tr->need;
        else if (!out->next_milestone) out->next_milestone = tr->need;
    }
    rc = leads(rows, n, f, RANK_MOST_BENCHMARKS, profile_id, &out->top_contributor);
    if (!rc) rc = leads(rows, n, f, RANK_FASTEST, profile_id, &out->speed_leader);
    return rc;
}
