/* store_driver.h - what store.c needs from a database (private to src/board/): open a
 * connection, run one statement with bound parameters and read its rows, transactions.
 * SQL is written once with $1..$N placeholders, which both SQLite and PostgreSQL accept. */
#ifndef PACER_BOARD_STORE_DRIVER_H
#define PACER_BOARD_STORE_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef enum store_vtype { SV_NULL = 0, SV_INT, SV_REAL, SV_TEXT } store_vtype;

/* A parameter or a column value. Column text is borrowed until the row callback returns. */
typedef struct store_value {
    store_vtype t;
    int64_t i;
    double d;
    const char *s;
} store_value;

/* Called once per result row; a non-OK return stops the statement with that code. */
typedef pacer_err (*store_row_fn)(void *ud, const store_value *cols, size_t ncols);

typedef struct store_driver {
    const char *name;
    /* Opens one connection to `target` and sets it up (SQLite: WAL, synchronous=FULL,
     * foreign keys, busy timeout). */
    pacer_err (*open)(const char *target, void **conn, char *err, size_t err_len);
    void (*close)(void *conn);
    /* Runs one statement. A unique-constraint violation is PACER_ERR_STATE; a lost or busy
     * database PACER_ERR_IO; `err` gets the database's words. `fn` may be NULL. */
    pacer_err (*exec)(void *conn, const char *sql, const store_value *params, size_t n_params, store_row_fn fn,
                      void *ud, char *err, size_t err_len);
    /* The statement that starts a write transaction ("BEGIN IMMEDIATE" / "BEGIN"). */
    const char *begin_write;
    /* Run first in the migration transaction so two boards starting at once migrate one
     * after the other; NULL when begin_write already serializes. */
    const char *migration_lock;
} store_driver;

extern const store_driver store_driver_sqlite;
extern const store_driver store_driver_postgres;

/* Parameter constructors. */
static inline store_value sv_int(int64_t i) { return (store_value){.t = SV_INT, .i = i}; }
static inline store_value sv_real(double d) { return (store_value){.t = SV_REAL, .d = d}; }
static inline store_value sv_text(const char *s) { return s ? (store_value){.t = SV_TEXT, .s = s} : (store_value){.t = SV_NULL}; }
static inline store_value sv_null(void) { return (store_value){.t = SV_NULL}; }

#endif
