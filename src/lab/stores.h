/* stores.h - the model a lab run measures and its weight stores. MODEL (a GGUF file, a
 * directory, or REPO[@REVISION] in the Hugging Face cache) resolves to one source GGUF;
 * each configuration's weight type names a store: the source itself when the types match,
 * else "<stem>-<type>.gguf" beside it (for a cached repo, under ~/.pacer/lab/stores/), where
 * <stem> is the source's file name without ".gguf" and without its own type suffix.
 * `pacer model quantize` builds a missing store from a float source. Inspection (metadata,
 * hashes) happens here, before and outside any timing. */
#ifndef PACER_LAB_STORES_H
#define PACER_LAB_STORES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"

typedef struct lab_model {
    char source_path[PATH_MAX]; /* the GGUF the run starts from (never recorded) */
    char source_name[256];      /* its file name (recorded) */
    char dirs[2][PATH_MAX];     /* where stores are looked up; dirs[build_dir] is where they are built */
    int n_dirs, build_dir;
    char repo[256], revision[64]; /* a cached repo: its id and snapshot commit; "" for a local model */
    char source_type[24];       /* the type of most of the source's matrix elements ("f16") */
    char stem[256];
    int context_length;         /* <arch>.context_length; 0 when absent */
    json_t *metadata;           /* owned: architecture, name, file_type, context_length,
                                 * parameter_count, tensors, source_type */
} lab_model;

typedef struct lab_store {
    char weights[24];           /* the type asked for ("" = the source as it is) */
    char path[PATH_MAX];        /* where it is, or will be built */
    char file_name[256];
    bool exists, is_source;
    uint64_t bytes;
    char sha256[65];            /* "" until the run hashes it */
} lab_store;

/* Resolves MODEL (a repo id is looked up in the cache hub_cache_root() names). `store_home`
 * is the directory under which stores of cached repos live (~/.pacer/lab/stores). Errors
 * name what was not found or which of several GGUF files to choose. */
pacer_err lab_model_resolve(const char *spec, const char *store_home, lab_model *m, char *err,
                            size_t err_len);
void lab_model_free(lab_model *m);

/* Finds the store of weight type `weights` ("" = the source): fills `out` whether or not it
 * exists. PACER_ERR_ARG for a type name pacer does not know; PACER_ERR_FORMAT when the file
 * on disk holds another type. */
pacer_err lab_store_find(const lab_model *m, const char *weights, lab_store *out, char *err, size_t err_len);
/* Bytes building `s` needs on disk, and why it cannot be built (a quantized source, a type
 * quantize does not write): PACER_ERR_UNSUPPORTED with words. */
pacer_err lab_store_plan(const lab_model *m, const lab_store *s, uint64_t *bytes, char *err, size_t err_len);
/* Builds the store with `pacer model quantize`'s conversion; refuses when its volume lacks
 * the space. On success `s` exists. */
pacer_err lab_store_build(const lab_model *m, lab_store *s, char *err, size_t err_len);
/* The dominant matrix type of the GGUF at `path` into `out` (24 bytes). */
pacer_err lab_gguf_type(const char *path, char *out, char *err, size_t err_len);

#endif
