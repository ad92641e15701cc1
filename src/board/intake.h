/* intake.h - the board's judgement of one uploaded receipt, before anything is stored: size
 * and depth limits, strict JSON, the receipt schema, the suite id and digest, the rules of
 * the receipt's own version with every aggregate recomputed from the attempts (through
 * bench/'s validator), the privacy check, backend acceptance and whether it is a complete
 * standard run. Pure: bytes in, a verdict out, no I/O; the CLI route and the browser route
 * both come through here. */
#ifndef PACER_BOARD_INTAKE_H
#define PACER_BOARD_INTAKE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"
#include "board/store.h"

#define INTAKE_MAX_BYTES (1u << 20)  /* a full receipt is ~20 KB; 1 MiB leaves room for long runs */
#define INTAKE_MAX_DEPTH 16          /* a receipt nests 6 deep */
#define INTAKE_MAX_STRING 1024       /* bytes in any one string */
#define INTAKE_MAX_NODES 200000      /* values in the whole document */
#define INTAKE_MAX_BACKENDS 16

typedef struct intake_config {
    bool accept_v1, accept_v2;                 /* community-v1 / community-v2 receipts */
    const char *backends[INTAKE_MAX_BACKENDS]; /* accepted backend names */
    size_t n_backends;
} intake_config;

/* Fills `cfg` with the defaults: v1 and v2 (ranked apart), backends cuda, mlx, cpu. */
void intake_config_default(intake_config *cfg);
/* Parses "v1,v2" into cfg's accept flags; false on an unknown word. */
bool intake_parse_accept(intake_config *cfg, const char *list);
/* Parses "cuda,rocm,cpu" into cfg->backends (pointers into `list`, which must outlive cfg);
 * false on an empty or too long list. `list` is modified. */
bool intake_parse_backends(intake_config *cfg, char *list);
bool intake_backend_accepted(const intake_config *cfg, const char *name);

typedef enum intake_outcome {
    INTAKE_REJECTED = 0,  /* invalid: every reason in `reasons`; nothing may be stored */
    INTAKE_REVIEW = 1,    /* valid, but not a complete standard run: pending-review */
    INTAKE_STANDARD = 2,  /* a complete standard run: public once the checkpoint is */
} intake_outcome;

typedef struct intake_verdict {
    intake_outcome outcome;
    int http_status;          /* for REJECTED: 400 (not JSON / limits), 413 (too big), 422 (invalid) */
    json_t *reasons;          /* array of strings, people's words, every reason found */
    const char *codes[16];    /* short labels of the failed checks (metrics), static strings */
    size_t n_codes;
    json_t *receipt;          /* the parsed receipt (owned); NULL when it did not parse */
    char *canonical;          /* its canonical JSON text (malloc'd) */
    char canonical_hash[65];  /* SHA-256 of that text */
    store_submission facts;   /* what the store keeps beside the text (no id, profile or state) */
} intake_verdict;

/* Judges `len` bytes of `body`. Always fills `v` (free with intake_verdict_free); returns
 * PACER_OK whenever a verdict was reached, PACER_ERR_NOMEM otherwise. */
pacer_err intake_judge(const intake_config *cfg, const char *body, size_t len, intake_verdict *v);
void intake_verdict_free(intake_verdict *v);

/* The reasons as one line ("a; b; c") into out. */
void intake_reasons_line(const json_t *reasons, char *out, size_t n);

#endif
