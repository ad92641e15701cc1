/* board.h - the results board's receiver: the one intake path for every upload (the CLI's
 * bearer-token route and the website's browser-profile route), quotas and idempotency
 * over the store, the public-checkpoint lookup with its retry queue, upload tokens, and
 * the HTTP routes (board_http.c). The website (pages) adds its routes to the same table. */
#ifndef PACER_BOARD_BOARD_H
#define PACER_BOARD_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "board/intake.h"
#include "board/metrics.h"
#include "board/store.h"

#define BOARD_TOKEN_MAX 80
#define BOARD_DEFAULT_HUB "https://huggingface.co"

typedef struct board_config {
    board_store *store;        /* borrowed; must outlive the board */
    intake_config intake;
    const char *hub;           /* hub endpoint (Hugging Face API shape), no trailing '/' */
    int quota;                 /* uploads per 24 h per profile; 0: 20 */
    int quota_new;             /* for browser profiles younger than a day; 0: 5 */
    int64_t hub_retry_s;       /* first retry of an unavailable hub; doubles up to 1 h; 0: 30 */
    int64_t hub_timeout_ms;    /* per hub request; 0: 10 s */
    int64_t checkpoint_ttl_s;  /* how long a public lookup is reused; 0: 1 day */
    const char *public_url;    /* prefix of result URLs ("https://board.example"); NULL: relative */
} board_config;

typedef struct board board;

/* Who uploads: a profile, and the token it used ("" for a browser profile). */
typedef struct board_identity {
    store_profile profile;
    char token_name[STORE_NAME_MAX];
} board_identity;

pacer_err board_new(const board_config *cfg, board **out);
/* Stops the server and the lookup thread if running, frees. Accepts NULL. */
void board_free(board *b);

/* Listens on host:port (port 0: any) with `threads` request threads (0: 4) and starts the
 * lookup thread. */
pacer_err board_listen(board *b, const char *host, int port, int threads, char *err, size_t err_len);
int board_port(const board *b);
board_metrics *board_get_metrics(board *b);
/* The website of a listening board (board/site.h); NULL before board_listen. */
struct board_site *board_get_site(const board *b);
const board_config *board_get_config(const board *b);

/* The one intake: judges `len` bytes, applies idempotency, quota and the checkpoint lookup,
 * stores, and returns the HTTP status with the answer (a new reference in *answer):
 * {id, state, url (public only), reasons, duplicate, uploads_today, quota} or, refused,
 * {error: {message, type}, reasons}. */
int board_submit(board *b, const board_identity *who, const char *body, size_t len, int64_t now_s, json_t **answer);

/* "Bearer TOKEN" -> the identity; PACER_ERR_NOT_FOUND for a missing or unknown token. */
pacer_err board_auth(board *b, const char *authorization, board_identity *out);

/* One pass over the pending-checkpoint queue at `now_s` (the lookup thread calls it; tests
 * and the admin CLI may too). Returns how many submissions were checked. */
size_t board_lookup_pass(board *b, int64_t now_s);

/* Makes a new upload token for a new token-profile named `name` (also its display name):
 * the token text (shown once, never stored) into `token`, the profile into *profile. */
pacer_err board_token_create(board_store *st, const char *name, int64_t now_s, char token[BOARD_TOKEN_MAX],
                             store_profile *profile);

/* The result URL of a submission into out (public_url + "/r/" + id). */
void board_result_url(const board *b, const char *id, char *out, size_t n);

/* The submission as the API shows it (new reference): id, state, reasons, url, facts, and
 * the receipt itself when `with_receipt` and it is stored. */
json_t *board_submission_json(const board *b, const store_submission *s, bool with_receipt);

#endif
