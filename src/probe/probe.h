/* probe.h - hardware provenance: the public facts about the machine a number was measured
 * on (CPU, memory, OS, power, the model's volume, GPUs), and never identifying ones.
 * The receipt writer and `pacer serve`'s manifest take the object probe_collect() returns. */
#ifndef PACER_PROBE_H
#define PACER_PROBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* How a section's facts were obtained. "attested" is reserved for facts an attached
 * server reports about itself; probe_collect() never writes it. */
typedef enum probe_source {
    PROBE_SOURCE_UNKNOWN = 0, /* nothing could be read */
    PROBE_SOURCE_PROBED = 1,  /* read from this machine, complete */
    PROBE_SOURCE_PARTIAL = 2, /* read, but some facts are missing or uncertain */
    PROBE_SOURCE_ATTESTED = 3 /* reported by the server under test (manifest) */
} probe_source;

/* "unknown", "probed", "partial" or "attested". */
const char *probe_source_name(probe_source s);

typedef struct probe_options {
    /* File whose volume is reported (capacity and free space), usually the model; NULL:
     * the current directory's volume. Never recorded itself. */
    const char *model_path;
    /* Take the uncached read sample of model_path (O_DIRECT, or posix_fadvise DONTNEED
     * where O_DIRECT is refused) before the first sample. */
    bool read_sample;
    /* Bytes the read sample reads at most; 0 means 2 GB. */
    uint64_t read_sample_max;
    /* Skip the GPU tools (nvidia-smi, rocminfo): gpus_source becomes "unknown". */
    bool no_gpus;
    /* Tool paths; NULL means "nvidia-smi" / "rocminfo" found on PATH. Tests point these
     * at scripts that print captured outputs. */
    const char *nvidia_smi;
    const char *rocminfo;
    /* Directory that stands for "/" when reading /proc, /sys and /etc (tests); NULL: "/". */
    const char *sys_root;
} probe_options;

/* Collects the hardware object (schema/hardware.h's shape) into *out (a new reference,
 * json_decref() it):
 *   {"source": "probed"|"partial" (the GPU facts are partial),
 *    "cpu":    {"model", "cores", "threads", "features":[...], "source"},
 *    "memory_bytes",
 *    "os":     {"name", "version", "kernel", "source"},
 *    "power":  {"state": "ac"|"battery"|"ac-only"|"unknown", "source"},
 *    "volume": {"capacity_bytes", "free_bytes", "source",
 *               "read_sample": see probe_read_sample_json()   (when asked)},
 *    "gpus":   [{"vendor", "name", "memory_bytes", "memory": "dedicated"|"unified",
 *                "driver_version", "compute_capability", "power_limit_w",
 *                "max_sm_clock_mhz", "max_memory_clock_mhz", "cores" (SMs, compute units)}, ...],
 *    "gpu_count": the GPUs listed, null when gpus_source is "unknown",
 *    "gpus_source": "probed"|"partial"|"unknown"}
 * A fact that could not be read is null. The object has passed redact_hardware() (see
 * redact.h): nothing outside the allowlist, nothing identifying. Returns PACER_OK even
 * when every section is unknown; an error only for a bad argument or no memory. */
pacer_err probe_collect(const probe_options *opt, json_t **out);

/* The uncached read sample of the file at `path` (up to `max_bytes`; 0: 2 GB), as a receipt
 * records it (new reference): {"bytes", "seconds", "gb_per_s", "method": "o_direct" |
 * "fadvise"}, or, when no honest figure can be taken, the same keys null with "method":
 * "none" and "skipped": the reason ("memory-file-system" for tmpfs/ramfs, "pages-stay-cached"
 * when posix_fadvise cannot drop them, "not-found", "cannot-read", "empty-file", "no-memory",
 * "too-fast-to-time"). Never fails: a sample that cannot be taken is a skipped one (NULL
 * only when out of memory). Reads the file: take it before anything else (an engine, a
 * hash) has, so that O_DIRECT is not the only thing keeping the cache out. */
json_t *probe_read_sample_json(const char *path, uint64_t max_bytes);

/* Power state, as the runner watches it. */
typedef enum probe_power {
    PROBE_POWER_UNKNOWN = 0,
    PROBE_POWER_AC = 1,      /* a battery is present and the machine runs on mains */
    PROBE_POWER_BATTERY = 2, /* running on battery */
    PROBE_POWER_AC_ONLY = 3  /* no battery: a desktop or a server */
} probe_power;

/* "unknown", "ac", "battery", "ac-only". */
const char *probe_power_name(probe_power p);
/* Reads the state from /sys/class/power_supply under `sys_root` (NULL: "/"). */
probe_power probe_power_read(const char *sys_root);
/* The runner's check, called at process boundaries and every 30 s: reads the state into
 * *now (may be NULL) and returns PACER_ERR_STATE when it differs from `expected` (the
 * sample taken across the change must be invalidated), PACER_OK when it is the same. */
pacer_err power_check(const char *sys_root, probe_power expected, probe_power *now);

/* The same check on a schedule: start once before the first sample, then poll at every
 * process boundary (force) and from any loop (rereads /sys at most every 30 s). */
#define POWER_WATCH_PERIOD_NS (30ll * 1000000000)
typedef struct power_watch {
    const char *sys_root;  /* NULL: "/" */
    probe_power expected;  /* the state at start */
    probe_power now;       /* the state at the last read */
    long long next_ns;     /* clock_now_ns() time of the next scheduled read */
    bool changed;          /* sticky: the state differed from `expected` at some read */
} power_watch;
void power_watch_start(power_watch *w, const char *sys_root);
/* Returns PACER_ERR_STATE when the state has changed since power_watch_start (then and
 * ever after, until the next start), PACER_OK otherwise. */
pacer_err power_watch_poll(power_watch *w, bool force);

/* Runs argv (argv[0] found on PATH) with stdin on /dev/null and a deadline, appending its
 * standard output (and with `merge_stderr` its standard error) to `out`, whose cap applies.
 * PACER_ERR_TIMEOUT after `timeout_ms` (it is killed), PACER_ERR_TOO_BIG past the cap,
 * PACER_ERR_NOT_FOUND when it cannot start or exits non-zero. For the lab's look at the
 * builds it compares (`--version`, git). */
pacer_err probe_command_run(const char *const *argv, int timeout_ms, bool merge_stderr, buf *out);

#endif
