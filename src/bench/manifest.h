/* manifest.h - the attached server's self-description, GET /v1/benchmark/manifest
 * (docs/manifest.md). A manifest that passes every check supplies hardware, backend,
 * revision, checkpoint hashes and rank count; only known fields are ever copied out. */
#ifndef PACER_MANIFEST_H
#define PACER_MANIFEST_H

#include <signal.h>
#include <stdbool.h>

#include <jansson.h>

#include "base/error.h"

#define MANIFEST_MAX (256u << 10)

typedef struct manifest {
    bool accepted;          /* every check passed */
    bool reachable;         /* the server answered (any HTTP status); false: no connection */
    char reason[256];       /* why not accepted ("" when accepted) */
    char backend[32];
    char platform[32];
    char revision[129];
    int rank_count;
    json_t *hardware;       /* owned; only whitelisted fields; source "attested" */
    json_t *checkpoint_hashes; /* owned; array of 64-hex strings */
    char *rejected_text;    /* owned: a rejected manifest as received, for the run's local log
                             * only (never a receipt); NULL when accepted or none arrived */
} manifest;

/* Checks `text` as a manifest and fills `m` (always initialized; free with manifest_free).
 * Every string that reaches a receipt (platform, revision, CPU and GPU names) must hold
 * nothing bench/sanitize would remove: a manifest naming a host, a path, an address or a key
 * is rejected, its reason naming the field and the kind, never the text.
 * Returns PACER_OK when accepted, PACER_ERR_FORMAT / PACER_ERR_PARSE otherwise. No I/O. */
pacer_err manifest_parse(const char *text, size_t len, manifest *m);
/* Fetches and parses the manifest of the server at `base_url`. A missing manifest (no
 * answer, 404, ...) leaves m->accepted false with the reason (which never names the host);
 * m->reachable says whether the server answered at all. Returns PACER_OK unless the
 * arguments are invalid. */
pacer_err manifest_fetch(const char *base_url, const volatile sig_atomic_t *cancel, manifest *m);
void manifest_free(manifest *m);

#endif
