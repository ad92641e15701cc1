/* bench_board.c - validated uploads per second on the SQLite store: a board in this
 * process (4 request threads, WAL + synchronous=FULL, every upload acknowledged after its
 * commit) takes distinct copies of a real receipt (tests/data/board/receipt-v2.json) over
 * HTTP from 1 and then 2 client threads; the checkpoint is in the store's lookup cache, so
 * no hub is asked. Also the intake alone (judging, no store, no HTTP). Prints figures. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "board/board.h"
#include "net/http.h"

#define BENCH_UPLOADS 600

typedef struct client {
    const char *url, *auth;
    json_t *receipt;
    int first, count, failed;
} client;

static pacer_err discard(void *ctx, const char *data, size_t n, int64_t t) { return PACER_OK; }

static void *client_run(void *arg) {
    client *c = arg;
    const char *headers[] = {c->auth, "Content-Type: application/json", NULL};
    for (int i = 0; i < c->count; i++) {
        char run_id[64];
        snprintf(run_id, sizeof run_id, "bench-%ld-%d", (long)time(NULL), c->first + i);
        json_t *r = json_deep_copy(c->receipt);
        json_object_set_new(r, "run_id", json_string(run_id));
        char *body = json_dumps(r, JSON_COMPACT);
        json_decref(r);
        http_request req = {.method = "POST", .url = c->url, .body = body, .body_len = strlen(body), .headers = headers,
                            .total_timeout_ms = 30000, .on_data = discard};
        http_response resp;
        http_response_init(&resp);
        if (http_perform(&req, &resp) != PACER_OK || resp.status != 201) c->failed++;
        http_response_free(&resp);
        free(body);
    }
    return NULL;
}

static double upload_rate(const char *url, const char *auth, json_t *receipt, int threads, int first, int *failed) {
    client cs[2];
    pthread_t th[2];
    int64_t t0 = clock_now_ns();
    for (int i = 0; i < threads; i++) {
        cs[i] = (client){url, auth, receipt, first + i * BENCH_UPLOADS / threads, BENCH_UPLOADS / threads, 0};
        pthread_create(&th[i], NULL, client_run, &cs[i]);
    }
    *failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        *failed += cs[i].failed;
    }
    return BENCH_UPLOADS / ((double)(clock_now_ns() - t0) / 1e9);
}

int main(void) {
    char dir[] = "/tmp/pacer-bench-board-XXXXXX", db[600], err[512], token[BOARD_TOKEN_MAX], auth[200], url[96];
    json_error_t je;
    json_t *receipt = json_load_file("tests/data/board/receipt-v2.json", 0, &je);
    if (!receipt || !mkdtemp(dir)) { fprintf(stderr, "bench_board: no receipt or temporary directory\n"); return 1; }
    snprintf(db, sizeof db, "%s/board.db", dir);
    board_store *st = NULL;
    store_config sc = {STORE_SQLITE, db, 4};
    store_profile p;
    board *b = NULL;
    int rc = 1;
    if (store_open(&sc, &st, err, sizeof err)) { fprintf(stderr, "bench_board: %s\n", err); goto out; }
    store_checkpoint ck = {true, true, 1235814400, 1235814400, (int64_t)time(NULL)};
    const json_t *m = json_object_get(receipt, "model");
    if (board_token_create(st, "bench", (int64_t)time(NULL), token, &p) ||
        store_checkpoint_put(st, json_string_value(json_object_get(m, "id")), json_string_value(json_object_get(m, "revision")), &ck))
        goto out;
    board_config cfg = {.store = st, .hub = "http://127.0.0.1:9", .quota = 1000000};
    intake_config_default(&cfg.intake);
    if (board_new(&cfg, &b) || board_listen(b, "127.0.0.1", 0, 4, err, sizeof err)) { fprintf(stderr, "bench_board: %s\n", err); goto out; }
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/receipts", board_port(b));
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);

    char *text = json_dumps(receipt, JSON_COMPACT);
    int64_t t0 = clock_now_ns();
    double c0 = clock_cpu_s();
    int judged = 0;
    while (clock_now_ns() - t0 < 1000000000LL) {
        intake_verdict v;
        intake_judge(&cfg.intake, text, strlen(text), &v);
        judged += v.outcome == INTAKE_STANDARD;
        intake_verdict_free(&v);
    }
    double judge_rate = judged / ((double)(clock_now_ns() - t0) / 1e9), judge_cpu = (clock_cpu_s() - c0) / judged;
    printf("board intake alone (parse, validate, recompute, privacy check, canonical hash; %zu-byte receipt):\n"
           "  %.0f receipts/s on one thread, %.2f ms CPU each\n", strlen(text), judge_rate, judge_cpu * 1e3);
    free(text);
    int failed1, failed2;
    double one = upload_rate(url, auth, receipt, 1, 0, &failed1);
    double cpu0 = clock_cpu_s();
    double two = upload_rate(url, auth, receipt, 2, BENCH_UPLOADS, &failed2);
    double cpu_per = (clock_cpu_s() - cpu0) / BENCH_UPLOADS;
    printf("board validated uploads on SQLite (WAL, synchronous=FULL, acknowledged after commit), %d each:\n"
           "  1 client: %.0f uploads/s%s\n  2 clients: %.0f uploads/s%s\n"
           "  CPU per upload (board and client together): %.2f ms, i.e. %.0f uploads per CPU-second\n"
           "  (target: >= 200/s on 2 cores)\n",
           BENCH_UPLOADS, one, failed1 ? " (some failed!)" : "", two, failed2 ? " (some failed!)" : "", cpu_per * 1e3,
           1.0 / cpu_per);
    rc = failed1 || failed2;
out:
    board_free(b);
    store_close(st);
    json_decref(receipt);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
