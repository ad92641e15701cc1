/* rocm.c - pure parser of `rocminfo` output (agents: vendor, marketing name, first global
 * memory pool, compute units, Uuid kept only for comparison) and HIP's visibility rules.
 * ROCR_VISIBLE_DEVICES is already applied by rocminfo itself and is never applied here. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

/* Splits "<indent>Key:   value" into key and value (both trimmed); false for other lines. */
static bool ri_field(const char *line, size_t len, int *indent, char *key, size_t kcap, char *val, size_t vcap) {
    size_t i = 0;
    while (i < len && line[i] == ' ') i++;
    *indent = (int)i;
    const char *colon = memchr(line + i, ':', len - i);
    if (!colon) return false;
    size_t klen = (size_t)(colon - (line + i));
    while (klen > 0 && line[i + klen - 1] == ' ') klen--;
    if (klen == 0 || klen >= kcap) return false;
    memcpy(key, line + i, klen);
    key[klen] = '\0';
    const char *v = colon + 1, *end = line + len;
    while (v < end && isspace((unsigned char)*v)) v++;
    while (end > v && isspace((unsigned char)end[-1])) end--;
    size_t m = (size_t)(end - v) < vcap - 1 ? (size_t)(end - v) : vcap - 1;
    memcpy(val, v, m);
    val[m] = '\0';
    return true;
}

/* "Agent 12" (after trimming) */
static bool ri_agent_header(const char *line, size_t len) {
    while (len > 0 && isspace((unsigned char)line[len - 1])) len--;
    while (len > 0 && *line == ' ') line++, len--;
    if (len < 7 || strncmp(line, "Agent ", 6) != 0) return false;
    for (size_t i = 6; i < len; i++)
        if (!isdigit((unsigned char)line[i])) return false;
    return true;
}

pacer_err probe_rocminfo_parse(const char *text, size_t n, probe_gpu_list *agents) {
    memset(agents, 0, sizeof *agents);
    char driver[48] = "";
    char key[64], val[256];
    probe_gpu *cur = NULL;
    bool in_global_pool = false, pool_done = false, seen_header = false;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && text[e] != '\n') e++;
        const char *line = text + i;
        size_t len = e - i;
        i = e + 1;
        if (!seen_header && len > 24 && strncmp(line, "ROCk module version ", 20) == 0) {
            const char *v = line + 20;
            size_t k = 0;
            while (k + 1 < sizeof driver && v + k < line + len && v[k] != ' ') k++;
            memcpy(driver, v, k);
            driver[k] = '\0';
        }
        if (ri_agent_header(line, len)) {
            if (agents->count >= PROBE_GPU_MAX) return PACER_ERR_TOO_BIG;
            cur = &agents->gpu[agents->count++];
            seen_header = true;
            in_global_pool = pool_done = false;
            continue;
        }
        int indent;
        if (!cur || !ri_field(line, len, &indent, key, sizeof key, val, sizeof val)) continue;
        if (indent == 2) {
            /* "GPU-XX" / "CPU-XX" is what rocminfo prints for a device without a unique id */
            if (strcmp(key, "Uuid") == 0 && strcmp(val + (strlen(val) > 3 ? strlen(val) - 3 : 0), "-XX") != 0)
                probe_copy(cur->uuid, sizeof cur->uuid, val);
            else if (strcmp(key, "Marketing Name") == 0) probe_copy(cur->name, sizeof cur->name, val);
            else if (strcmp(key, "Vendor Name") == 0) {
                for (size_t k = 0; k < sizeof cur->vendor - 1 && val[k]; k++)
                    cur->vendor[k] = (char)tolower((unsigned char)val[k]);
            } else if (strcmp(key, "Device Type") == 0) cur->is_gpu = strcmp(val, "GPU") == 0;
            else if (strcmp(key, "Compute Unit") == 0) cur->compute_units = atoi(val);
        } else if (!pool_done && strcmp(key, "Segment") == 0) {
            in_global_pool = strncmp(val, "GLOBAL", 6) == 0;
        } else if (in_global_pool && !pool_done && strcmp(key, "Size") == 0) {
            cur->memory_bytes = (uint64_t)strtoull(val, NULL, 10) * 1024u; /* "N(0x..) KB" */
            pool_done = true;
        }
    }
    if (!seen_header) return PACER_ERR_PARSE;
    for (size_t k = 0; k < agents->count; k++) {
        probe_gpu *g = &agents->gpu[k];
        probe_copy(g->driver, sizeof g->driver, driver);
        probe_name_normalise(g->name, sizeof g->name);
        if (!probe_name_allowed(g->name)) g->name[0] = '\0';
        size_t nl = strlen(g->name);
        g->unified = nl > 9 && strcmp(g->name + nl - 9, " Graphics") == 0; /* APU */
    }
    agents->source = PROBE_SOURCE_PROBED;
    return PACER_OK;
}

void probe_rocm_select(const probe_gpu_list *agents, const char *hip, const char *cuda, probe_gpu_list *out) {
    const char *uuids[PROBE_GPU_MAX];
    size_t gpu_at[PROBE_GPU_MAX], kept[PROBE_GPU_MAX], n_gpus = 0;
    bool partial = false;
    memset(out, 0, sizeof *out);
    /* an index counts every GPU agent, named or not */
    for (size_t i = 0; i < agents->count; i++) {
        if (!agents->gpu[i].is_gpu) continue;
        gpu_at[n_gpus] = i;
        uuids[n_gpus++] = agents->gpu[i].uuid;
    }
    size_t k = probe_visible_apply(probe_rocm_visible_value(hip, cuda), uuids, n_gpus, kept, &partial);
    for (size_t j = 0; j < k; j++) {
        const probe_gpu *g = &agents->gpu[gpu_at[kept[j]]];
        if (!g->name[0]) { /* keeps its place, records nothing */
            partial = true;
            continue;
        }
        out->gpu[out->count++] = *g;
    }
    out->source = partial ? PROBE_SOURCE_PARTIAL : PROBE_SOURCE_PROBED;
}
