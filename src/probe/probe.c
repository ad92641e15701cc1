/* probe.c - probe_collect(): runs the thin readers (files under /proc, /sys, /etc, uname,
 * statvfs, nvidia-smi, rocminfo), hands their bytes to the parsers and builds the
 * hardware object, which then passes the redaction allowlist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "probe/probe_internal.h"
#include "probe/redact.h"

enum { TOOL_TIMEOUT_MS = 10000 };

static const char *const source_names[] = {"unknown", "probed", "partial", "attested"};

const char *probe_source_name(probe_source s) {
    return (unsigned)s < sizeof source_names / sizeof source_names[0] ? source_names[s] : "unknown";
}

static json_t *str_or_null(const char *s) {
    return s && s[0] ? json_string(s) : json_null();
}

static json_t *int_or_null(uint64_t v) {
    return v ? json_integer((json_int_t)v) : json_null();
}

static json_t *cpu_section(const char *root) {
    buf b;
    probe_cpu cpu;
    memset(&cpu, 0, sizeof cpu);
    buf_init(&b, PROBE_TOOL_OUTPUT_MAX);
    if (probe_file_read(root, "/proc/cpuinfo", &b) == PACER_OK && b.data) probe_cpuinfo_parse(b.data, b.len, &cpu);
    buf_free(&b);
    if (!probe_name_allowed(cpu.model)) cpu.model[0] = '\0';
    json_t *features = json_array();
    for (size_t i = 0; i < cpu.n_features; i++) json_array_append_new(features, json_string(cpu.features[i]));
    int known = !!cpu.model[0] + (cpu.cores > 0) + (cpu.threads > 0) + cpu.features_known;
    probe_source src = known == 4 ? PROBE_SOURCE_PROBED : known ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_UNKNOWN;
    return json_pack("{s:o, s:o, s:o, s:o, s:s}", "model", str_or_null(cpu.model), "cores",
                     int_or_null((uint64_t)cpu.cores), "threads", int_or_null((uint64_t)cpu.threads), "features",
                     cpu.features_known ? features : (json_decref(features), json_null()), "source",
                     probe_source_name(src));
}

/* memory_bytes: the total, or null. */
static json_t *memory_total(const char *root) {
    buf b;
    uint64_t total = 0;
    buf_init(&b, 1u << 20);
    if (probe_file_read(root, "/proc/meminfo", &b) == PACER_OK && b.data) total = probe_meminfo_parse(b.data, b.len);
    buf_free(&b);
    return int_or_null(total);
}

static json_t *os_section(const char *root) {
    buf b;
    probe_os os;
    memset(&os, 0, sizeof os);
    buf_init(&b, 64u << 10);
    if (probe_file_read(root, "/etc/os-release", &b) != PACER_OK) {
        buf_reset(&b);
        probe_file_read(root, "/usr/lib/os-release", &b);
    }
    if (b.data) probe_os_release_parse(b.data, b.len, &os);
    buf_free(&b);
    struct utsname u;
    if (!root && uname(&u) == 0) probe_copy(os.kernel, sizeof os.kernel, u.release);
    else if (root) { /* tests: the release as /proc/sys/kernel/osrelease holds it */
        buf_init(&b, 256);
        if (probe_file_read(root, "/proc/sys/kernel/osrelease", &b) == PACER_OK && b.data) {
            b.data[strcspn(b.data, "\n")] = '\0';
            probe_copy(os.kernel, sizeof os.kernel, b.data);
        }
        buf_free(&b);
    }
    int known = !!os.name[0] + !!os.version[0] + !!os.kernel[0];
    probe_source src = known == 3 ? PROBE_SOURCE_PROBED : known ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_UNKNOWN;
    return json_pack("{s:o, s:o, s:o, s:s}", "name", str_or_null(os.name), "version", str_or_null(os.version),
                     "kernel", str_or_null(os.kernel), "source", probe_source_name(src));
}

static json_t *power_section(const char *root) {
    probe_power p = probe_power_read(root);
    return json_pack("{s:s, s:s}", "state", probe_power_name(p), "source",
                     probe_source_name(p == PROBE_POWER_UNKNOWN ? PROBE_SOURCE_UNKNOWN : PROBE_SOURCE_PROBED));
}

static json_t *volume_section(const probe_options *opt) {
    uint64_t cap = 0, avail = 0;
    const char *path = opt->model_path ? opt->model_path : ".";
    bool ok = probe_volume_read(path, &cap, &avail) == PACER_OK;
    json_t *v = json_pack("{s:o, s:o, s:s}", "capacity_bytes", ok ? json_integer((json_int_t)cap) : json_null(),
                          "free_bytes", ok ? json_integer((json_int_t)avail) : json_null(), "source",
                          probe_source_name(ok ? PROBE_SOURCE_PROBED : PROBE_SOURCE_UNKNOWN));
    if (opt->read_sample && opt->model_path)
        json_object_set_new(v, "read_sample", probe_read_sample_json(opt->model_path, opt->read_sample_max));
    return v;
}

static json_t *gpu_json(const probe_gpu *g) {
    return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "vendor", g->vendor, "name", g->name,
                     "memory_bytes", int_or_null(g->memory_bytes), "memory", g->unified ? "unified" : "dedicated",
                     "driver_version", str_or_null(g->driver), "compute_capability", str_or_null(g->compute_cap),
                     "power_limit_w", g->power_limit_w > 0 ? json_real(g->power_limit_w) : json_null(),
                     "max_sm_clock_mhz", int_or_null((uint64_t)g->max_sm_mhz), "max_memory_clock_mhz",
                     int_or_null((uint64_t)g->max_mem_mhz), "cores",
                     int_or_null((uint64_t)g->compute_units));
}

/* Runs one GPU tool; true when it printed something. */
static bool gpu_tool(const char *const *argv, buf *out) {
    buf_init(out, PROBE_TOOL_OUTPUT_MAX);
    return probe_tool_run(argv, TOOL_TIMEOUT_MS, out) == PACER_OK && out->len > 0;
}

static void gpus_collect(const probe_options *opt, json_t *hw) {
    struct {
        probe_gpu_list all, kept, merged;
    } *l = calloc(1, sizeof *l); /* some 80 KB: not on the stack */
    if (!l) {
        json_object_set_new(hw, "gpus", json_array());
        json_object_set_new(hw, "gpus_source", json_string(probe_source_name(PROBE_SOURCE_UNKNOWN)));
        return;
    }
    probe_source src = PROBE_SOURCE_UNKNOWN;
    bool any = false, partial = false;
    if (!opt->no_gpus) {
        buf b;
        const char *nv[] = {opt->nvidia_smi ? opt->nvidia_smi : "nvidia-smi", "--query-gpu=" PROBE_NVIDIA_FIELDS,
                            "--format=csv", NULL};
        if (gpu_tool(nv, &b) && probe_nvidia_parse(b.data, b.len, &l->all) == PACER_OK) {
            probe_nvidia_select(&l->all, getenv("CUDA_VISIBLE_DEVICES"), &l->kept);
            any = true;
            partial |= l->kept.source == PROBE_SOURCE_PARTIAL;
            for (size_t i = 0; i < l->kept.count && l->merged.count < PROBE_GPU_MAX; i++) l->merged.gpu[l->merged.count++] = l->kept.gpu[i];
        }
        buf_free(&b);
        const char *ri[] = {opt->rocminfo ? opt->rocminfo : "rocminfo", NULL};
        if (gpu_tool(ri, &b) && probe_rocminfo_parse(b.data, b.len, &l->all) == PACER_OK) {
            probe_rocm_select(&l->all, getenv("HIP_VISIBLE_DEVICES"), getenv("CUDA_VISIBLE_DEVICES"), &l->kept);
            any = true;
            partial |= l->kept.source == PROBE_SOURCE_PARTIAL;
            for (size_t i = 0; i < l->kept.count && l->merged.count < PROBE_GPU_MAX; i++) l->merged.gpu[l->merged.count++] = l->kept.gpu[i];
        }
        buf_free(&b);
        if (any) src = partial ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_PROBED;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < l->merged.count; i++) json_array_append_new(arr, gpu_json(&l->merged.gpu[i]));
    json_object_set_new(hw, "gpus", arr);
    json_object_set_new(hw, "gpus_source", json_string(probe_source_name(src)));
    free(l);
}

pacer_err probe_collect(const probe_options *opt, json_t **out) {
    static const probe_options defaults;
    if (!out) return PACER_ERR_ARG;
    if (!opt) opt = &defaults;
    *out = NULL;
    json_t *hw = json_object();
    if (!hw) return PACER_ERR_NOMEM;
    const char *root = opt->sys_root;
    json_object_set_new(hw, "cpu", cpu_section(root));
    json_object_set_new(hw, "memory_bytes", memory_total(root));
    json_object_set_new(hw, "os", os_section(root));
    json_object_set_new(hw, "power", power_section(root));
    json_object_set_new(hw, "volume", volume_section(opt));
    gpus_collect(opt, hw);
    /* gpu_count as manifests attest it: null when the GPUs are unknown. A GPU the visibility
     * variables name that cannot be matched, or one without a name, leaves the GPU facts
     * partial: so is the hardware as a whole. */
    const char *gpus_src = json_string_value(json_object_get(hw, "gpus_source"));
    bool gpus_known = gpus_src && strcmp(gpus_src, "unknown") != 0;
    json_object_set_new(hw, "gpu_count", gpus_known ? json_integer((json_int_t)json_array_size(json_object_get(hw, "gpus")))
                                                    : json_null());
    bool partial = gpus_src && strcmp(gpus_src, "partial") == 0;
    json_object_set_new(hw, "source", json_string(probe_source_name(partial ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_PROBED)));
    redact_context ctx;
    redact_context_local(&ctx);
    redact_hardware(hw, &ctx);
    *out = hw;
    return PACER_OK;
}
