/* store_submissions.c - submissions in the board's store: the idempotent, quota-checked
 * insert; states; the pending-checkpoint queue; the queries the pages are built on. One
 * column list (SUB_COLS) and one row reader serve every SELECT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/store.h"
#include "board/store_internal.h"

/* Every SELECT of submissions returns these columns in this order (sub_from_row reads them);
 * the last one is the receipt text, or NULL when $R (a parameter) is 0. */
#define SUB_COLS                                                                                                    \
    "s.id, s.profile_id, p.display_name, s.token_name, s.canonical_hash, s.state, s.reasons, s.suite_id, "       \
    "s.suite_digest, s.suite_version, s.rule_version, s.standard, s.complete, s.mode, s.model_id, s.revision, "   \
    "s.backend, s.platform, s.gpu_name, s.gpu_count, s.cpu_model, s.params_total, s.params_active, "             \
    "s.chat_greedy_tok_s, s.chat_greedy_first_ms, s.best_tok_s, s.created_s, s.updated_s, s.lookup_attempts, "    \
    "s.next_lookup_s, "
#define SUB_N_COLS 31
#define SUB_FROM " FROM submissions s JOIN profiles p ON p.id = s.profile_id "

typedef struct sub_rows {
    store_submission *one;   /* a single row wanted: filled here */
    store_submission_list *list;
    size_t cap, limit;       /* list: grows up to limit + 1 rows (the extra one says "more") */
    bool found;
} sub_rows;

/* Makes room for one more item in a list of `n` items of `size` bytes (capacity *cap). */
static pacer_err list_grow(void **items, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return PACER_OK;
    size_t want = *cap ? *cap * 2 : 16;
    void *p = realloc(*items, want * size);
    if (!p) return PACER_ERR_NOMEM;
    *items = p;
    *cap = want;
    return PACER_OK;
}

static pacer_err sub_from_row(store_submission *s, const store_value *c) {
    memset(s, 0, sizeof *s);
    store_copy_text(s->id, sizeof s->id, &c[0]);
    store_copy_text(s->profile_id, sizeof s->profile_id, &c[1]);
    store_copy_text(s->display_name, sizeof s->display_name, &c[2]);
    store_copy_text(s->token_name, sizeof s->token_name, &c[3]);
    store_copy_text(s->canonical_hash, sizeof s->canonical_hash, &c[4]);
    if (c[5].t != SV_TEXT || !board_state_parse(c[5].s, &s->state)) return PACER_ERR_FORMAT;
    store_copy_text(s->reasons, sizeof s->reasons, &c[6]);
    store_copy_text(s->suite_id, sizeof s->suite_id, &c[7]);
    store_copy_text(s->suite_digest, sizeof s->suite_digest, &c[8]);
    s->suite_version = (int)c[9].i;
    s->rule_version = (int)c[10].i;
    s->standard = c[11].i != 0;
    s->complete = c[12].i != 0;
    store_copy_text(s->mode, sizeof s->mode, &c[13]);
    store_copy_text(s->model_id, sizeof s->model_id, &c[14]);
    store_copy_text(s->revision, sizeof s->revision, &c[15]);
    store_copy_text(s->backend, sizeof s->backend, &c[16]);
    store_copy_text(s->platform, sizeof s->platform, &c[17]);
    store_copy_text(s->gpu_name, sizeof s->gpu_name, &c[18]);
    s->gpu_count = (int)c[19].i;
    store_copy_text(s->cpu_model, sizeof s->cpu_model, &c[20]);
    s->has_params_total = c[21].t == SV_INT;
    s->params_total = c[21].i;
    s->has_params_active = c[22].t == SV_INT;
    s->params_active = c[22].i;
    s->has_chat_greedy = c[23].t == SV_REAL || c[23].t == SV_INT;
    s->chat_greedy_tok_s = c[23].t == SV_INT ? (double)c[23].i : c[23].d;
    s->chat_greedy_first_ms = c[24].t == SV_INT ? (double)c[24].i : c[24].d;
    s->has_best_tok_s = c[25].t == SV_REAL || c[25].t == SV_INT;
    s->best_tok_s = c[25].t == SV_INT ? (double)c[25].i : c[25].d;
    s->created_s = c[26].i;
    s->updated_s = c[27].i;
    s->lookup_attempts = (int)c[28].i;
    s->next_lookup_s = c[29].i;
    if (c[30].t == SV_TEXT && c[30].s && !(s->receipt = strdup(c[30].s))) return PACER_ERR_NOMEM;
    return PACER_OK;
}

static pacer_err row_sub(void *ud, const store_value *c, size_t n) {
    sub_rows *r = ud;
    if (n < SUB_N_COLS) return PACER_ERR_INTERNAL;
    if (r->one) {
        store_submission_clear(r->one);
        r->found = true;
        return sub_from_row(r->one, c);
    }
    store_submission_list *l = r->list;
    if (l->n >= r->limit) { /* the extra row: there is another page */
        l->more = true;
        return PACER_OK;
    }
    pacer_err rc = list_grow((void **)&l->items, &r->cap, l->n, sizeof *l->items);
    if (rc) return rc;
    rc = sub_from_row(&l->items[l->n], c);
    l->n++;
    return rc;
}

void store_submission_clear(store_submission *s) {
    if (!s) return;
    free(s->receipt);
    s->receipt = NULL;
}

void store_submission_list_free(store_submission_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) store_submission_clear(&l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static const char sql_sub_by_id[] = "SELECT " SUB_COLS "CASE WHEN $2 = 1 THEN s.receipt ELSE NULL END" SUB_FROM "WHERE s.id = $1";
static const char sql_sub_by_hash[] =
    "SELECT " SUB_COLS "CASE WHEN $2 = 1 THEN s.receipt ELSE NULL END" SUB_FROM "WHERE s.canonical_hash = $1";

static pacer_err sub_get_one(store_conn *c, const char *sql, const char *key, bool with_receipt, store_submission *out) {
    memset(out, 0, sizeof *out);
    sub_rows r = {.one = out};
    store_value p[] = {sv_text(key), sv_int(with_receipt ? 1 : 0)};
    pacer_err rc = store_run(c, sql, p, 2, row_sub, &r);
    if (rc) store_submission_clear(out);
    return rc ? rc : r.found ? PACER_OK : PACER_ERR_NOT_FOUND;
}

pacer_err store_submission_get(board_store *st, const char *id, bool with_receipt, store_submission *out) {
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = sub_get_one(&c, sql_sub_by_id, id, with_receipt, out);
    store_conn_put(&c);
    return rc;
}

pacer_err store_submission_by_hash(board_store *st, const char *canonical_hash, store_submission *out) {
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = sub_get_one(&c, sql_sub_by_hash, canonical_hash, false, out);
    store_conn_put(&c);
    return rc;
}

static pacer_err row_count(void *ud, const store_value *c, size_t n) {
    if (n > 0) *(int64_t *)ud = c[0].t == SV_INT ? c[0].i : 0;
    return PACER_OK;
}

static const char sql_quota[] = "SELECT COUNT(*) FROM submissions WHERE profile_id = $1 AND created_s > $2";

pacer_err store_quota_used(board_store *st, const char *profile_id, int64_t since_s, int *used) {
    int64_t n = 0;
    store_value p[] = {sv_text(profile_id), sv_int(since_s)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c, sql_quota, p, 2, row_count, &n);
    store_conn_put(&c);
    *used = (int)n;
    return rc;
}

static pacer_err sub_insert_row(store_conn *c, const store_submission *s) {
    store_value p[] = {
        sv_text(s->id), sv_text(s->profile_id), sv_text(s->token_name), sv_text(s->canonical_hash),
        sv_text(board_state_name(s->state)), sv_text(s->reasons[0] ? s->reasons : "[]"), sv_text(s->suite_id),
        sv_text(s->suite_digest), sv_int(s->suite_version), sv_int(s->rule_version), sv_int(s->standard),
        sv_int(s->complete), sv_text(s->mode), sv_text(s->model_id), sv_text(s->revision), sv_text(s->backend),
        sv_text(s->platform), sv_text(s->gpu_name), sv_int(s->gpu_count), sv_text(s->cpu_model),
        s->has_params_total ? sv_int(s->params_total) : sv_null(),
        s->has_params_active ? sv_int(s->params_active) : sv_null(),
        s->has_chat_greedy ? sv_real(s->chat_greedy_tok_s) : sv_null(),
        s->has_chat_greedy ? sv_real(s->chat_greedy_first_ms) : sv_null(),
        s->has_best_tok_s ? sv_real(s->best_tok_s) : sv_null(), sv_int(s->created_s), sv_int(s->updated_s),
        sv_int(s->lookup_attempts), sv_int(s->next_lookup_s), sv_text(s->receipt),
    };
    return store_run(c,
                     "INSERT INTO submissions (id, profile_id, token_name, canonical_hash, state, reasons, suite_id, "
                     "suite_digest, suite_version, rule_version, standard, complete, mode, model_id, revision, backend, "
                     "platform, gpu_name, gpu_count, cpu_model, params_total, params_active, chat_greedy_tok_s, "
                     "chat_greedy_first_ms, best_tok_s, created_s, updated_s, lookup_attempts, next_lookup_s, receipt) "
                     "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, "
                     "$20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)",
                     p, sizeof p / sizeof p[0], NULL, NULL);
}

/* The insert's transaction; the caller rolls back on error. */
static pacer_err sub_insert_txn(store_conn *c, store_submission *sub, int quota, int64_t now_s, store_insert_result *res) {
    /* the profile row is locked first (PostgreSQL: a row lock; SQLite: the write lock is
     * already held), so two uploads of one profile count the quota one after the other */
    int64_t seen = 0;
    store_value lp[] = {sv_text(sub->profile_id), sv_int(now_s)};
    pacer_err rc = store_run(c, "UPDATE profiles SET last_seen_s = $2 WHERE id = $1 RETURNING 1", lp, 2, row_count, &seen);
    if (rc) return rc;
    if (!seen) return PACER_ERR_NOT_FOUND;
    store_submission old;
    rc = sub_get_one(c, sql_sub_by_hash, sub->canonical_hash, false, &old);
    if (rc == PACER_OK) {
        *res = strcmp(old.profile_id, sub->profile_id) == 0 ? STORE_EXISTING : STORE_CONFLICT;
        if (*res == STORE_EXISTING) {
            char *receipt = sub->receipt;
            *sub = old;
            sub->receipt = receipt; /* the caller's text stays the caller's */
        }
        return PACER_OK;
    }
    if (rc != PACER_ERR_NOT_FOUND) return rc;
    int64_t used = 0;
    store_value qp[] = {sv_text(sub->profile_id), sv_int(now_s - 86400)};
    if ((rc = store_run(c, sql_quota, qp, 2, row_count, &used))) return rc;
    if (used >= quota) {
        *res = STORE_QUOTA;
        return PACER_OK;
    }
    if ((rc = store_random_id("s-", sub->id))) return rc;
    sub->created_s = sub->updated_s = now_s;
    *res = STORE_INSERTED;
    return sub_insert_row(c, sub);
}

pacer_err store_submission_insert(board_store *st, store_submission *sub, int quota, int64_t now_s,
                                  store_insert_result *result) {
    if (!sub->receipt) return PACER_ERR_ARG;
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = PACER_OK;
    /* a unique-key race (the same receipt inserted by a concurrent request, or an id
     * collision) is answered by running the transaction again, which then finds the row */
    for (int attempt = 0; attempt < 3; attempt++) {
        rc = store_begin(&c);
        if (!rc) rc = sub_insert_txn(&c, sub, quota, now_s, result);
        if (!rc) rc = store_commit(&c);
        if (rc) store_rollback(&c);
        if (rc != PACER_ERR_STATE) break;
    }
    store_conn_put(&c);
    return rc;
}

pacer_err store_submission_set_state(board_store *st, const char *id, unsigned from, board_state to,
                                     const char *profile_id, const char *reasons_json, int64_t now_s) {
    store_conn c;
    store_conn_get(st, &c);
    store_submission cur;
    memset(&cur, 0, sizeof cur);
    pacer_err rc = store_begin(&c);
    if (!rc) rc = sub_get_one(&c, sql_sub_by_id, id, false, &cur);
    if (!rc && profile_id && strcmp(profile_id, cur.profile_id) != 0) rc = PACER_ERR_NOT_FOUND;
    if (!rc && !(from & (1u << cur.state))) rc = PACER_ERR_STATE;
    if (!rc) {
        store_value p[] = {sv_text(id), sv_text(board_state_name(to)), sv_text(reasons_json), sv_int(now_s)};
        rc = store_run(&c,
                       "UPDATE submissions SET state = $2, reasons = COALESCE($3, reasons), updated_s = $4, "
                       "next_lookup_s = 0 WHERE id = $1",
                       p, 4, NULL, NULL);
    }
    if (!rc) rc = store_commit(&c);
    if (rc) store_rollback(&c);
    store_conn_put(&c);
    return rc;
}

pacer_err store_lookup_due(board_store *st, int64_t now_s, size_t limit, store_submission_list *out) {
    memset(out, 0, sizeof *out);
    sub_rows r = {.list = out, .limit = limit ? limit : 16};
    store_value p[] = {sv_text(board_state_name(BOARD_STATE_PENDING_CHECKPOINT)), sv_int(now_s),
                       sv_int((int64_t)r.limit + 1)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c,
                             "SELECT " SUB_COLS "NULL" SUB_FROM
                             "WHERE s.state = $1 AND s.next_lookup_s <= $2 ORDER BY s.next_lookup_s, s.id LIMIT $3",
                             p, 3, row_sub, &r);
    store_conn_put(&c);
    if (rc) store_submission_list_free(out);
    return rc;
}

pacer_err store_queue(board_store *st, unsigned states, size_t limit, store_submission_list *out) {
    memset(out, 0, sizeof *out);
    sub_rows r = {.list = out, .limit = limit ? limit : 100};
    store_value p[BOARD_STATE__COUNT + 1];
    for (int i = 0; i < BOARD_STATE__COUNT; i++)
        p[i] = states & (1u << i) ? sv_text(board_state_name((board_state)i)) : sv_null();
    p[BOARD_STATE__COUNT] = sv_int((int64_t)r.limit + 1);
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c,
                             "SELECT " SUB_COLS "NULL" SUB_FROM
                             "WHERE s.state IN ($1, $2, $3, $4, $5) ORDER BY s.created_s, s.id LIMIT $6",
                             p, BOARD_STATE__COUNT + 1, row_sub, &r);
    store_conn_put(&c);
    if (rc) store_submission_list_free(out);
    return rc;
}

pacer_err store_lookup_record(board_store *st, const store_submission *sub, int64_t now_s) {
    int64_t changed = 0;
    store_value p[] = {sv_text(sub->id),
                       sv_text(board_state_name(sub->state)),
                       sv_text(sub->reasons[0] ? sub->reasons : "[]"),
                       sub->has_params_total ? sv_int(sub->params_total) : sv_null(),
                       sub->has_params_active ? sv_int(sub->params_active) : sv_null(),
                       sv_int(sub->lookup_attempts),
                       sv_int(sub->next_lookup_s),
                       sv_int(now_s),
                       sv_text(board_state_name(BOARD_STATE_PENDING_CHECKPOINT))};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c,
                             "UPDATE submissions SET state = $2, reasons = $3, params_total = $4, params_active = $5, "
                             "lookup_attempts = $6, next_lookup_s = $7, updated_s = $8 "
                             "WHERE id = $1 AND state = $9 RETURNING 1",
                             p, sizeof p / sizeof p[0], row_count, &changed);
    store_conn_put(&c);
    return rc ? rc : changed ? PACER_OK : PACER_ERR_STATE;
}

/* ---- queries for the pages ---- */

/* The filter part shared by store_results and store_contributors: parameters $1..$13. */
#define QUERY_WHERE                                                                                                 \
    "WHERE s.suite_id = $1 AND s.suite_digest = $2 AND s.state IN ($3, $4, $5, $6, $7) "                           \
    "AND (CAST($8 AS TEXT) IS NULL OR s.model_id = $8) AND (CAST($9 AS TEXT) IS NULL OR s.platform = $9) "                                      \
    "AND (CAST($10 AS TEXT) IS NULL OR s.backend = $10) AND (CAST($11 AS TEXT) IS NULL OR s.gpu_name = $11) "                                    \
    "AND (CAST($12 AS TEXT) IS NULL OR s.profile_id = $12) AND ($13 = 0 OR s.complete = 1) "
#define QUERY_N_PARAMS 13

static const char *opt(const char *s) { return s && s[0] ? s : NULL; }

static pacer_err query_params(const store_query *q, store_value *p) {
    if (!q->suite_id || !q->suite_digest) return PACER_ERR_ARG;
    unsigned states = q->states ? q->states : 1u << BOARD_STATE_PUBLIC;
    p[0] = sv_text(q->suite_id);
    p[1] = sv_text(q->suite_digest);
    for (int i = 0; i < BOARD_STATE__COUNT; i++)
        p[2 + i] = states & (1u << i) ? sv_text(board_state_name((board_state)i)) : sv_null();
    p[7] = sv_text(opt(q->model_id));
    p[8] = sv_text(opt(q->platform));
    p[9] = sv_text(opt(q->backend));
    p[10] = sv_text(opt(q->gpu_name));
    p[11] = sv_text(opt(q->profile_id));
    p[12] = sv_int(q->complete_only ? 1 : 0);
    return PACER_OK;
}

pacer_err store_results(board_store *st, const store_query *q, store_submission_list *out) {
    memset(out, 0, sizeof *out);
    store_value p[QUERY_N_PARAMS + 4];
    pacer_err rc = query_params(q, p);
    if (rc) return rc;
    size_t limit = q->limit ? (q->limit > 1000 ? 1000 : q->limit) : 50;
    p[13] = sv_text(opt(q->before_id));
    p[14] = sv_int(q->before_s);
    p[15] = sv_int((int64_t)limit + 1);
    p[16] = sv_int(q->with_receipt ? 1 : 0);
    sub_rows r = {.list = out, .limit = limit};
    store_conn c;
    store_conn_get(st, &c);
    rc = store_run(&c,
                   "SELECT " SUB_COLS "CASE WHEN $17 = 1 THEN s.receipt ELSE NULL END" SUB_FROM QUERY_WHERE
                   "AND (CAST($14 AS TEXT) IS NULL OR s.created_s < $15 OR (s.created_s = $15 AND s.id < $14)) "
                   "ORDER BY s.created_s DESC, s.id DESC LIMIT $16",
                   p, QUERY_N_PARAMS + 4, row_sub, &r);
    store_conn_put(&c);
    if (rc) store_submission_list_free(out);
    return rc;
}

typedef struct contrib_rows {
    store_contributor_list *l;
    size_t cap;
} contrib_rows;

static pacer_err row_contrib(void *ud, const store_value *c, size_t n) {
    contrib_rows *r = ud;
    if (n < 6) return PACER_ERR_INTERNAL;
    pacer_err rc = list_grow((void **)&r->l->items, &r->cap, r->l->n, sizeof *r->l->items);
    if (rc) return rc;
    store_contributor *k = &r->l->items[r->l->n++];
    memset(k, 0, sizeof *k);
    store_copy_text(k->profile_id, sizeof k->profile_id, &c[0]);
    store_copy_text(k->display_name, sizeof k->display_name, &c[1]);
    k->submissions = c[2].i;
    k->models = c[3].i;
    k->hardware = c[4].i;
    k->has_best_chat_greedy = c[5].t == SV_REAL || c[5].t == SV_INT;
    k->best_chat_greedy_tok_s = c[5].t == SV_INT ? (double)c[5].i : c[5].d;
    return PACER_OK;
}

pacer_err store_contributors(board_store *st, const store_query *q, store_contributor_list *out) {
    memset(out, 0, sizeof *out);
    store_value p[QUERY_N_PARAMS];
    pacer_err rc = query_params(q, p);
    if (rc) return rc;
    contrib_rows r = {out, 0};
    store_conn c;
    store_conn_get(st, &c);
    rc = store_run(&c,
                   "SELECT s.profile_id, p.display_name, COUNT(*), COUNT(DISTINCT s.model_id), "
                   "COUNT(DISTINCT CASE WHEN s.gpu_name <> '' THEN s.gpu_name ELSE s.cpu_model END), "
                   "MAX(CASE WHEN s.complete = 1 THEN s.chat_greedy_tok_s ELSE NULL END)" SUB_FROM QUERY_WHERE
                   "GROUP BY s.profile_id, p.display_name ORDER BY COUNT(*) DESC, s.profile_id",
                   p, QUERY_N_PARAMS, row_contrib, &r);
    store_conn_put(&c);
    if (rc) store_contributor_list_free(out);
    return rc;
}

void store_contributor_list_free(store_contributor_list *l) {
    if (!l) return;
    free(l->items);
    memset(l, 0, sizeof *l);
}
