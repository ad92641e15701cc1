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

/* Weight files of one checkpoint, at most: a directory with more is refused. */
#define LAUNCH_WEIGHTS_MAX 256

/* One weight file: what a receipt records about it (never its path). */
typedef struct launch_weight_file {
    char name[256];        /* file name inside the checkpoint; for a GGUF, the file's own name */
    char sha256[65];       /* "" until launch_model_hash() */
    uint64_t bytes;
} launch_weight_file;

typedef struct launch_model {
    char path[PATH_MAX];   /* what the engine is given: the GGUF file, or the checkpoint directory */
    launch_format format;  /* which of the two (the chosen engine's adapter decides) */
    char file_name[256];   /* public name of a local model: the GGUF's file name, or the directory's */
    char repo[256];        /* "org/name" for a cached repo; "" for a local model */
    char revision[64];     /* the snapshot (commit) loaded; "" for a local model */
    bool local;            /* a local path: unpublishable */
    uint64_t weight_bytes; /* all weight files together */
    launch_weight_file files[LAUNCH_WEIGHTS_MAX]; /* sorted by name; one for a GGUF */
    size_t n_files;
    size_t largest;        /* index in files[] of the largest weight file */
} launch_model;

/* Resolves `spec` (a path, or REPO[@REVISION]) into `out` for engine `a`, following what the
 * engine loads (a->loads):
 *   GGUF engines: a file is taken as it is; a directory or a cached snapshot must hold
 *     exactly one .gguf file.
 *   HF-directory engines: a directory or a cached snapshot that holds config.json and weight
 *     files (*.safetensors; *.bin when there are none) is passed as the directory; a single
 *     file is refused.
 * A checkpoint of the other format gets PACER_ERR_ARG and a message naming the engine, what
 * it needs and the engines that load what was found. A repo that is not cached fails with
 * PACER_ERR_NOT_FOUND and a message naming `pacer pull REPO`. Nothing is hashed: see
 * launch_model_hash(). */
pacer_err launch_model_resolve(const char *spec, const launch_adapter *a, launch_model *out, char *err, size_t err_len);

/* Writes the path of weight file `i` of `m` into `out` (`n` bytes); false when it does not fit. */
bool launch_model_file_path(const launch_model *m, size_t i, char *out, size_t n);

/* Computes the sha256 of every weight file of `m` (each streamed in blocks, read once). */
pacer_err launch_model_hash(launch_model *m, char *err, size_t err_len);

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
