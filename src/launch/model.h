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
#include "launch/adapter.h"

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

/* The drafter a managed run passes to its engine, and why. */
typedef struct launch_drafter {
    bool pass;              /* a drafter goes on the engine's command line */
    char path[PATH_MAX];    /* what the engine is given: a GGUF file or a checkpoint directory */
    char public_id[320];    /* "ORG/NAME@COMMIT" for a cached repo; "" for a local path (never recorded) */
    char note[600];         /* for people: which drafter, or why none */
    bool serial_override;   /* --serial overrode a named --drafter */
} launch_drafter;

/* The repo --drafter auto looks for: the target's own drafter, published beside it as
 * "ORG/NAME-drafter". */
#define LAUNCH_DRAFTER_SUFFIX "-drafter"

/* Chooses the drafter for `target` on engine `a` from `spec` ("auto" or NULL, "none", a
 * path to a GGUF file or a directory, or a repo id in the local cache) and `serial`
 * (--serial: no drafting, whatever `spec` says). "auto" passes ORG/NAME-drafter when the
 * target is a cached repo and that repo is cached too, otherwise none, and says why.
 * Errors, before anything is started, with words in `err`: PACER_ERR_ARG when the engine
 * cannot take a drafter and one is named (or a directory holds several GGUF files),
 * PACER_ERR_NOT_FOUND when a named drafter is neither a path nor a cached repo (the
 * message names `pacer pull`). */
pacer_err launch_drafter_choose(const launch_adapter *a, const char *spec, bool serial, const launch_model *target,
                                launch_drafter *out, char *err, size_t err_len);

#endif
