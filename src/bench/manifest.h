/* manifest.h - the attached server's self-description, GET /v1/benchmark/manifest
 * (docs/manifest.md). Only manifest_version is required; every other fact is optional and
 * stays unknown when missing, but a fact that is present must be well formed and agree with
 * the others, or the whole manifest is refused. Only known fields are ever copied out. */
#ifndef PACER_MANIFEST_H
#define PACER_MANIFEST_H

#include <signal.h>
#include <stdbool.h>

#include <jansson.h>

#include "base/error.h"

#define MANIFEST_MAX (256u << 10)
#define MANIFEST_MAX_RANKS 4096

typedef struct manifest {
    bool accepted;          /* every check passed */
    bool reachable;         /* the server answered (any HTTP status); false: no connection */
    char reason[256];       /* why not accepted ("" when accepted) */
    int version;            /* manifest_version of an accepted manifest */
    /* Each fact below is "" / 0 / NULL when the manifest does not attest it. */
    char backend[32];
    char platform[32];
    char revision[129];
    char python_version[32];
    int rank_count;
    json_t *hardware;       /* owned; only whitelisted fields; source "attested", or "partial"
                             * when some of cpu, memory or a GPU's memory/cores is missing */
    json_t *rank_hardware;  /* owned; the "ranks" array: each rank's hardware, like `hardware` */
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
