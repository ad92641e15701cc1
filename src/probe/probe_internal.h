/* probe_internal.h - what the files of src/probe/ share: the values the pure parsers fill
 * (bytes in, values out, no I/O) and the thin readers that feed them. */
#ifndef PACER_PROBE_INTERNAL_H
#define PACER_PROBE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "probe/probe.h"

/* Copies src into dst (cap bytes), truncating; dst is always terminated. */
static inline void probe_copy(char *dst, size_t cap, const char *src) {
    size_t n = 0;
    while (n + 1 < cap && src[n]) n++;
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
    dst[n] = '\0';
}

#define PROBE_GPU_MAX 64
#define PROBE_FEATURE_MAX 24
#define PROBE_TOOL_OUTPUT_MAX (4u << 20)

typedef struct probe_cpu {
    char model[128];  /* empty when unknown */
    int cores;        /* physical cores, 0 unknown */
    int threads;      /* logical CPUs, 0 unknown */
    const char *features[PROBE_FEATURE_MAX]; /* static names, in table order */
    size_t n_features;
    bool features_known;
} probe_cpu;

typedef struct probe_os {
    char name[64];
    char version[64];
    char kernel[96];
} probe_os;

typedef struct probe_gpu {
    char vendor[16];        /* "nvidia", "amd", "apple" */
    char name[96];          /* "" when the name failed the allowlist */
    char uuid[96];          /* compared only, never recorded */
    uint64_t memory_bytes;  /* 0 unknown */
    bool unified;           /* memory shared with the CPU (APU, Apple) */
    char driver[48];        /* "" unknown */
    char compute_cap[16];   /* "" unknown */
    double power_limit_w;   /* 0 unknown */
    int max_sm_mhz, max_mem_mhz, compute_units; /* 0 unknown */
    bool is_gpu;            /* rocminfo: Device Type GPU (CPU agents are parsed too) */
} probe_gpu;

typedef struct probe_gpu_list {
    probe_gpu gpu[PROBE_GPU_MAX];
    size_t count;
    probe_source source;
} probe_gpu_list;

/* --- linux.c: /proc/cpuinfo, /proc/meminfo, os-release --- */
void probe_cpuinfo_parse(const char *text, size_t n, probe_cpu *out);
/* MemTotal in bytes, 0 when absent. */
uint64_t probe_meminfo_parse(const char *text, size_t n);
void probe_os_release_parse(const char *text, size_t n, probe_os *out);

/* --- names.c: the name rules of every probe source --- */
/* Normalises a CPU or GPU name in place: trims, squeezes blanks, " w/ " -> " with ". */
void probe_name_normalise(char *s, size_t cap);
/* True when `s` may be recorded as a device name: 1..80 bytes of letters, digits and
 * " ._()+/-@,", at least one letter, no run of 12 hex digits (see redact.h's allowlist). */
bool probe_name_allowed(const char *s);
/* The next line of text[0..n) from *at (without its '\n'), cut to cap - 1 bytes, into
 * `line`; *at moves past it. False at the end of the text. */
bool probe_line_copy(const char *text, size_t n, size_t *at, char *line, size_t cap);

/* --- visible.c: the CUDA/HIP visibility rules over an ordered list of GPUs --- */
/* Applies a *_VISIBLE_DEVICES `value` (NULL: unset, every GPU) to `n` GPUs whose UUIDs are
 * `uuids` (entries may be "" when the tool printed none). Writes the kept positions in
 * order into kept[] (room for n) and returns how many; sets *partial when a GPU- entry
 * matched no UUID while some GPU had none printed (it may have named that one). */
size_t probe_visible_apply(const char *value, const char *const *uuids, size_t n, size_t *kept,
                           bool *partial);
/* The value HIP uses: HIP_VISIBLE_DEVICES unless unset or only a pair of quotes, then
 * CUDA_VISIBLE_DEVICES (NULL when that is unset too). */
const char *probe_rocm_visible_value(const char *hip, const char *cuda);

/* --- nvidia.c --- */
/* Parses `nvidia-smi --query-gpu=PROBE_NVIDIA_FIELDS --format=csv` output (header line
 * with units, or noheader/nounits in the same column order) into every GPU it lists. */
#define PROBE_NVIDIA_FIELDS \
    "index,name,uuid,memory.total,driver_version,compute_cap,power.limit,clocks.max.sm,clocks.max.memory"
pacer_err probe_nvidia_parse(const char *text, size_t n, probe_gpu_list *all);
/* Keeps the GPUs CUDA_VISIBLE_DEVICES (`cuda`, NULL unset) leaves visible; sets source. */
void probe_nvidia_select(const probe_gpu_list *all, const char *cuda, probe_gpu_list *out);

/* --- rocm.c --- */
/* Parses rocminfo output: every agent (CPU and GPU) in order into *agents, the driver
 * version from "ROCk module version X is loaded" ("" for the in-kernel driver). */
pacer_err probe_rocminfo_parse(const char *text, size_t n, probe_gpu_list *agents);
/* Applies HIP's visibility rules (hip/cuda: the environment values, NULL unset) to the
 * GPU agents and writes the recorded GPUs and the source into *out. */
void probe_rocm_select(const probe_gpu_list *agents, const char *hip, const char *cuda,
                       probe_gpu_list *out);

/* --- macos.c (parsers only) --- */
/* `sysctl` lines "key: value": machdep.cpu.brand_string, hw.physicalcpu, hw.logicalcpu,
 * hw.memsize, kern.osproductversion, kern.osrelease. */
void probe_sysctl_parse(const char *text, size_t n, probe_cpu *cpu, uint64_t *mem_bytes,
                        probe_os *os);
/* `system_profiler -json SPHardwareDataType SPDisplaysDataType [SPSoftwareDataType]`:
 * chip, memory, GPU core count, OS version. */
pacer_err probe_system_profiler_parse(const char *text, size_t n, probe_cpu *cpu,
                                      uint64_t *mem_bytes, probe_os *os, probe_gpu_list *gpus);

/* --- power.c --- */
/* Decides the state from the power_supply entries: each entry's "type" and "status" /
 * "online" contents, as parallel arrays (NULL for a missing file). */
probe_power probe_power_decide(size_t n, const char *const *types, const char *const *status,
                               const char *const *online);

/* --- disk.c --- */
typedef struct probe_read_sample {
    uint64_t bytes;
    double seconds;
    const char *method; /* "o_direct" or "fadvise" */
} probe_read_sample;
pacer_err probe_volume_read(const char *path, uint64_t *capacity, uint64_t *free_bytes);
/* Reads up to `max_bytes` (0: 2 GB) of `path` bypassing the page cache (O_DIRECT, else
 * after posix_fadvise DONTNEED) and times it. PACER_ERR_STATE when the file lives in memory
 * (tmpfs, ramfs) or its pages stay cached whatever is done: such a figure would be the
 * page cache's, not the disk's. */
pacer_err probe_read_sample_take(const char *path, uint64_t max_bytes, probe_read_sample *out);

/* --- tool.c --- */
/* Runs argv (argv[0] found on PATH) with stdin and stderr on /dev/null, appending its
 * stdout to `out` (whose cap applies); kills it after `timeout_ms`. PACER_ERR_NOT_FOUND
 * when the program does not exist or exits non-zero. */
pacer_err probe_tool_run(const char *const *argv, int timeout_ms, buf *out);
/* Reads sys_root + path (sys_root NULL: "/") into out. */
pacer_err probe_file_read(const char *sys_root, const char *path, buf *out);

#endif
