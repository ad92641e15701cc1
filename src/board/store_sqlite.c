/* store_sqlite.c - the SQLite driver of the board's store: one file in WAL mode with
 * synchronous=FULL, so a committed transaction survives a crash of the process or the
 * machine; prepared statements are kept per connection. */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/store_driver.h"

#define SQLITE_STMT_CACHE 48
#define SQLITE_BUSY_MS 30000

typedef struct sqlite_conn {
    sqlite3 *db;
    struct { const char *sql; sqlite3_stmt *stmt; } cache[SQLITE_STMT_CACHE];
    size_t n_cache;
} sqlite_conn;

static pacer_err sqlite_code(int rc) {
    switch (rc & 0xff) {
    case SQLITE_OK: case SQLITE_DONE: case SQLITE_ROW: return PACER_OK;
    case SQLITE_CONSTRAINT: return PACER_ERR_STATE;
    case SQLITE_NOMEM: return PACER_ERR_NOMEM;
    case SQLITE_CORRUPT: case SQLITE_NOTADB: return PACER_ERR_FORMAT;
    default: return PACER_ERR_IO;
    }
}

static void sqlite_close(void *c) {
    sqlite_conn *sc = c;
    if (!sc) return;
    for (size_t i = 0; i < sc->n_cache; i++) sqlite3_finalize(sc->cache[i].stmt);
    sqlite3_close(sc->db);
    free(sc);
}

/* Runs a statement that returns no rows we need (a PRAGMA), checking that it worked. */
static pacer_err sqlite_simple(sqlite3 *db, const char *sql, char *err, size_t err_len) {
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) snprintf(err, err_len, "%s: %s", sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return sqlite_code(rc);
}

static int sqlite_text_cb(void *ud, int n, char **vals, char **names) {
    (void)names;
    snprintf(ud, 32, "%s", n > 0 && vals[0] ? vals[0] : "");
    return 0;
}

static pacer_err sqlite_open(const char *target, void **out, char *err, size_t err_len) {
    *out = NULL;
    sqlite_conn *sc = calloc(1, sizeof *sc);
    if (!sc) return PACER_ERR_NOMEM;
    int rc = sqlite3_open_v2(target, &sc->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, err_len, "cannot open the SQLite store %s: %s", target, sc->db ? sqlite3_errmsg(sc->db) : sqlite3_errstr(rc));
        sqlite_close(sc);
        return PACER_ERR_IO;
    }
    sqlite3_busy_timeout(sc->db, SQLITE_BUSY_MS);
    pacer_err e = sqlite_simple(sc->db, "PRAGMA foreign_keys=ON", err, err_len);
    char mode[32] = "";
    if (!e && sqlite3_exec(sc->db, "PRAGMA journal_mode=WAL", sqlite_text_cb, mode, NULL) != SQLITE_OK) e = PACER_ERR_IO;
    if (!e && strcmp(mode, "wal") != 0) {
        snprintf(err, err_len, "the SQLite store %s cannot use WAL mode (journal mode '%s')", target, mode);
        e = PACER_ERR_UNSUPPORTED;
    }
    /* FULL: the WAL is synced at every commit, so an acknowledged upload survives power loss */
    if (!e) e = sqlite_simple(sc->db, "PRAGMA synchronous=FULL", err, err_len);
    if (e) {
        if (!err[0]) snprintf(err, err_len, "cannot set up the SQLite store %s: %s", target, sqlite3_errmsg(sc->db));
        sqlite_close(sc);
        return e;
    }
    *out = sc;
    return PACER_OK;
}

/* The cached statement for `sql` (reset, bindings cleared), preparing it when new. */
static sqlite3_stmt *sqlite_stmt(sqlite_conn *sc, const char *sql, int *rc) {
    for (size_t i = 0; i < sc->n_cache; i++)
        if (sc->cache[i].sql == sql) {
            sqlite3_reset(sc->cache[i].stmt);
            sqlite3_clear_bindings(sc->cache[i].stmt);
            *rc = SQLITE_OK;
            return sc->cache[i].stmt;
        }
    sqlite3_stmt *st = NULL;
    *rc = sqlite3_prepare_v3(sc->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (*rc != SQLITE_OK) return NULL;
    if (sc->n_cache < SQLITE_STMT_CACHE) {
        sc->cache[sc->n_cache].sql = sql;
        sc->cache[sc->n_cache].stmt = st;
        sc->n_cache++;
    }
    return st;
}

static bool sqlite_cached(const sqlite_conn *sc, const sqlite3_stmt *st) {
    for (size_t i = 0; i < sc->n_cache; i++)
        if (sc->cache[i].stmt == st) return true;
    return false;
}

static int sqlite_bind(sqlite3_stmt *st, const store_value *params, size_t n) {
    for (size_t k = 0; k < n; k++) {
        char name[24];
        snprintf(name, sizeof name, "$%zu", k + 1);
        int idx = sqlite3_bind_parameter_index(st, name);
        if (idx == 0) continue; /* a statement need not use every parameter */
        const store_value *v = &params[k];
        int rc = SQLITE_OK;
        switch (v->t) {
        case SV_NULL: rc = sqlite3_bind_null(st, idx); break;
        case SV_INT: rc = sqlite3_bind_int64(st, idx, v->i); break;
        case SV_REAL: rc = sqlite3_bind_double(st, idx, v->d); break;
        case SV_TEXT: rc = sqlite3_bind_text(st, idx, v->s, -1, SQLITE_STATIC); break;
        }
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

#define SQLITE_MAX_COLS 48

static pacer_err sqlite_exec(void *c, const char *sql, const store_value *params, size_t n_params, store_row_fn fn,
                             void *ud, char *err, size_t err_len) {
    sqlite_conn *sc = c;
    int rc;
    sqlite3_stmt *st = sqlite_stmt(sc, sql, &rc);
    if (!st) {
        snprintf(err, err_len, "SQLite: %s", sqlite3_errmsg(sc->db));
        return sqlite_code(rc) ? sqlite_code(rc) : PACER_ERR_INTERNAL;
    }
    pacer_err out = PACER_OK;
    rc = sqlite_bind(st, params, n_params);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (!fn) continue;
        store_value cols[SQLITE_MAX_COLS];
        int n = sqlite3_column_count(st);
        if (n > SQLITE_MAX_COLS) n = SQLITE_MAX_COLS;
        for (int k = 0; k < n; k++) {
            memset(&cols[k], 0, sizeof cols[k]);
            switch (sqlite3_column_type(st, k)) {
            case SQLITE_INTEGER: cols[k].t = SV_INT; cols[k].i = sqlite3_column_int64(st, k); break;
            case SQLITE_FLOAT: cols[k].t = SV_REAL; cols[k].d = sqlite3_column_double(st, k); break;
            case SQLITE_NULL: cols[k].t = SV_NULL; break;
            default: cols[k].t = SV_TEXT; cols[k].s = (const char *)sqlite3_column_text(st, k); break;
            }
        }
        out = fn(ud, cols, (size_t)n);
        if (out) break;
    }
    if (!out && rc != SQLITE_DONE) {
        out = sqlite_code(rc) ? sqlite_code(rc) : PACER_ERR_INTERNAL;
        snprintf(err, err_len, "SQLite: %s", sqlite3_errmsg(sc->db));
    }
    sqlite3_reset(st);
    if (!sqlite_cached(sc, st)) sqlite3_finalize(st);
    return out;
}

const store_driver store_driver_sqlite = {
    .name = "sqlite",
    .open = sqlite_open,
    .close = sqlite_close,
    .exec = sqlite_exec,
    .begin_write = "BEGIN IMMEDIATE",
    .migration_lock = NULL,
};
