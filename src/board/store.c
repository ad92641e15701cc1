/* store.c - the board's store: opening and migrating either database, the connection pool,
 * profiles, upload tokens and the cache of public-checkpoint lookups. Submissions and the
 * page queries are in store_submissions.c. */
#include "board/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/log.h"
#include "board/store_internal.h"

static const char *const board_state_names[BOARD_STATE__COUNT] = {
    "public", "pending-checkpoint", "pending-review", "rejected", "withdrawn",
};

const char *board_state_name(board_state s) {
    return (unsigned)s < BOARD_STATE__COUNT ? board_state_names[s] : "unknown";
}

bool board_state_parse(const char *name, board_state *out) {
    for (int i = 0; i < BOARD_STATE__COUNT; i++)
        if (name && strcmp(name, board_state_names[i]) == 0) { *out = (board_state)i; return true; }
    return false;
}

/* ---- migrations: append a version, never edit one that has shipped ---- */

typedef struct store_migration {
    int version;
    const char *const *statements; /* NULL-terminated */
} store_migration;

static const char *const store_migration_1[] = {
    "CREATE TABLE profiles ("
    " id TEXT PRIMARY KEY,"
    " display_name TEXT NOT NULL,"
    " kind TEXT NOT NULL,"
    " created_s BIGINT NOT NULL,"
    " last_seen_s BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE tokens ("
    " name TEXT PRIMARY KEY,"
    " sha256 TEXT NOT NULL UNIQUE,"
    " profile_id TEXT NOT NULL REFERENCES profiles(id),"
    " created_s BIGINT NOT NULL,"
    " revoked_s BIGINT)",
    "CREATE TABLE submissions ("
    " id TEXT PRIMARY KEY,"
    " profile_id TEXT NOT NULL REFERENCES profiles(id),"
    " token_name TEXT NOT NULL,"
    " canonical_hash TEXT NOT NULL UNIQUE,"
    " state TEXT NOT NULL,"
    " reasons TEXT NOT NULL,"
    " suite_id TEXT NOT NULL,"
    " suite_digest TEXT NOT NULL,"
    " suite_version BIGINT NOT NULL,"
    " rule_version BIGINT NOT NULL,"
    " standard BIGINT NOT NULL,"
    " complete BIGINT NOT NULL,"
    " mode TEXT NOT NULL,"
    " model_id TEXT NOT NULL,"
    " revision TEXT NOT NULL,"
    " backend TEXT NOT NULL,"
    " platform TEXT NOT NULL,"
    " gpu_name TEXT NOT NULL,"
    " gpu_count BIGINT NOT NULL,"
    " cpu_model TEXT NOT NULL,"
    " params_total BIGINT,"
    " params_active BIGINT,"
    " chat_greedy_tok_s DOUBLE PRECISION,"
    " chat_greedy_first_ms DOUBLE PRECISION,"
    " best_tok_s DOUBLE PRECISION,"
    " created_s BIGINT NOT NULL,"
    " updated_s BIGINT NOT NULL,"
    " lookup_attempts BIGINT NOT NULL,"
    " next_lookup_s BIGINT NOT NULL,"
    " receipt TEXT NOT NULL)",
    "CREATE INDEX submissions_by_suite ON submissions (suite_id, suite_digest, state, created_s, id)",
    "CREATE INDEX submissions_by_profile ON submissions (profile_id, created_s)",
    "CREATE INDEX submissions_by_lookup ON submissions (state, next_lookup_s)",
    "CREATE TABLE checkpoints ("
    " model_id TEXT NOT NULL,"
    " revision TEXT NOT NULL,"
    " params_total BIGINT,"
    " params_active BIGINT,"
    " checked_s BIGINT NOT NULL,"
    " PRIMARY KEY (model_id, revision))",
    NULL,
};

static const store_migration store_migrations[] = {
    {1, store_migration_1},
};
#define STORE_N_MIGRATIONS (sizeof store_migrations / sizeof store_migrations[0])

int store_schema_latest(void) { return store_migrations[STORE_N_MIGRATIONS - 1].version; }
int store_schema_version(const board_store *st) { return st->schema_version; }

/* ---- connections ---- */

void store_conn_get(board_store *st, store_conn *out) {
    pthread_mutex_lock(&st->mu);
    for (;;) {
        for (int i = 0; i < st->n; i++)
            if (!st->busy[i]) {
                st->busy[i] = true;
                pthread_mutex_unlock(&st->mu);
                *out = (store_conn){st, i, st->conns[i]};
                return;
            }
        pthread_cond_wait(&st->cv, &st->mu);
    }
}

void store_conn_put(store_conn *c) {
    board_store *st = c->st;
    pthread_mutex_lock(&st->mu);
    st->busy[c->slot] = false;
    pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

pacer_err store_run(store_conn *c, const char *sql, const store_value *p, size_t np, store_row_fn fn, void *ud) {
    char err[512] = "";
    pacer_err rc = c->st->drv->exec(c->c, sql, p, np, fn, ud, err, sizeof err);
    /* a unique-key refusal is an answer the callers expect, not a failure */
    if (rc && rc != PACER_ERR_STATE && err[0]) log_error("store: %s (in: %.60s)", err, sql);
    return rc;
}

pacer_err store_begin(store_conn *c) { return store_run(c, c->st->drv->begin_write, NULL, 0, NULL, NULL); }
pacer_err store_commit(store_conn *c) { return store_run(c, "COMMIT", NULL, 0, NULL, NULL); }

void store_rollback(store_conn *c) {
    char err[256];
    (void)c->st->drv->exec(c->c, "ROLLBACK", NULL, 0, NULL, NULL, err, sizeof err);
}

pacer_err store_random_id(const char *prefix, char out[STORE_ID_MAX]) {
    unsigned char r[8];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return PACER_ERR_IO;
    int n = snprintf(out, STORE_ID_MAX, "%s", prefix);
    for (size_t i = 0; i < sizeof r; i++) n += snprintf(out + n, STORE_ID_MAX - (size_t)n, "%02x", r[i]);
    return PACER_OK;
}

void store_copy_text(char *dst, size_t n, const store_value *v) {
    snprintf(dst, n, "%s", v->t == SV_TEXT && v->s ? v->s : "");
}

/* ---- open and migrate ---- */

static pacer_err row_int(void *ud, const store_value *cols, size_t n) {
    if (n > 0 && cols[0].t == SV_INT) *(int64_t *)ud = cols[0].i;
    return PACER_OK;
}

static pacer_err store_migrate(board_store *st, char *err, size_t err_len) {
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_begin(&c);
    if (!rc && st->drv->migration_lock) rc = store_run(&c, st->drv->migration_lock, NULL, 0, NULL, NULL);
    if (!rc)
        rc = store_run(&c, "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_s BIGINT NOT NULL)",
                       NULL, 0, NULL, NULL);
    int64_t have = 0;
    if (!rc) rc = store_run(&c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", NULL, 0, row_int, &have);
    if (!rc && have > store_schema_latest()) {
        snprintf(err, err_len, "the store's schema (version %lld) is newer than this pacer knows (%d): use a newer pacer",
                 (long long)have, store_schema_latest());
        rc = PACER_ERR_UNSUPPORTED;
    }
    for (size_t m = 0; !rc && m < STORE_N_MIGRATIONS; m++) {
        const store_migration *mg = &store_migrations[m];
        if (mg->version <= have) continue;
        for (const char *const *s = mg->statements; !rc && *s; s++) rc = store_run(&c, *s, NULL, 0, NULL, NULL);
        store_value p[] = {sv_int(mg->version), sv_int((int64_t)time(NULL))};
        if (!rc) rc = store_run(&c, "INSERT INTO schema_migrations (version, applied_s) VALUES ($1, $2)", p, 2, NULL, NULL);
        if (!rc) have = mg->version;
    }
    if (!rc) rc = store_commit(&c);
    if (rc) {
        store_rollback(&c);
        if (!err[0]) snprintf(err, err_len, "the store's schema could not be brought up to date (%s)", pacer_strerror(rc));
    }
    st->schema_version = (int)have;
    store_conn_put(&c);
    return rc;
}

pacer_err store_open(const store_config *cfg, board_store **out, char *err, size_t err_len) {
    *out = NULL;
    err[0] = '\0';
    if (!cfg || !cfg->target || !cfg->target[0]) {
        snprintf(err, err_len, "no store given");
        return PACER_ERR_ARG;
    }
    board_store *st = calloc(1, sizeof *st);
    if (!st) return PACER_ERR_NOMEM;
    st->drv = cfg->kind == STORE_POSTGRES ? &store_driver_postgres : &store_driver_sqlite;
    st->n = cfg->connections > 0 ? cfg->connections : 4;
    st->conns = calloc((size_t)st->n, sizeof *st->conns);
    st->busy = calloc((size_t)st->n, sizeof *st->busy);
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    pacer_err rc = st->conns && st->busy ? PACER_OK : PACER_ERR_NOMEM;
    /* the first connection migrates before the others open: they then see the schema */
    for (int i = 0; !rc && i < st->n; i++) {
        rc = st->drv->open(cfg->target, &st->conns[i], err, err_len);
        if (!rc && i == 0) rc = store_migrate(st, err, err_len);
    }
    if (rc) {
        store_close(st);
        return rc;
    }
    *out = st;
    return PACER_OK;
}

void store_close(board_store *st) {
    if (!st) return;
    for (int i = 0; st->conns && i < st->n; i++)
        if (st->conns[i]) st->drv->close(st->conns[i]);
    free(st->conns);
    free(st->busy);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
}

/* ---- profiles and tokens ---- */

static pacer_err row_profile(void *ud, const store_value *c, size_t n) {
    store_profile *p = ud;
    if (n < 4) return PACER_ERR_INTERNAL;
    store_copy_text(p->id, sizeof p->id, &c[0]);
    store_copy_text(p->display_name, sizeof p->display_name, &c[1]);
    store_copy_text(p->kind, sizeof p->kind, &c[2]);
    p->created_s = c[3].i;
    return PACER_OK;
}

pacer_err store_profile_create(board_store *st, const char *display_name, const char *kind, int64_t now_s,
                               store_profile *out) {
    memset(out, 0, sizeof out[0]);
    if (!display_name || !kind || strlen(display_name) >= STORE_NAME_MAX) return PACER_ERR_ARG;
    pacer_err rc = store_random_id("c-", out->id);
    if (rc) return rc;
    snprintf(out->display_name, sizeof out->display_name, "%s", display_name);
    snprintf(out->kind, sizeof out->kind, "%s", kind);
    out->created_s = now_s;
    store_value p[] = {sv_text(out->id), sv_text(display_name), sv_text(kind), sv_int(now_s)};
    store_conn c;
    store_conn_get(st, &c);
    rc = store_run(&c, "INSERT INTO profiles (id, display_name, kind, created_s) VALUES ($1, $2, $3, $4)", p, 4, NULL, NULL);
    store_conn_put(&c);
    return rc;
}

pacer_err store_profile_get(board_store *st, const char *id, store_profile *out) {
    memset(out, 0, sizeof out[0]);
    store_value p[] = {sv_text(id)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c, "SELECT id, display_name, kind, created_s FROM profiles WHERE id = $1", p, 1,
                             row_profile, out);
    store_conn_put(&c);
    return rc ? rc : out->id[0] ? PACER_OK : PACER_ERR_NOT_FOUND;
}

static pacer_err row_seen(void *ud, const store_value *cols, size_t ncols) {
    (void)cols; (void)ncols;
    (*(int64_t *)ud)++;
    return PACER_OK;
}

pacer_err store_profile_rename(board_store *st, const char *id, const char *display_name) {
    if (!display_name || strlen(display_name) >= STORE_NAME_MAX) return PACER_ERR_ARG;
    store_value p[] = {sv_text(id), sv_text(display_name)};
    int64_t seen = 0;
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c, "UPDATE profiles SET display_name = $2 WHERE id = $1 RETURNING 1", p, 2, row_seen, &seen);
    store_conn_put(&c);
    return rc ? rc : seen ? PACER_OK : PACER_ERR_NOT_FOUND;
}

pacer_err store_token_create(board_store *st, const char *name, const char *token_sha256, const char *profile_id,
                             int64_t now_s) {
    if (!name || !name[0] || strlen(name) >= STORE_NAME_MAX || !token_sha256 || strlen(token_sha256) != 64)
        return PACER_ERR_ARG;
    store_value p[] = {sv_text(name), sv_text(token_sha256), sv_text(profile_id), sv_int(now_s)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c, "INSERT INTO tokens (name, sha256, profile_id, created_s) VALUES ($1, $2, $3, $4)", p, 4,
                             NULL, NULL);
    store_conn_put(&c);
    return rc;
}

typedef struct token_row {
    store_profile *p;
    char *name;
    bool found;
} token_row;

static pacer_err row_token(void *ud, const store_value *c, size_t n) {
    token_row *t = ud;
    if (n < 5) return PACER_ERR_INTERNAL;
    row_profile(t->p, c, 4);
    if (t->name) store_copy_text(t->name, STORE_NAME_MAX, &c[4]);
    t->found = true;
    return PACER_OK;
}

pacer_err store_token_find(board_store *st, const char *token_sha256, store_profile *profile, char name[STORE_NAME_MAX]) {
    memset(profile, 0, sizeof profile[0]);
    token_row t = {profile, name, false};
    store_value p[] = {sv_text(token_sha256)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c,
                             "SELECT p.id, p.display_name, p.kind, p.created_s, t.name FROM tokens t "
                             "JOIN profiles p ON p.id = t.profile_id WHERE t.sha256 = $1 AND t.revoked_s IS NULL",
                             p, 1, row_token, &t);
    store_conn_put(&c);
    return rc ? rc : t.found ? PACER_OK : PACER_ERR_NOT_FOUND;
}

/* ---- the cache of public-checkpoint lookups ---- */

typedef struct checkpoint_row {
    store_checkpoint *c;
    bool found;
} checkpoint_row;

static pacer_err row_checkpoint(void *ud, const store_value *c, size_t n) {
    checkpoint_row *r = ud;
    if (n < 3) return PACER_ERR_INTERNAL;
    r->c->has_params_total = c[0].t == SV_INT;
    r->c->params_total = c[0].i;
    r->c->has_params_active = c[1].t == SV_INT;
    r->c->params_active = c[1].i;
    r->c->checked_s = c[2].i;
    r->found = true;
    return PACER_OK;
}

pacer_err store_checkpoint_get(board_store *st, const char *model_id, const char *revision, store_checkpoint *out) {
    memset(out, 0, sizeof out[0]);
    checkpoint_row r = {out, false};
    store_value p[] = {sv_text(model_id), sv_text(revision)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c, "SELECT params_total, params_active, checked_s FROM checkpoints "
                                 "WHERE model_id = $1 AND revision = $2", p, 2, row_checkpoint, &r);
    store_conn_put(&c);
    return rc ? rc : r.found ? PACER_OK : PACER_ERR_NOT_FOUND;
}

pacer_err store_checkpoint_put(board_store *st, const char *model_id, const char *revision, const store_checkpoint *ck) {
    store_value p[] = {sv_text(model_id), sv_text(revision),
                       ck->has_params_total ? sv_int(ck->params_total) : sv_null(),
                       ck->has_params_active ? sv_int(ck->params_active) : sv_null(), sv_int(ck->checked_s)};
    store_conn c;
    store_conn_get(st, &c);
    pacer_err rc = store_run(&c,
                             "INSERT INTO checkpoints (model_id, revision, params_total, params_active, checked_s) "
                             "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (model_id, revision) DO UPDATE SET "
                             "params_total = excluded.params_total, params_active = excluded.params_active, "
                             "checked_s = excluded.checked_s",
                             p, 5, NULL, NULL);
    store_conn_put(&c);
    return rc;
}
