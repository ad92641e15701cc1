/* store_internal.h - what store.c and store_submissions.c share (private to src/board/):
 * the store itself (a driver and a pool of its connections), borrowing a connection,
 * running statements with the database's words logged, transactions. */
#ifndef PACER_BOARD_STORE_INTERNAL_H
#define PACER_BOARD_STORE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "board/store.h"
#include "board/store_driver.h"

struct board_store {
    const store_driver *drv;
    void **conns;
    bool *busy;
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int schema_version;
};

/* One borrowed connection. */
typedef struct store_conn {
    board_store *st;
    int slot;
    void *c;
} store_conn;

/* Waits for a free connection. */
void store_conn_get(board_store *st, store_conn *out);
void store_conn_put(store_conn *c);
/* Runs one statement on a borrowed connection; failures are logged with the database's
 * words (never values: they may be tokens or receipts). */
pacer_err store_run(store_conn *c, const char *sql, const store_value *p, size_t np, store_row_fn fn, void *ud);
/* Transactions on a borrowed connection. store_rollback logs nothing and cannot fail. */
pacer_err store_begin(store_conn *c);
pacer_err store_commit(store_conn *c);
void store_rollback(store_conn *c);

/* A random id: prefix + 16 lowercase hex digits. */
pacer_err store_random_id(const char *prefix, char out[STORE_ID_MAX]);
/* Copies column text (or "" for NULL) into a fixed array. */
void store_copy_text(char *dst, size_t n, const store_value *v);

#endif
