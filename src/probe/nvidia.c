/* nvidia.c - pure parser of `nvidia-smi --query-gpu=... --format=csv` output and the
 * CUDA_VISIBLE_DEVICES selection. The UUID column is kept only to resolve GPU- entries. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

enum nv_col { NV_INDEX, NV_NAME, NV_UUID, NV_MEMORY, NV_DRIVER, NV_CAP, NV_POWER, NV_SM, NV_MEM_CLOCK, NV__COUNT };

/* Query field names, in the column order of PROBE_NVIDIA_FIELDS. */
static const char *const nv_fields[NV__COUNT] = {
    "index", "name", "uuid", "memory.total", "driver_version",
    "compute_cap", "power.limit", "clocks.max.sm", "clocks.max.memory",
};

/* Splits a CSV line into trimmed fields (at most `max`); returns the count. Modifies line. */
static size_t csv_split(char *line, char **fields, size_t max) {
    size_t n = 0;
    for (char *p = line; n < max;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (isspace((unsigned char)*p)) p++;
        char *e = p + strlen(p);
        while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
        fields[n++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

/* The query field a header cell names ("memory.total [MiB]": its unit dropped), or -1. */
static int nv_field_of(const char *cell) {
    size_t len = strcspn(cell, " ");
    for (int k = 0; k < NV__COUNT; k++)
        if (strlen(nv_fields[k]) == len && strncmp(cell, nv_fields[k], len) == 0) return k;
    return -1;
}

static bool nv_missing(const char *v) {
    return !*v || strstr(v, "N/A") || strstr(v, "Not Supported") || strstr(v, "Unknown");
}

static double nv_number(const char *v) {
    if (nv_missing(v)) return 0;
    char *end;
    double d = strtod(v, &end);
    return end == v || d < 0 ? 0 : d;
}

pacer_err probe_nvidia_parse(const char *text, size_t n, probe_gpu_list *all) {
    memset(all, 0, sizeof *all);
    int col[NV__COUNT];
    for (int i = 0; i < NV__COUNT; i++) col[i] = i; /* noheader: our own order */
    char line[2048];
    bool first = true;
    for (size_t i = 0; probe_line_copy(text, n, &i, line, sizeof line);) {
        char *f[32];
        size_t nf = csv_split(line, f, 32);
        if (nf == 1 && !f[0][0]) continue;
        /* a header names query fields in the order they were asked for, which need not
         * start with index ("compute_cap, compute_mode, driver_version, name, index") */
        bool header = false;
        for (size_t c = 0; first && c < nf && !header; c++) header = nv_field_of(f[c]) >= 0;
        if (header) {
            for (int k = 0; k < NV__COUNT; k++) col[k] = -1;
            for (size_t c = 0; c < nf; c++) {
                int k = nv_field_of(f[c]);
                if (k >= 0) col[k] = (int)c;
            }
            first = false;
            continue;
        }
        first = false;
        if (all->count >= PROBE_GPU_MAX) return PACER_ERR_TOO_BIG;
        if (col[NV_NAME] < 0 || (size_t)col[NV_NAME] >= nf) return PACER_ERR_PARSE;
        probe_gpu *g = &all->gpu[all->count++];
        g->is_gpu = true;
        snprintf(g->vendor, sizeof g->vendor, "nvidia");
#define NV_GET(k) (col[k] >= 0 && (size_t)col[k] < nf ? f[col[k]] : "")
        probe_copy(g->name, sizeof g->name, NV_GET(NV_NAME));
        probe_name_normalise(g->name, sizeof g->name);
        if (!probe_name_allowed(g->name)) g->name[0] = '\0';
        probe_copy(g->uuid, sizeof g->uuid, NV_GET(NV_UUID));
        g->memory_bytes = (uint64_t)nv_number(NV_GET(NV_MEMORY)) * 1024u * 1024u; /* MiB */
        if (!nv_missing(NV_GET(NV_DRIVER))) probe_copy(g->driver, sizeof g->driver, NV_GET(NV_DRIVER));
        if (!nv_missing(NV_GET(NV_CAP))) probe_copy(g->compute_cap, sizeof g->compute_cap, NV_GET(NV_CAP));
        g->power_limit_w = nv_number(NV_GET(NV_POWER));
        g->max_sm_mhz = (int)nv_number(NV_GET(NV_SM));
        g->max_mem_mhz = (int)nv_number(NV_GET(NV_MEM_CLOCK));
#undef NV_GET
    }
    all->source = all->count ? PROBE_SOURCE_PROBED : PROBE_SOURCE_UNKNOWN;
    return PACER_OK;
}

void probe_nvidia_select(const probe_gpu_list *all, const char *cuda, probe_gpu_list *out) {
    const char *uuids[PROBE_GPU_MAX];
    size_t kept[PROBE_GPU_MAX];
    bool partial = false;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < all->count; i++) uuids[i] = all->gpu[i].uuid;
    size_t k = probe_visible_apply(cuda, uuids, all->count, kept, &partial);
    for (size_t i = 0; i < k; i++) {
        const probe_gpu *g = &all->gpu[kept[i]];
        if (!g->name[0]) {
            partial = true;
            continue;
        }
        out->gpu[out->count++] = *g;
    }
    out->source = partial ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_PROBED;
}
