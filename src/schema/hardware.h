/* schema/hardware.h - the one hardware object, as probes write it, manifests carry it and
 * receipts keep it (docs/receipt.md, docs/manifest.md):
 *   {"source": "probed" | "partial" | "attested" | "unknown",
 *    "cpu": {"model", "cores", "threads", "features": [...], "source"} | null,
 *    "memory_bytes": integer | null,
 *    "gpus": [{"name", "memory_bytes", "cores", "vendor", "memory", "driver_version",
 *              "compute_capability", "power_limit_w", "max_sm_clock_mhz",
 *              "max_memory_clock_mhz"}, ...],
 *    "gpu_count": integer | null,
 *    probed only: "os", "power", "volume", "gpus_source"}
 * Every member is a row of hardware_fields[]; a fact that could not be read is null.
 * Receipts written before this shape kept the probe's memory as {"total_bytes", "source"}
 * and a GPU's compute units as "compute_units": those rows are marked HW_LEGACY, read and
 * validated, never written. schema/ includes only base/. No I/O. */
#ifndef PACER_SCHEMA_HARDWARE_H
#define PACER_SCHEMA_HARDWARE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef enum hardware_kind {
    HW_OBJECT,
    HW_OBJECTS, /* array of objects */
    HW_TOKENS,  /* array of tokens */
    HW_INT,     /* integer >= 0 */
    HW_NUM,     /* number */
    HW_NAME,    /* a device, CPU or OS name: printable, 1..127 bytes */
    HW_TOKEN,   /* [a-z0-9_-], 1..32 bytes */
    HW_VERSION, /* [A-Za-z0-9._+~-], 1..64 bytes */
} hardware_kind;

enum {
    HW_ATTESTED = 1u, /* a fact a manifest may attest (copied into an attested receipt) */
    HW_LEGACY = 2u,   /* read in receipts of the earlier shape, never written */
};

typedef struct hardware_field {
    const char *path; /* "." between members, "[]" for an array's elements */
    hardware_kind kind;
    unsigned flags;
} hardware_field;

extern const hardware_field hardware_fields[];
extern const size_t hardware_field_count;

/* The row of `path` ("gpus[].name"), or NULL. */
const hardware_field *hardware_field_find(const char *path);
/* True when `v` (not null) has the form of `kind`; an array kind checks only that v is one. */
bool hardware_form_ok(hardware_kind kind, const json_t *v);

/* The object of a run whose hardware is not known (new reference). */
json_t *hardware_unknown(void);

/* The builder: a copy of `in` holding only its HW_ATTESTED facts, each one checked: cpu
 * {model, cores}, memory_bytes, gpus [{name, memory_bytes, cores}], gpu_count (checked
 * against the gpus listed, filled from them). Missing facts are null and make the source
 * "partial"; with every fact present it is `whole_source`. A present fact of the wrong form
 * returns NULL with `why` naming its place below the object (".gpus[0] is invalid"). */
json_t *hardware_copy_attested(const json_t *in, const char *whole_source, char *why, size_t why_len);

/* The validator: `hw` is an object whose every member is a row of the table (HW_LEGACY rows
 * included) of its form or null, with a known "source", and a gpu_count that agrees with the
 * gpus listed (when any is listed: a manifest may count GPUs it does not name). Returns false with `why` naming the first member that is not. */
bool hardware_validate(const json_t *hw, char *why, size_t why_len);

#endif
