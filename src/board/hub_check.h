/* hub_check.h - the board's public-checkpoint lookup: does MODEL at REVISION exist and is it
 * public on the configured hub (Hugging Face API shape), and what are its published
 * parameter counts. Asked without any credential, so that only what everyone can see
 * counts as public; no redirects, no proxies (net/http). */
#ifndef PACER_BOARD_HUB_CHECK_H
#define PACER_BOARD_HUB_CHECK_H

#include <stdint.h>

#include "base/error.h"
#include "board/params.h"

typedef enum hub_outcome {
    HUB_PUBLIC = 0,      /* exists at that revision and anyone may read it */
    HUB_NOT_PUBLIC = 1,  /* unknown, private, gated or disabled: never published automatically */
    HUB_UNAVAILABLE = 2, /* the hub did not answer usefully: try again later */
} hub_outcome;

typedef struct hub_check_result {
    hub_outcome outcome;
    char reason[256];    /* for people; "" when public */
    char commit[72];     /* the commit the hub resolved the revision to */
    param_counts params;
} hub_check_result;

/* Asks `endpoint` (e.g. https://huggingface.co, no trailing '/') about `repo` at `revision`
 * (GET /api/models/REPO/revision/REV, then /REPO/resolve/COMMIT/config.json), each request
 * limited to `timeout_ms`. Always fills `out`; returns PACER_ERR_ARG only for bad arguments. */
pacer_err hub_check(const char *endpoint, const char *repo, const char *revision, int64_t timeout_ms,
                    hub_check_result *out);

#endif
