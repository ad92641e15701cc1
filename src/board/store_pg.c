/* store_pg.c - the PostgreSQL driver of the board's store, through libpq: parameters travel
 * separately from the SQL text (PQexecParams), every commit is synchronous, a connection
 * lost between statements is reopened once. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board/store_driver.h"

#define PG_MAX_PARAMS 48
#define PG_MAX_COLS 48
/* type OIDs (pg_type.h is a server header; these values are fixed) */
#define PG_BOOLOID 16
#define PG_INT8OID 20
#define PG_INT2OID 21
#define PG_INT4OID 23
#define PG_TEXTOID 25
#define PG_FLOAT4OID 700
#define PG_FLOAT8OID 701
#define PG_NUMERICOID 1700

static void pg_close(void *c) { PQfinish(c); }

/* libpq's message without its trailing newline. */
static void pg_message(const char *what, const char *msg, char *err, size_t err_len) {
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    snprintf(err, err_len, "%s: %.*s", what, (int)n, msg);
}

/* Server notices ("relation already exists, skipping") are not errors: kept off stderr. */
static void pg_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

static pacer_err pg_setup(PGconn *c, char *err, size_t err_len) {
    PQsetNoticeProcessor(c, pg_notice, NULL);
    if (PQsetClientEncoding(c, "UTF8") != 0) {
        pg_message("PostgreSQL", PQerrorMessage(c), err, err_len);
        return PACER_ERR_IO;
    }
    /* acknowledged only after commit: never let a server default make commits asynchronous */
    PGresult *r = PQexec(c, "SET synchronous_commit = on");
    pacer_err rc = PQresultStatus(r) == PGRES_COMMAND_OK ? PACER_OK : PACER_ERR_IO;
    if (rc) pg_message("PostgreSQL", PQresultErrorMessage(r), err, err_len);
    PQclear(r);
    return rc;
}

static pacer_err pg_open(const char *target, void **out, char *err, size_t err_len) {
    *out = NULL;
    PGconn *c = PQconnectdb(target);
    if (!c) return PACER_ERR_NOMEM;
    if (PQstatus(c) != CONNECTION_OK) {
        /* libpq's message names the host and port, not the password */
        pg_message("cannot connect to PostgreSQL", PQerrorMessage(c), err, err_len);
        PQfinish(c);
        return PACER_ERR_NET;
    }
    pacer_err rc = pg_setup(c, err, err_len);
    if (rc) { PQfinish(c); return rc; }
    *out = c;
    return PACER_OK;
}

static store_vtype pg_coltype(Oid t) {
    switch (t) {
    case PG_BOOLOID: case PG_INT8OID: case PG_INT2OID: case PG_INT4OID: return SV_INT;
    case PG_FLOAT4OID: case PG_FLOAT8OID: case PG_NUMERICOID: return SV_REAL;
    default: return SV_TEXT;
    }
}

static pacer_err pg_rows(PGresult *r, store_row_fn fn, void *ud) {
    int rows = PQntuples(r), n = PQnfields(r);
    if (n > PG_MAX_COLS) n = PG_MAX_COLS;
    store_vtype types[PG_MAX_COLS];
    for (int k = 0; k < n; k++) types[k] = pg_coltype(PQftype(r, k));
    for (int i = 0; i < rows; i++) {
        store_value cols[PG_MAX_COLS];
        for (int k = 0; k < n; k++) {
            memset(&cols[k], 0, sizeof cols[k]);
            const char *v = PQgetvalue(r, i, k);
            if (PQgetisnull(r, i, k)) continue;
            cols[k].t = types[k];
            if (types[k] == SV_INT) cols[k].i = (v[0] == 't') ? 1 : (v[0] == 'f') ? 0 : strtoll(v, NULL, 10);
            else if (types[k] == SV_REAL) cols[k].d = strtod(v, NULL);
            else cols[k].s = v;
        }
        pacer_err rc = fn(ud, cols, (size_t)n);
        if (rc) return rc;
    }
    return PACER_OK;
}

static pacer_err pg_exec(void *conn, const char *sql, const store_value *params, size_t n_params, store_row_fn fn,
                         void *ud, char *err, size_t err_len) {
    PGconn *c = conn;
    if (n_params > PG_MAX_PARAMS) return PACER_ERR_ARG;
    Oid types[PG_MAX_PARAMS];
    const char *values[PG_MAX_PARAMS];
    char text[PG_MAX_PARAMS][32];
    for (size_t k = 0; k < n_params; k++) {
        const store_value *v = &params[k];
        types[k] = 0;
        values[k] = NULL;
        switch (v->t) {
        case SV_NULL: break;
        case SV_INT:
            types[k] = PG_INT8OID;
            snprintf(text[k], sizeof text[k], "%lld", (long long)v->i);
            values[k] = text[k];
            break;
        case SV_REAL:
            types[k] = PG_FLOAT8OID;
            snprintf(text[k], sizeof text[k], "%.17g", v->d);
            values[k] = text[k];
            break;
        case SV_TEXT: types[k] = PG_TEXTOID; values[k] = v->s; break;
        }
    }
    if (PQstatus(c) != CONNECTION_OK) PQreset(c); /* the server restarted: one more try */
    PGresult *r = PQexecParams(c, sql, (int)n_params, types, values, NULL, NULL, 0);
    pacer_err rc = PACER_OK;
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_TUPLES_OK) {
        if (fn) rc = pg_rows(r, fn, ud);
    } else if (st != PGRES_COMMAND_OK) {
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        rc = state && strncmp(state, "23", 2) == 0 ? PACER_ERR_STATE
             : !r || PQstatus(c) != CONNECTION_OK ? PACER_ERR_NET
                                                  : PACER_ERR_IO;
        pg_message("PostgreSQL", r ? PQresultErrorMessage(r) : PQerrorMessage(c), err, err_len);
    }
    PQclear(r);
    return rc;
}

const store_driver store_driver_postgres = {
    .name = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .begin_write = "BEGIN",
    .migration_lock = "SELECT pg_advisory_xact_lock(7350620475)",
};
