/* schema/manifest.h - the fields of an attached server's manifest, GET /v1/benchmark/manifest
 * (docs/manifest.md), defined once. The writer (`pacer serve`, server/serve.c) sets every
 * member through manifest_put(); the reader (bench/manifest.c) runs manifest_fields_check()
 * before it reads a member by its table name. schema/ includes only base/, so both server/
 * and bench/ may include it. No I/O. */
#ifndef PACER_SCHEMA_MANIFEST_H
#define PACER_SCHEMA_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

#define MANIFEST_VERSION 1

typedef enum manifest_field_id {
    MF_VERSION,        /* manifest_version: always MANIFEST_VERSION */
    MF_BACKEND,        /* backend: cpu, cuda, rocm, mlx, metal, vulkan */
    MF_PLATFORM,       /* platform: linux, macos, ... */
    MF_REVISION,       /* revision of the checkpoint loaded */
    MF_PYTHON_VERSION, /* python_version of a Python engine */
    MF_RANK_COUNT,     /* rank_count: 1..4096 */
    MF_RANKS,          /* ranks: [{"hardware": ...}] per rank */
    MF_HARDWARE,       /* hardware: schema/hardware.h's object */
    MF_CHECKPOINT,     /* checkpoint: {"sha256": [64-hex, ...]} */
    MF_ENGINE,         /* engine name (informational) */
    MF_ENGINE_VERSION, /* version of the engine (informational) */
    MF_MODEL,          /* the served model id (informational) */
    MF_FILE,           /* the weight file's name (informational) */
    MF_CHAT_FORMAT,    /* chat template family (informational) */
    MF_RAW_TEXT,       /* the model has a raw-text route (informational) */
    MF_PROMPT_CACHE,   /* prompt reuse is on (informational) */
    MF_DRAFTING,       /* drafting mode (informational) */
    MF_DRAFTER,        /* {"file", "sha256"} of the drafter (informational) */
    MF_COUNT
} manifest_field_id;

typedef enum manifest_type { MFT_INT, MFT_STRING, MFT_BOOL, MFT_OBJECT, MFT_ARRAY } manifest_type;

typedef struct manifest_field {
    const char *name;   /* the member name */
    manifest_type type; /* its JSON type (null is never a valid value) */
    bool required;      /* a manifest without it is refused */
    bool receipt;       /* an accepted value reaches a receipt (after bench/manifest.c's checks) */
} manifest_field;

/* The table, indexed by manifest_field_id. */
extern const manifest_field manifest_fields[MF_COUNT];

/* "an integer", "a string", "true or false", "an object", "an array". */
const char *manifest_type_name(manifest_type t);

/* Sets member `id` of `doc` to `value` (a new reference, stolen even on failure).
 * PACER_ERR_ARG when value is NULL or not of the field's type. */
pacer_err manifest_put(json_t *doc, manifest_field_id id, json_t *value) __attribute__((warn_unused_result));

/* Checks `doc` against the table: an object, every required member present, every member
 * of the table that is present of its type. Members outside the table are ignored. Returns
 * false with `why` filled ("manifest_version is missing", "rank_count is not an integer"). */
bool manifest_fields_check(const json_t *doc, char *why, size_t why_len);

#endif
