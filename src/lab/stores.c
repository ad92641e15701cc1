/* stores.c - model resolution for the lab (file, directory, cached repo), GGUF inspection,
 * store lookup by name and type, store builds through engine/quantize. */
#include "lab/stores.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "engine/gguf.h"
#include "engine/quantize.h"
#include "hub/cache.h"

static bool has_suffix_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* The type holding most matrix (2-D and up) elements of an open GGUF. */
static ggml_type dominant_type(const gguf_file *f) {
    uint64_t by_type[GGML_TYPE__COUNT] = {0};
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_get_tensor(f, i);
        if (t->n_dims >= 2 && t->type < GGML_TYPE__COUNT) by_type[t->type] += (uint64_t)t->n_elements;
    }
    int best = GGML_TYPE_F32;
    for (int t = 0; t < GGML_TYPE__COUNT; t++)
        if (by_type[t] > by_type[best]) best = t;
    return (ggml_type)best;
}

pacer_err lab_gguf_type(const char *path, char *out, char *err, size_t err_len) {
    gguf_file *f;
    char why[256];
    if (gguf_open(path, &f, why, sizeof why)) {
        snprintf(err, err_len, "%s: %s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, why);
        return PACER_ERR_FORMAT;
    }
    snprintf(out, 24, "%s", ggml_type_name(dominant_type(f)));
    gguf_close(f);
    return PACER_OK;
}

/* Reads the source's metadata and type. */
static pacer_err inspect_source(lab_model *m, char *err, size_t err_len) {
    gguf_file *f;
    char why[256];
    if (gguf_open(m->source_path, &f, why, sizeof why)) {
        snprintf(err, err_len, "%s: %s", m->source_name, why);
        return PACER_ERR_FORMAT;
    }
    const char *arch = gguf_get_str(f, "general.architecture", "");
    char key[160];
    snprintf(key, sizeof key, "%s.context_length", arch);
    m->context_length = (int)gguf_get_u32(f, key, 0);
    snprintf(m->source_type, sizeof m->source_type, "%s", ggml_type_name(dominant_type(f)));
    uint64_t params = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) params += (uint64_t)gguf_get_tensor(f, i)->n_elements;
    m->metadata = json_pack("{s:s,s:s,s:i,s:i,s:I,s:I,s:s}", "architecture", arch, "name",
                            gguf_get_str(f, "general.name", ""), "file_type", (int)gguf_get_u32(f, "general.file_type", 0),
                            "context_length", m->context_length, "parameter_count", (json_int_t)params, "tensors",
                            (json_int_t)gguf_get_n_tensors(f), "source_type", m->source_type);
    gguf_close(f);
    return m->metadata ? PACER_OK : PACER_ERR_NOMEM;
}

/* Picks the source GGUF of a directory: its only .gguf file, or its only float one. */
static pacer_err pick_in_dir(const char *dir, char *out, size_t n, char *err, size_t err_len) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read directory %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    char names[16][256], list[600] = "";
    int k = 0, floats = 0, float_at = -1;
    struct dirent *e;
    while ((e = readdir(d)) && k < 16) {
        if (e->d_name[0] == '.' || !has_suffix_ci(e->d_name, ".gguf") || strlen(e->d_name) >= 256) continue;
        snprintf(names[k], sizeof names[k], "%s", e->d_name);
        k++;
    }
    closedir(d);
    for (int i = 0; i < k; i++) {
        char path[PATH_MAX + 260], t[24], why[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lab_gguf_type(path, t, why, sizeof why) == PACER_OK &&
            (!strcmp(t, "f16") || !strcmp(t, "bf16") || !strcmp(t, "f32")))
            floats++, float_at = i;
        if (strlen(list) + strlen(names[i]) + 3 < sizeof list) strcat(strcat(list, list[0] ? ", " : ""), names[i]);
    }
    int pick = k == 1 ? 0 : floats == 1 ? float_at : -1;
    if (pick < 0) {
        if (k == 0) snprintf(err, err_len, "no .gguf file in %s", dir);
        else snprintf(err, err_len, "several .gguf files in %s (%s) and not one float source among them: name the file", dir, list);
        return k == 0 ? PACER_ERR_NOT_FOUND : PACER_ERR_ARG;
    }
    if (snprintf(out, n, "%s/%s", dir, names[pick]) >= (int)n) return PACER_ERR_TOO_BIG;
    return PACER_OK;
}

/* The stem: the file name without ".gguf" and without a "-TYPE", "_TYPE" or ".TYPE" suffix
 * naming its own type. */
static void make_stem(lab_model *m) {
    snprintf(m->stem, sizeof m->stem, "%s", m->source_name);
    size_t n = strlen(m->stem);
    if (n > 5 && strcasecmp(m->stem + n - 5, ".gguf") == 0) m->stem[n -= 5] = '\0';
    size_t t = strlen(m->source_type);
    if (n > t + 1 && strcasecmp(m->stem + n - t, m->source_type) == 0 && strchr("-_.", m->stem[n - t - 1]))
        m->stem[n - t - 1] = '\0';
}

static pacer_err resolve_path(const char *spec, lab_model *m, char *dir, char *err, size_t err_len) {
    struct stat st;
    if (stat(spec, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(dir, PATH_MAX, "%s", spec);
            return pick_in_dir(spec, m->source_path, sizeof m->source_path, err, err_len);
        }
        snprintf(m->source_path, sizeof m->source_path, "%s", spec);
        snprintf(dir, PATH_MAX, "%s", spec);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else strcpy(dir, ".");
        return PACER_OK;
    }
    if (spec[0] == '/' || spec[0] == '.' || has_suffix_ci(spec, ".gguf")) {
        snprintf(err, err_len, "%s: no such file or directory", spec);
        return PACER_ERR_NOT_FOUND;
    }
    /* REPO[@REVISION] in the cache */
    char repo[256], snapshot[PATH_MAX], commit[HUB_COMMIT_MAX];
    const char *at = strchr(spec, '@');
    size_t rn = at ? (size_t)(at - spec) : strlen(spec);
    if (rn == 0 || rn >= sizeof repo) {
        snprintf(err, err_len, "%s: not a file, a directory or a repo id", spec);
        return PACER_ERR_ARG;
    }
    memcpy(repo, spec, rn);
    repo[rn] = '\0';
    pacer_err rc = hub_cache_resolve(repo, at ? at + 1 : NULL, snapshot, sizeof snapshot, commit, err, err_len);
    if (rc) return rc;
    snprintf(m->repo, sizeof m->repo, "%s", repo);
    snprintf(m->revision, sizeof m->revision, "%s", commit);
    snprintf(dir, PATH_MAX, "%s", snapshot);
    return pick_in_dir(snapshot, m->source_path, sizeof m->source_path, err, err_len);
}

pacer_err lab_model_resolve(const char *spec, const char *store_home, lab_model *m, char *err,
                            size_t err_len) {
    memset(m, 0, sizeof *m);
    char dir[PATH_MAX];
    pacer_err rc = resolve_path(spec, m, dir, err, err_len);
    if (rc) return rc;
    const char *slash = strrchr(m->source_path, '/');
    snprintf(m->source_name, sizeof m->source_name, "%.255s", slash ? slash + 1 : m->source_path);
    if ((rc = inspect_source(m, err, err_len))) return rc;
    make_stem(m);
    snprintf(m->dirs[m->n_dirs++], PATH_MAX, "%s", dir);
    if (m->repo[0]) {
        /* a cache snapshot is the hub's: stores built from it go under pacer's own directory */
        char safe[256];
        snprintf(safe, sizeof safe, "%s", m->repo);
        for (char *p = safe; *p; p++)
            if (*p == '/') *p = '+';
        if (snprintf(m->dirs[1], PATH_MAX, "%s/%s/%s", store_home, safe, m->revision) >= PATH_MAX) return PACER_ERR_TOO_BIG;
        m->n_dirs = 2;
        m->build_dir = 1;
    }
    return PACER_OK;
}

void lab_model_free(lab_model *m) {
    json_decref(m->metadata);
    m->metadata = NULL;
}

pacer_err lab_store_find(const lab_model *m, const char *weights, lab_store *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    snprintf(out->weights, sizeof out->weights, "%s", weights);
    ggml_type want;
    if (weights[0] && !ggml_type_from_name(weights, &want)) {
        snprintf(err, err_len, "unknown weight type '%s'", weights);
        return PACER_ERR_ARG;
    }
    struct stat st;
    if (!weights[0] || strcasecmp(weights, m->source_type) == 0) {
        snprintf(out->path, sizeof out->path, "%s", m->source_path);
        snprintf(out->file_name, sizeof out->file_name, "%s", m->source_name);
        out->exists = out->is_source = true;
        out->bytes = stat(out->path, &st) == 0 ? (uint64_t)st.st_size : 0;
        return PACER_OK;
    }
    snprintf(out->file_name, sizeof out->file_name, "%.200s-%s.gguf", m->stem, weights);
    if (snprintf(out->path, sizeof out->path, "%s/%s", m->dirs[m->build_dir], out->file_name) >= (int)sizeof out->path) {
        snprintf(err, err_len, "the store path is too long");
        return PACER_ERR_TOO_BIG;
    }
    for (int i = 0; i < m->n_dirs; i++) {
        DIR *d = opendir(m->dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strcasecmp(e->d_name, out->file_name) != 0 ||
                snprintf(out->path, sizeof out->path, "%s/%s", m->dirs[i], e->d_name) >= (int)sizeof out->path)
                continue;
            snprintf(out->file_name, sizeof out->file_name, "%s", e->d_name);
            out->exists = true;
        }
        if (d) closedir(d);
        if (out->exists) break;
    }
    if (!out->exists) return PACER_OK;
    char t[24];
    pacer_err rc = lab_gguf_type(out->path, t, err, err_len);
    if (rc) return rc;
    if (strcasecmp(t, weights) != 0) {
        snprintf(err, err_len, "%s holds %s weights, not %s", out->file_name, t, weights);
        return PACER_ERR_FORMAT;
    }
    out->bytes = stat(out->path, &st) == 0 ? (uint64_t)st.st_size : 0;
    return PACER_OK;
}

pacer_err lab_store_plan(const lab_model *m, const lab_store *s, uint64_t *bytes, char *err, size_t err_len) {
    ggml_type t;
    if (!ggml_type_from_name(s->weights, &t)) {
        snprintf(err, err_len, "unknown weight type '%s'", s->weights);
        return PACER_ERR_ARG;
    }
    quantize_job *j;
    char why[400];
    pacer_err rc = quantize_open(m->source_path, t, &j, why, sizeof why);
    if (rc) {
        snprintf(err, err_len, "cannot build %s from %s: %s", s->file_name, m->source_name, why);
        return rc;
    }
    *bytes = quantize_output_bytes(j);
    quantize_close(j);
    return PACER_OK;
}

pacer_err lab_store_build(const lab_model *m, lab_store *s, char *err, size_t err_len) {
    ggml_type t;
    if (!ggml_type_from_name(s->weights, &t)) return PACER_ERR_ARG;
    if (dir_create_all(m->dirs[m->build_dir], 0755)) {
        snprintf(err, err_len, "cannot create the store directory");
        return PACER_ERR_IO;
    }
    quantize_job *j;
    char why[400];
    pacer_err rc = quantize_open(m->source_path, t, &j, why, sizeof why);
    uint64_t need = rc ? 0 : quantize_output_bytes(j), avail = 0;
    if (!rc && quantize_volume_free(s->path, &avail) == PACER_OK && avail < need) {
        snprintf(why, sizeof why, "%llu bytes needed, %llu free", (unsigned long long)need, (unsigned long long)avail);
        rc = PACER_ERR_IO;
    }
    if (!rc) rc = quantize_write(j, s->path, why, sizeof why);
    quantize_close(j);
    if (rc) {
        snprintf(err, err_len, "cannot build %s: %s", s->file_name, why);
        return rc;
    }
    struct stat st;
    s->exists = true;
    s->bytes = stat(s->path, &st) == 0 ? (uint64_t)st.st_size : 0;
    return PACER_OK;
}
