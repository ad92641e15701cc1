/* model.c - model resolution for managed runs: local file, local directory, cached repo. */
#include "launch/model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
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
    if (found == 0) snprintf(err, err_len, "no .gguf file in %s (the builtin engine loads GGUF checkpoints)", dir);
    else snprintf(err, err_len, "several .gguf files in %s (%s): name the file", dir, names);
    return found ? PACER_ERR_ARG : PACER_ERR_NOT_FOUND;
}

/* REPO[@REVISION] from the local Hugging Face cache. */
static pacer_err resolve_cached(const char *spec, launch_model *out, char *err, size_t err_len) {
    char repo[256];
    const char *at = strchr(spec, '@');
    size_t n = at ? (size_t)(at - spec) : strlen(spec);
    if (n >= sizeof repo) {
        snprintf(err, err_len, "repo id too long");
        return PACER_ERR_ARG;
    }
    memcpy(repo, spec, n);
    repo[n] = '\0';
    char snapshot[PATH_MAX];
    char commit[HUB_COMMIT_MAX];
    pacer_err rc = hub_cache_resolve(repo, at ? at + 1 : NULL, snapshot, sizeof snapshot, commit, err, err_len);
    if (rc) return rc;
    rc = hub_cache_find_gguf(snapshot, out->path, sizeof out->path, err, err_len);
    if (rc == PACER_ERR_STATE) {
        char list[HUB_ERR_MAX];
        snprintf(list, sizeof list, "%s", err);
        snprintf(err, err_len, "%s holds several GGUF files (%s): pass the file path instead", repo, list);
        return PACER_ERR_ARG;
    }
    if (rc == PACER_ERR_NOT_FOUND) {
        snprintf(err, err_len, "%s@%s has no .gguf file in the cache (the builtin engine loads GGUF)", repo, commit);
        return rc;
    }
    if (rc) return rc;
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

pacer_err launch_model_resolve(const char *spec, bool hash, launch_model *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    struct stat st;
    pacer_err rc = PACER_OK;
    if (stat(spec, &st) == 0) {
        out->local = true;
        if (S_ISDIR(st.st_mode)) {
            if ((rc = find_gguf(spec, out->path, sizeof out->path, err, err_len))) return rc;
        } else if (snprintf(out->path, sizeof out->path, "%s", spec) >= (int)sizeof out->path) {
            snprintf(err, err_len, "model path too long");
            return PACER_ERR_ARG;
        }
    } else if (looks_like_repo(spec)) {
        rc = resolve_cached(spec, out, err, err_len);
        if (rc) return rc;
    } else {
        snprintf(err, err_len, "model %s: no such file or directory", spec);
        return PACER_ERR_NOT_FOUND;
    }
    const char *base = strrchr(out->path, '/');
    int fw = snprintf(out->file_name, sizeof out->file_name, "%s", base ? base + 1 : out->path);
    if (fw < 0 || (size_t)fw >= sizeof out->file_name) {
        snprintf(err, err_len, "model file name too long");
        return PACER_ERR_ARG;
    }
    if (stat(out->path, &st) != 0) {
        snprintf(err, err_len, "model %s: %s", out->file_name, strerror(errno));
        return PACER_ERR_NOT_FOUND;
    }
    out->weight_bytes = (uint64_t)st.st_size;
    if (hash && (rc = sha256_file_hex(out->path, out->sha256))) {
        snprintf(err, err_len, "cannot read model %s: %s", out->file_name, pacer_strerror(rc));
        return rc;
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
    char repo[256], snapshot[PATH_MAX], commit[HUB_COMMIT_MAX];
    const char *at = strchr(spec, '@');
    size_t n = at ? (size_t)(at - spec) : strlen(spec);
    if (n >= sizeof repo) {
        snprintf(err, err_len, "drafter repo id too long");
        return PACER_ERR_ARG;
    }
    memcpy(repo, spec, n);
    repo[n] = '\0';
    pacer_err rc = hub_cache_resolve(repo, at ? at + 1 : NULL, snapshot, sizeof snapshot, commit, err, err_len);
    if (rc) return rc;
    if (a->drafter_gguf) {
        rc = hub_cache_find_gguf(snapshot, out->path, sizeof out->path, err, err_len);
        if (rc == PACER_ERR_STATE) {
            char list[HUB_ERR_MAX];
            snprintf(list, sizeof list, "%s", err);
            snprintf(err, err_len, "drafter %s holds several GGUF files (%s): pass the file path instead", repo, list);
            return PACER_ERR_ARG;
        }
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
