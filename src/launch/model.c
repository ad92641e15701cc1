/* model.c - model resolution for managed runs: local file, local directory, cached repo,
 * each as the chosen engine loads it (a GGUF file or a Hugging Face checkpoint directory). */
#include "launch/model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/sha256.h"
#include "hub/cache.h"

/* Finds the one .gguf file in `dir` (several: an error listing them). */
static pacer_err find_gguf(const char *dir, char *out, size_t out_len, char *err, size_t err_len) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read directory %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    int found = 0;
    char names[512] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".gguf") != 0) continue;
        if (found++ == 0) snprintf(out, out_len, "%s/%s", dir, e->d_name);
        if (strlen(names) + n + 3 < sizeof names) {
            if (names[0]) strcat(names, ", ");
            strcat(names, e->d_name);
        }
    }
    closedir(d);
    if (found == 1) return PACER_OK;
    if (found == 0) snprintf(err, err_len, "no .gguf file in %s", dir);
    else snprintf(err, err_len, "several .gguf files in %s (%s): name the file", dir, names);
    return found ? PACER_ERR_ARG : PACER_ERR_NOT_FOUND;
}

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* What one directory holds, as far as model formats go (symlinks followed, as in a cache
 * snapshot; not recursive). */
typedef struct dir_scan {
    bool config;                /* config.json */
    int gguf;                   /* .gguf files */
    int safetensors, bin;       /* weight files of each kind */
} dir_scan;

static pacer_err scan_dir(const char *dir, dir_scan *sc, char *err, size_t err_len) {
    memset(sc, 0, sizeof *sc);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read directory %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    struct dirent *e;
    char p[PATH_MAX];
    struct stat st;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p || stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (strcmp(e->d_name, "config.json") == 0) sc->config = true;
        else if (has_suffix(e->d_name, ".gguf")) sc->gguf++;
        else if (has_suffix(e->d_name, ".safetensors")) sc->safetensors++;
        else if (has_suffix(e->d_name, ".bin")) sc->bin++;
    }
    closedir(d);
    return PACER_OK;
}

static bool is_hf_checkpoint(const dir_scan *sc) { return sc->config && (sc->safetensors || sc->bin); }

/* The engines of the table that load `f`, as "vllm, sglang or mlx". */
static void engines_loading(launch_format f, char *out, size_t n) {
    const launch_adapter *names[16];
    size_t k = 0;
    for (const launch_adapter *a = launch_adapters; a->name && k < 16; a++)
        if (a->loads == f) names[k++] = a;
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", names[i]->name);
}

/* The message for a checkpoint of the other format: `what` is found where `a` needs its own. */
static pacer_err wrong_format(const launch_adapter *a, const char *what, const char *where, char *err, size_t err_len) {
    char others[128];
    engines_loading(a->loads == LAUNCH_FORMAT_GGUF ? LAUNCH_FORMAT_HF_DIR : LAUNCH_FORMAT_GGUF, others, sizeof others);
    snprintf(err, err_len, "engine %s loads %s, and %s is %s: use --engine %s for it%s", a->name,
             launch_format_needs(a->loads), where, what, others,
             a->loads == LAUNCH_FORMAT_GGUF ? ", or give a GGUF file" : ", or give a checkpoint directory");
    return PACER_ERR_ARG;
}

static int file_cmp(const void *x, const void *y) {
    return strcmp(((const launch_weight_file *)x)->name, ((const launch_weight_file *)y)->name);
}

/* Fills out->files with the weight files of checkpoint directory `dir` (*.safetensors, or
 * *.bin when there are none), sorted by name, and their total size. */
static pacer_err list_weights(const char *dir, bool safetensors, launch_model *out, char *err, size_t err_len) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read directory %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    pacer_err rc = PACER_OK;
    struct dirent *e;
    char p[PATH_MAX];
    struct stat st;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, safetensors ? ".safetensors" : ".bin")) continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p || stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (out->n_files == LAUNCH_WEIGHTS_MAX || strlen(e->d_name) >= sizeof out->files[0].name) {
            snprintf(err, err_len, "%s: more than %d weight files, or a file name too long", dir, LAUNCH_WEIGHTS_MAX);
            rc = PACER_ERR_TOO_BIG;
            break;
        }
        launch_weight_file *w = &out->files[out->n_files++];
        snprintf(w->name, sizeof w->name, "%s", e->d_name);
        w->bytes = (uint64_t)st.st_size;
    }
    closedir(d);
    if (rc) return rc;
    qsort(out->files, out->n_files, sizeof out->files[0], file_cmp);
    return PACER_OK;
}

/* A checkpoint directory for an HF-directory engine: config.json plus weight files. `where`
 * names it in messages (the path, or REPO@COMMIT). */
static pacer_err take_hf_dir(const launch_adapter *a, const char *dir, const char *where, launch_model *out, char *err,
                             size_t err_len) {
    dir_scan sc;
    pacer_err rc = scan_dir(dir, &sc, err, err_len);
    if (rc) return rc;
    if (!is_hf_checkpoint(&sc)) {
        if (sc.gguf) return wrong_format(a, "a GGUF checkpoint without config.json", where, err, err_len);
        snprintf(err, err_len, "engine %s loads %s, and %s has %s", a->name, launch_format_needs(a->loads), where,
                 !sc.config ? "no config.json" : "no *.safetensors or *.bin weight files");
        return PACER_ERR_NOT_FOUND;
    }
    if (snprintf(out->path, sizeof out->path, "%s", dir) >= (int)sizeof out->path) {
        snprintf(err, err_len, "model path too long");
        return PACER_ERR_ARG;
    }
    return list_weights(dir, sc.safetensors > 0, out, err, err_len);
}

/* Splits REPO[@REVISION] into repo[256] and finds its snapshot and commit in the local
 * Hugging Face cache; `what` names it in errors ("repo", "drafter repo"). */
static pacer_err resolve_repo_spec(const char *spec, const char *what, char repo[256], char snapshot[PATH_MAX],
                                   char commit[HUB_COMMIT_MAX], char *err, size_t err_len) {
    const char *at = strchr(spec, '@');
    size_t n = at ? (size_t)(at - spec) : strlen(spec);
    if (n >= 256) {
        snprintf(err, err_len, "%s id too long", what);
        return PACER_ERR_ARG;
    }
    memcpy(repo, spec, n);
    repo[n] = '\0';
    return hub_cache_resolve(repo, at ? at + 1 : NULL, snapshot, PATH_MAX, commit, err, err_len);
}

/* The snapshot's one GGUF file into path[PATH_MAX]; several is an error that asks for the
 * file path, naming `who`. */
static pacer_err snapshot_gguf(const char *snapshot, const char *who, char *path, char *err, size_t err_len) {
    pacer_err rc = hub_cache_find_gguf(snapshot, path, PATH_MAX, err, err_len);
    if (rc == PACER_ERR_STATE) {
        char list[HUB_ERR_MAX];
        snprintf(list, sizeof list, "%s", err);
        snprintf(err, err_len, "%s holds several GGUF files (%s): pass the file path instead", who, list);
        return PACER_ERR_ARG;
    }
    return rc;
}

/* REPO[@REVISION] from the local Hugging Face cache. */
static pacer_err resolve_cached(const char *spec, const launch_adapter *a, launch_model *out, char *err, size_t err_len) {
    char repo[256], snapshot[PATH_MAX], commit[HUB_COMMIT_MAX];
    pacer_err rc = resolve_repo_spec(spec, "repo", repo, snapshot, commit, err, err_len);
    if (rc) return rc;
    char where[HUB_COMMIT_MAX + 300];
    snprintf(where, sizeof where, "%s@%s in the cache", repo, commit);
    if (a->loads == LAUNCH_FORMAT_HF_DIR) {
        if ((rc = take_hf_dir(a, snapshot, where, out, err, err_len))) return rc;
    } else {
        rc = snapshot_gguf(snapshot, repo, out->path, err, err_len);
        if (rc == PACER_ERR_NOT_FOUND) {
            dir_scan sc;
            if (scan_dir(snapshot, &sc, err, err_len) == PACER_OK && is_hf_checkpoint(&sc))
                return wrong_format(a, "a Hugging Face checkpoint without a .gguf file", where, err, err_len);
            snprintf(err, err_len, "%s has no .gguf file (engine %s loads %s)", where, a->name, launch_format_needs(a->loads));
            return rc;
        }
        if (rc) return rc;
    }
    snprintf(out->repo, sizeof out->repo, "%s", repo);
    snprintf(out->revision, sizeof out->revision, "%s", commit);
    out->local = false;
    return PACER_OK;
}

static bool looks_like_repo(const char *spec) {
    const char *slash = strchr(spec, '/');
    if (!slash || slash == spec || strchr(slash + 1, '/') || spec[0] == '.' || !slash[1]) return false;
    for (const char *p = spec; *p && *p != '@'; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || strchr("-_./", *p)))
            return false;
    return true;
}

/* A local path for engine `a`: a file, or a directory of either format. */
static pacer_err resolve_local(const char *spec, const struct stat *st, const launch_adapter *a, launch_model *out,
                               char *err, size_t err_len) {
    out->local = true;
    if (a->loads == LAUNCH_FORMAT_HF_DIR) {
        if (!S_ISDIR(st->st_mode)) return wrong_format(a, "a single file", spec, err, err_len);
        return take_hf_dir(a, spec, spec, out, err, err_len);
    }
    if (!S_ISDIR(st->st_mode)) {
        if (snprintf(out->path, sizeof out->path, "%s", spec) >= (int)sizeof out->path) {
            snprintf(err, err_len, "model path too long");
            return PACER_ERR_ARG;
        }
        return PACER_OK;
    }
    pacer_err rc = find_gguf(spec, out->path, sizeof out->path, err, err_len);
    if (rc == PACER_ERR_NOT_FOUND) {
        dir_scan sc;
        if (scan_dir(spec, &sc, err, err_len) == PACER_OK && is_hf_checkpoint(&sc))
            return wrong_format(a, "a Hugging Face checkpoint directory without a .gguf file", spec, err, err_len);
        snprintf(err, err_len, "no .gguf file in %s (engine %s loads %s)", spec, a->name, launch_format_needs(a->loads));
    }
    return rc;
}

/* The base name of `path`, trailing slashes ignored, into `out`; false when it does not fit. */
static bool base_name(const char *path, char *out, size_t n) {
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t b = len;
    while (b > 0 && path[b - 1] != '/') b--;
    if (len - b >= n) return false;
    memcpy(out, path + b, len - b);
    out[len - b] = '\0';
    return true;
}

pacer_err launch_model_resolve(const char *spec, const launch_adapter *a, launch_model *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    out->format = a->loads;
    struct stat st;
    pacer_err rc = PACER_OK;
    if (stat(spec, &st) == 0) rc = resolve_local(spec, &st, a, out, err, err_len);
    else if (looks_like_repo(spec)) rc = resolve_cached(spec, a, out, err, err_len);
    else {
        snprintf(err, err_len, "model %s: no such file or directory", spec);
        return PACER_ERR_NOT_FOUND;
    }
    if (rc) return rc;
    if (!base_name(out->path, out->file_name, sizeof out->file_name)) {
        snprintf(err, err_len, "model file name too long");
        return PACER_ERR_ARG;
    }
    if (out->format == LAUNCH_FORMAT_GGUF) {
        if (stat(out->path, &st) != 0) {
            snprintf(err, err_len, "model %s: %s", out->file_name, strerror(errno));
            return PACER_ERR_NOT_FOUND;
        }
        out->n_files = 1;
        snprintf(out->files[0].name, sizeof out->files[0].name, "%s", out->file_name);
        out->files[0].bytes = (uint64_t)st.st_size;
    }
    for (size_t i = 0; i < out->n_files; i++) {
        out->weight_bytes += out->files[i].bytes;
        if (out->files[i].bytes > out->files[out->largest].bytes) out->largest = i;
    }
    return PACER_OK;
}

bool launch_model_file_path(const launch_model *m, size_t i, char *out, size_t n) {
    if (i >= m->n_files) return false;
    int w = m->format == LAUNCH_FORMAT_GGUF ? snprintf(out, n, "%s", m->path)
                                            : snprintf(out, n, "%s/%s", m->path, m->files[i].name);
    return w >= 0 && (size_t)w < n;
}

pacer_err launch_model_hash(launch_model *m, char *err, size_t err_len) {
    char p[PATH_MAX + 260];
    for (size_t i = 0; i < m->n_files; i++) {
        pacer_err rc = launch_model_file_path(m, i, p, sizeof p) ? sha256_file_hex(p, m->files[i].sha256) : PACER_ERR_TOO_BIG;
        if (rc) {
            snprintf(err, err_len, "cannot read model file %s: %s", m->files[i].name, pacer_strerror(rc));
            return rc;
        }
    }
    return PACER_OK;
}

/* A drafter found at a local path: a GGUF file, or a directory (its one GGUF file for
 * engines that take GGUF, else the directory itself). Never recorded anywhere. */
static pacer_err drafter_from_path(const launch_adapter *a, const char *spec, const struct stat *st, launch_drafter *out,
                                   char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    if (S_ISDIR(st->st_mode) && a->drafter_gguf) {
        if ((rc = find_gguf(spec, out->path, sizeof out->path, err, err_len))) return rc;
    } else if (snprintf(out->path, sizeof out->path, "%s", spec) >= (int)sizeof out->path) {
        snprintf(err, err_len, "drafter path too long");
        return PACER_ERR_ARG;
    }
    snprintf(out->note, sizeof out->note, "drafter passed (a local path: not named in the receipt)");
    return PACER_OK;
}

/* A drafter from the cache: REPO[@REVISION]; its GGUF file or its snapshot directory. */
static pacer_err drafter_from_cache(const launch_adapter *a, const char *spec, launch_drafter *out, char *err,
                                    size_t err_len) {
    char repo[256], snapshot[PATH_MAX], commit[HUB_COMMIT_MAX], who[270];
    pacer_err rc = resolve_repo_spec(spec, "drafter repo", repo, snapshot, commit, err, err_len);
    if (rc) return rc;
    if (a->drafter_gguf) {
        snprintf(who, sizeof who, "drafter %s", repo);
        rc = snapshot_gguf(snapshot, who, out->path, err, err_len);
        if (rc == PACER_ERR_NOT_FOUND) snprintf(err, err_len, "drafter %s@%s has no .gguf file in the cache", repo, commit);
        if (rc) return rc;
    } else {
        snprintf(out->path, sizeof out->path, "%s", snapshot);
    }
    snprintf(out->public_id, sizeof out->public_id, "%s@%s", repo, commit);
    snprintf(out->note, sizeof out->note, "drafter %s", out->public_id);
    return PACER_OK;
}

pacer_err launch_drafter_choose(const launch_adapter *a, const char *spec, bool serial, const launch_model *target,
                                launch_drafter *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (!spec) spec = "auto";
    bool named = strcmp(spec, "auto") != 0 && strcmp(spec, "none") != 0;
    if (serial) {
        out->serial_override = named;
        if (named) snprintf(out->note, sizeof out->note, "none: --serial overrides --drafter %s", spec);
        else snprintf(out->note, sizeof out->note, "none: --serial disables drafting");
        return PACER_OK;
    }
    if (strcmp(spec, "none") == 0) {
        snprintf(out->note, sizeof out->note, "none (--drafter none)");
        return PACER_OK;
    }
    if (!a->takes_drafter) {
        if (!named) {
            snprintf(out->note, sizeof out->note, "none: engine %s cannot take a drafter", a->name);
            return PACER_OK;
        }
        snprintf(err, err_len, "engine %s cannot take a drafter (--drafter %s): use --drafter none or another engine",
                 a->name, spec);
        return PACER_ERR_ARG;
    }
    pacer_err rc = PACER_OK;
    if (!named) { /* auto: the target's own drafter, when it is in the cache */
        if (!target || !target->repo[0]) {
            snprintf(out->note, sizeof out->note,
                     "none: --drafter auto looks for ORG/NAME%s in the cache, and this model is a local path",
                     LAUNCH_DRAFTER_SUFFIX);
            return PACER_OK;
        }
        char want[300];
        snprintf(want, sizeof want, "%s%s", target->repo, LAUNCH_DRAFTER_SUFFIX);
        char why[HUB_ERR_MAX];
        rc = drafter_from_cache(a, want, out, why, sizeof why);
        if (rc) {
            memset(out, 0, sizeof *out);
            snprintf(out->note, sizeof out->note, "none: %.250s is not usable from the cache (%.250s)", want, why);
            return PACER_OK;
        }
        out->pass = true;
        snprintf(out->note, sizeof out->note, "drafter %s (found in the cache by --drafter auto)", out->public_id);
        return PACER_OK;
    }
    struct stat st;
    if (stat(spec, &st) == 0) rc = drafter_from_path(a, spec, &st, out, err, err_len);
    else if (looks_like_repo(spec)) rc = drafter_from_cache(a, spec, out, err, err_len);
    else {
        snprintf(err, err_len, "drafter %s: no such file or directory, nor a repo id (ORG/NAME)", spec);
        rc = PACER_ERR_NOT_FOUND;
    }
    out->pass = rc == PACER_OK;
    return rc;
}
