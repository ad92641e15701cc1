/* model.h - what a managed run loads: a local GGUF file, a local checkpoint directory,
 * or a Hugging Face repo id found in the local cache (never downloaded here). Only the
 * public facts (file name, sha256, repo, revision) may reach a receipt; the path is for
 * starting the engine. */
#ifndef PACER_LAUNCH_MODEL_H
#define PACER_LAUNCH_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct launch_model {
    char path[PATH_MAX];   /* what the engine is given (file, or directory for HF-format engines) */
    char file_name[256];   /* base name of the weights file */
    char sha256[65];       /* of the weights file */
    char repo[256];        /* "org/name" for a cached repo; "" for a local model */
    char revision[64];     /* the snapshot (commit) loaded; "" for a local model */
    bool local;            /* a local path: unpublishable */
    uint64_t weight_bytes; /* size of the weights file */
} launch_model;

/* Resolves `spec` (a path, or REPO[@REVISION]) into `out`. A repo that is not cached
 * fails with PACER_ERR_NOT_FOUND and a message naming `pacer pull REPO`. `hash` false
 * skips the sha256 (left empty). */
pacer_err launch_model_resolve(const char *spec, bool hash, launch_model *out, char *err, size_t err_len);

#endif
