/* signature.h - a lab run's signature: what must be the same for --resume to continue a run.
 * The engine binary (sha256), the engine adapter, the model's identity (repo@revision, or
 * the source file's sha256) and metadata, each configuration's store (file name, sha256),
 * the suite (id, digest), the selections (configurations, workloads, rounds, mode), the
 * context size, and the caps. Caps may only rise: a raised cap re-runs that workload's
 * capped answers. Pure: JSON in, verdict out. */
#ifndef PACER_LAB_SIGNATURE_H
#define PACER_LAB_SIGNATURE_H

#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

/* Compares `now` with the run's `was`. PACER_OK when they match but for raised caps (those
 * go to *raised as {"workload": [old, new]}, a new reference, possibly empty);
 * PACER_ERR_STATE with words in `err` naming the first difference (or the lowered cap). */
pacer_err lab_signature_compare(const json_t *was, const json_t *now, json_t **raised, char *err, size_t err_len);

#endif
