/* publish.h - the client side of the results board: which board URLs may be used, the
 * board's capabilities, whether a receipt may go there (the refusals that come before any
 * credential, checkpoint lookup or upload), what to tell the user before uploading, and
 * the upload itself. Every request goes through net/http: no redirects, no proxies. */
#ifndef PACER_PUBLISH_H
#define PACER_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

#define PUBLISH_URL_MAX 1024

/* Checks a board URL and writes its normal form (no trailing '/') into `norm`: https://,
 * or http:// only to a loopback host (127.0.0.0/8, ::1, localhost); no user name or
 * password in it, no query or fragment. PACER_ERR_ARG with words in `err` otherwise. */
pacer_err publish_url_check(const char *url, char norm[PUBLISH_URL_MAX], char *err, size_t err_len);

/* GET URL/api/v1/capabilities (no credential is sent). New reference in *caps. */
pacer_err publish_get_caps(const char *url, json_t **caps, char *err, size_t err_len);

/* Whether the board takes this suite (id and digest), backend, and v2 only with separate rankings. */
bool publish_caps_suite(const json_t *caps, const char *id, const char *digest);
bool publish_caps_backend(const json_t *caps, const char *backend);
bool publish_caps_separate(const json_t *caps);

/* The refusals for one receipt, in order: a local model, a server's private words still in
 * it (sanitize_check_receipt, as the board's intake runs it: PACER_ERR_FORMAT), a suite the
 * board does not take (a v2 receipt also needs separate v1/v2 rankings), a backend it does
 * not take (ROCm unless listed). PACER_ERR_UNSUPPORTED with the reason in `err`. */
pacer_err publish_check_receipt(const json_t *receipt, const json_t *caps, char *err, size_t err_len);

/* Appends to `notes` (an array) what a person should know before a public managed receipt
 * goes out: no GPU named, no checkpoint revision, no configuration digest. */
void publish_notes(const json_t *receipt, json_t *notes);

/* POST URL/api/v1/receipts with the receipt's canonical JSON and the bearer token. *status
 * gets the HTTP status (0: no answer) and *answer the board's JSON answer (new reference,
 * NULL when there was none). PACER_OK when the board answered at all; PACER_ERR_NET etc.
 * with `err` otherwise. */
pacer_err publish_upload(const char *url, const char *token, const json_t *receipt, int *status, json_t **answer,
                         char *err, size_t err_len);

/* GET URL/api/v1/whoami with the token: 200 and the profile in *answer when it is valid. */
pacer_err publish_whoami(const char *url, const char *token, int *status, json_t **answer, char *err, size_t err_len);

#endif
