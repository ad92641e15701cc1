/* macos.c - pure parsers of macOS `sysctl` lines and `system_profiler -json` output:
 * chip, cores, memory, GPU core count, OS version. Serial numbers, host and user names in
 * those outputs are never read. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "probe/probe_internal.h"

void probe_sysctl_parse(const char *text, size_t n, probe_cpu *cpu, uint64_t *mem_bytes, probe_os *os) {
    char line[512];
    for (size_t i = 0; probe_line_copy(text, n, &i, line, sizeof line);) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        if (strcmp(line, "machdep.cpu.brand_string") == 0) probe_copy(cpu->model, sizeof cpu->model, v);
        else if (strcmp(line, "hw.physicalcpu") == 0) cpu->cores = atoi(v);
        else if (strcmp(line, "hw.logicalcpu") == 0) cpu->threads = atoi(v);
        else if (strcmp(line, "hw.memsize") == 0) *mem_bytes = strtoull(v, NULL, 10);
        else if (strcmp(line, "kern.osproductversion") == 0) probe_copy(os->version, sizeof os->version, v);
        else if (strcmp(line, "kern.osrelease") == 0) probe_copy(os->kernel, sizeof os->kernel, v);
        else if (strcmp(line, "hw.optional.arm.FEAT_DotProd") == 0 && atoi(v) == 1) {
            if (cpu->n_features < PROBE_FEATURE_MAX) cpu->features[cpu->n_features++] = "dotprod";
        } else if (strcmp(line, "hw.optional.arm.FEAT_I8MM") == 0 && atoi(v) == 1) {
            if (cpu->n_features < PROBE_FEATURE_MAX) cpu->features[cpu->n_features++] = "i8mm";
        }
    }
    if (cpu->model[0] || os->version[0]) snprintf(os->name, sizeof os->name, "macOS");
    probe_name_normalise(cpu->model, sizeof cpu->model);
}

/* "32 GB" -> bytes; 0 when not of that form. */
static uint64_t sp_memory(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    while (*end == ' ') end++;
    if (strcmp(end, "GB") == 0) return (uint64_t)v << 30;
    if (strcmp(end, "MB") == 0) return (uint64_t)v << 20;
    if (strcmp(end, "TB") == 0) return (uint64_t)v << 40;
    return 0;
}

static json_t *sp_first(json_t *root, const char *type) {
    json_t *arr = json_object_get(root, type);
    return json_is_array(arr) ? json_array_get(arr, 0) : NULL;
}

pacer_err probe_system_profiler_parse(const char *text, size_t n, probe_cpu *cpu, uint64_t *mem_bytes,
                                      probe_os *os, probe_gpu_list *gpus) {
    json_error_t jerr;
    json_t *root = json_loadb(text, n, 0, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return PACER_ERR_PARSE;
    }
    json_t *hw = sp_first(root, "SPHardwareDataType");
    if (hw) {
        const char *chip = json_get_str(hw, "chip_type", json_get_str(hw, "cpu_type", ""));
        if (chip[0]) probe_copy(cpu->model, sizeof cpu->model, chip);
        uint64_t m = sp_memory(json_get_str(hw, "physical_memory", ""));
        if (m) *mem_bytes = m;
        /* "proc 12:8:4": total, performance, efficiency cores */
        const char *procs = json_get_str(hw, "number_processors", "");
        int total = 0;
        if (sscanf(procs, "proc %d", &total) == 1 && total > 0) cpu->cores = cpu->threads = total;
    }
    json_t *sw = sp_first(root, "SPSoftwareDataType");
    if (sw) {
        /* "macOS 14.1.1 (23B81)" */
        char name[64] = "", version[64] = "";
        if (sscanf(json_get_str(sw, "os_version", ""), "%63s %63s", name, version) == 2) {
            probe_copy(os->name, sizeof os->name, name);
            probe_copy(os->version, sizeof os->version, version);
        }
        const char *kv = json_get_str(sw, "kernel_version", "");
        if (strncmp(kv, "Darwin ", 7) == 0) probe_copy(os->kernel, sizeof os->kernel, kv + 7);
    }
    json_t *disp = json_object_get(root, "SPDisplaysDataType");
    size_t i;
    json_t *d;
    if (json_is_array(disp)) json_array_foreach(disp, i, d) {
        if (gpus->count >= PROBE_GPU_MAX) break;
        probe_gpu *g = &gpus->gpu[gpus->count];
        memset(g, 0, sizeof *g);
        probe_copy(g->name, sizeof g->name, json_get_str(d, "sppci_model", ""));
        probe_name_normalise(g->name, sizeof g->name);
        if (!probe_name_allowed(g->name)) continue;
        const char *vendor = json_get_str(d, "spdisplays_vendor", "");
        bool apple = strstr(vendor, "Apple") || strncmp(g->name, "Apple ", 6) == 0;
        probe_copy(g->vendor, sizeof g->vendor, apple ? "apple" : "other");
        g->compute_units = atoi(json_get_str(d, "sppci_cores", "0"));
        g->unified = apple;
        if (apple) g->memory_bytes = *mem_bytes;
        g->is_gpu = true;
        gpus->count++;
    }
    gpus->source = gpus->count ? PROBE_SOURCE_PROBED : PROBE_SOURCE_UNKNOWN;
    probe_name_normalise(cpu->model, sizeof cpu->model);
    json_decref(root);
    return PACER_OK;
}
