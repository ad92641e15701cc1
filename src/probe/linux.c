/* linux.c - pure parsers of /proc/cpuinfo, /proc/meminfo and os-release. The name rules
 * shared by every probe source are in names.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

/* The ISA features that matter for inference, in the order they are recorded. Each maps
 * a /proc/cpuinfo flag (x86 "flags", arm64 "Features") to the recorded name. */
static const struct {
    const char *flag;
    const char *name;
} probe_feature_table[] = {
    {"avx2", "avx2"},           {"fma", "fma"},
    {"f16c", "f16c"},           {"avx_vnni", "avx_vnni"},
    {"avx512f", "avx512f"},     {"avx512bw", "avx512bw"},
    {"avx512vl", "avx512vl"},   {"avx512_vnni", "avx512_vnni"},
    {"avx512_bf16", "avx512_bf16"}, {"avx512_fp16", "avx512_fp16"},
    {"amx_tile", "amx_tile"},   {"amx_int8", "amx_int8"},
    {"amx_bf16", "amx_bf16"},   {"asimd", "neon"},
    {"asimddp", "dotprod"},     {"i8mm", "i8mm"},
    {"sve", "sve"},             {"sve2", "sve2"},
};

/* Copies the trimmed value of a "key<blanks>: value" line into out; false when `line`
 * (of length len) is not for `key`. */
static bool line_value(const char *line, size_t len, const char *key, char *out, size_t cap) {
    size_t k = strlen(key);
    if (len < k || strncmp(line, key, k) != 0) return false;
    size_t i = k;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i >= len || line[i] != ':') return false;
    i++;
    while (i < len && isspace((unsigned char)line[i])) i++;
    size_t e = len;
    while (e > i && isspace((unsigned char)line[e - 1])) e--;
    size_t m = e - i < cap - 1 ? e - i : cap - 1;
    memcpy(out, line + i, m);
    out[m] = '\0';
    return true;
}

static bool word_in(const char *list, const char *word) {
    size_t w = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += w) {
        bool start = p == list || p[-1] == ' ' || p[-1] == '\t';
        bool end = p[w] == '\0' || p[w] == ' ' || p[w] == '\t';
        if (start && end) return true;
    }
    return false;
}

void probe_cpuinfo_parse(const char *text, size_t n, probe_cpu *out) {
    memset(out, 0, sizeof *out);
    char value[8192];
    char flags[8192] = "";
    int threads = 0, siblings = 0, cpu_cores = 0;
    /* physical cores: distinct (physical id, core id) pairs */
    enum { MAX_PAIRS = 4096 };
    static _Thread_local int pairs[MAX_PAIRS][2];
    int n_pairs = 0, phys = -1;
    bool have_core_ids = false;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && text[e] != '\n') e++;
        const char *line = text + i;
        size_t len = e - i;
        if (line_value(line, len, "processor", value, sizeof value) && isdigit((unsigned char)value[0])) {
            threads++;
        } else if (!out->model[0] && (line_value(line, len, "model name", value, sizeof value) ||
                                      line_value(line, len, "Model", value, sizeof value))) {
            probe_copy(out->model, sizeof out->model, value);
        } else if (!flags[0] && (line_value(line, len, "flags", value, sizeof value) ||
                                 line_value(line, len, "Features", value, sizeof value))) {
            probe_copy(flags, sizeof flags, value);
            out->features_known = true;
        } else if (line_value(line, len, "physical id", value, sizeof value)) {
            phys = atoi(value);
        } else if (line_value(line, len, "core id", value, sizeof value)) {
            int core = atoi(value);
            have_core_ids = true;
            bool seen = false;
            for (int k = 0; k < n_pairs && !seen; k++) seen = pairs[k][0] == phys && pairs[k][1] == core;
            if (!seen && n_pairs < MAX_PAIRS) {
                pairs[n_pairs][0] = phys;
                pairs[n_pairs][1] = core;
                n_pairs++;
            }
        } else if (!cpu_cores && line_value(line, len, "cpu cores", value, sizeof value)) {
            cpu_cores = atoi(value);
        } else if (!siblings && line_value(line, len, "siblings", value, sizeof value)) {
            siblings = atoi(value);
        }
        i = e + 1;
    }
    out->threads = threads;
    if (have_core_ids) out->cores = n_pairs;
    else if (threads > 0 && !cpu_cores) out->cores = threads; /* arm64: no SMT fields */
    else if (cpu_cores > 0 && siblings > 0) out->cores = threads / siblings * cpu_cores;
    for (size_t k = 0; k < sizeof probe_feature_table / sizeof probe_feature_table[0]; k++)
        if (word_in(flags, probe_feature_table[k].flag) && out->n_features < PROBE_FEATURE_MAX)
            out->features[out->n_features++] = probe_feature_table[k].name;
    probe_name_normalise(out->model, sizeof out->model);
}

uint64_t probe_meminfo_parse(const char *text, size_t n) {
    char value[128];
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && text[e] != '\n') e++;
        if (line_value(text + i, e - i, "MemTotal", value, sizeof value)) {
            char *end;
            unsigned long long kb = strtoull(value, &end, 10);
            while (*end == ' ') end++;
            if (end == value || strcmp(end, "kB") != 0) return 0;
            return (uint64_t)kb * 1024u;
        }
        i = e + 1;
    }
    return 0;
}

/* Copies an os-release value, dropping one pair of surrounding quotes. */
static void os_value(const char *v, size_t len, char *out, size_t cap) {
    if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
        v++;
        len -= 2;
    }
    size_t m = len < cap - 1 ? len : cap - 1;
    memcpy(out, v, m);
    out[m] = '\0';
}

void probe_os_release_parse(const char *text, size_t n, probe_os *out) {
    char version[64] = "";
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && text[e] != '\n') e++;
        const char *line = text + i;
        size_t len = e - i;
        if (len > 5 && strncmp(line, "NAME=", 5) == 0) os_value(line + 5, len - 5, out->name, sizeof out->name);
        else if (len > 11 && strncmp(line, "VERSION_ID=", 11) == 0)
            os_value(line + 11, len - 11, out->version, sizeof out->version);
        else if (len > 8 && strncmp(line, "VERSION=", 8) == 0) os_value(line + 8, len - 8, version, sizeof version);
        i = e + 1;
    }
    if (!out->version[0]) probe_copy(out->version, sizeof out->version, version);
}
