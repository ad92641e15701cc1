/* cache.c - read side of the Hugging Face cache: root, repo directory, revision -> snapshot,
 * the GGUF file of a snapshot, and the snapshot a path lies in. */
#include "hub/cache.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"

static pacer_err fmt_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static pacer_err fmt_path(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return (w < 0 || (size_t)w >= n) ? PACER_ERR_TOO_BIG : PACER_OK;
}

pacer_err hub_cache_root(char *out, size_t n) {
    const char *hc = getenv("HF_HUB_CACHE");
    if (hc && *hc) return fmt_path(out, n, "%s", hc);
    const char *hh = getenv("HF_HOME");
    if (hh && *hh) return fmt_path(out, n, "%s/hub", hh);
    const char *home = path_home();
    if (!home) return PACER_ERR_NOT_FOUND;
    return fmt_path(out, n, "%s/.cache/huggingface/hub", home);
}

/* One part of a repo id: [A-Za-z0-9._-], not empty, no leading '.', no "--". */
static bool repo_part_ok(const char *s, size_t len) {
    if (len == 0 || len > 96 || s[0] == '.') return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
        if (!ok) return false;
        if (c == '-' && i + 1 < len && s[i + 1] == '-') return false;
    }
    return true;
}

pacer_err hub_cache_repo_dir(const char *root, const char *repo, char *out, size_t n) {
    if (!repo) return PACER_ERR_ARG;
    const char *slash = strchr(repo, '/');
    if (slash && strchr(slash + 1, '/')) return PACER_ERR_ARG;
    if (slash ? !(repo_part_ok(repo, (size_t)(slash - repo)) && repo_part_ok(slash + 1, strlen(slash + 1)))
              : !repo_part_ok(repo, strlen(repo)))
        return PACER_ERR_ARG;
    char rootbuf[PATH_MAX];
    if (!root) {
        pacer_err rc = hub_cache_root(rootbuf, sizeof rootbuf);
        if (rc) return rc;
        root = rootbuf;
    }
    if (slash) return fmt_path(out, n, "%s/models--%.*s--%s", root, (int)(slash - repo), repo, slash + 1);
    return fmt_path(out, n, "%s/models--%s", root, repo);
}

bool hub_is_commit(const char *s) {
    if (!s) return false;
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return i == 40;
}

/* A branch or tag name usable as a path under refs/: no "..", no leading '/', printable. */
static bool revision_ok(const char *r) {
    if (!*r || r[0] == '/' || strstr(r, "..") || strlen(r) > 200) return false;
    for (const char *p = r; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '\\') return false;
    return true;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

pacer_err hub_cache_resolve(const char *repo, const char *revision, char *snapshot, size_t snapn, char *commit,
                            char *err, size_t err_len) {
    const char *rev = (revision && *revision) ? revision : "main";
    const char *at = (revision && *revision) ? "@" : "";
    const char *shown = (revision && *revision) ? revision : "";
    char dir[PATH_MAX], p[PATH_MAX], root[PATH_MAX];
    pacer_err rc = hub_cache_root(root, sizeof root);
    if (rc) {
        pacer_errorf(err, err_len, PACER_OK, "no Hugging Face cache directory (set HF_HUB_CACHE or HF_HOME)");
        return rc;
    }
    if (!revision_ok(rev)) {
        pacer_errorf(err, err_len, PACER_OK, "'%s' is not a valid revision", rev);
        return PACER_ERR_ARG;
    }
    rc = hub_cache_repo_dir(root, repo, dir, sizeof dir);
    if (rc) {
        pacer_errorf(err, err_len, PACER_OK, "'%s' is not a valid repo id (expected ORG/NAME)", repo ? repo : "");
        return rc;
    }
    if (!is_dir(dir)) {
        pacer_errorf(err, err_len, PACER_OK, "%s is not in the Hugging Face cache (%s); fetch it with 'pacer pull %s%s%s'", repo, root,
                repo, at, shown);
        return PACER_ERR_NOT_FOUND;
    }
    char sha[HUB_COMMIT_MAX] = "";
    if (hub_is_commit(rev)) {
        snprintf(sha, sizeof sha, "%s", rev);
    } else {
        if ((rc = fmt_path(p, sizeof p, "%s/refs/%s", dir, rev))) return rc;
        buf b;
        buf_init(&b, 256);
        rc = file_read_all(p, &b);
        if (rc) {
            buf_free(&b);
            pacer_errorf(err, err_len, PACER_OK, "%s has no revision '%s' in the cache; fetch it with 'pacer pull %s@%s'", repo, rev,
                    repo, rev);
            return rc == PACER_ERR_TOO_BIG ? PACER_ERR_FORMAT : PACER_ERR_NOT_FOUND;
        }
        while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r' || b.data[b.len - 1] == ' '))
            b.data[--b.len] = '\0';
        bool ok = hub_is_commit(b.data);
        if (ok) snprintf(sha, sizeof sha, "%s", b.data);
        buf_free(&b);
        if (!ok) {
            pacer_errorf(err, err_len, PACER_OK, "%s holds no commit id", p);
            return PACER_ERR_FORMAT;
        }
    }
    if ((rc = fmt_path(p, sizeof p, "%s/snapshots/%s", dir, sha))) return rc;
    if (!is_dir(p)) {
        pacer_errorf(err, err_len, PACER_OK, "%s@%s (commit %s) has no snapshot in the cache; fetch it with 'pacer pull %s%s%s'", repo,
                rev, sha, repo, at, shown);
        return PACER_ERR_NOT_FOUND;
    }
    if ((rc = fmt_path(snapshot, snapn, "%s", p))) return rc;
    snprintf(commit, HUB_COMMIT_MAX, "%s", sha);
    return PACER_OK;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A split GGUF's later part ("-0000K-of-0000N.gguf" with K > 1): not a candidate. */
static bool gguf_later_part(const char *name) {
    const char *of = strstr(name, "-of-");
    if (!of || of - name < 5) return false;
    const char *k = of - 5;
    if (k > name && k[-1] == '-') {
        for (int i = 0; i < 5; i++)
            if (k[i] < '0' || k[i] > '9') return false;
        return strncmp(k, "00001", 5) != 0;
    }
    return false;
}

/* Collects candidate .gguf paths (relative to the snapshot) into `list`, comma separated,
 * and the first one's relative path into `first`; counts them in `*count`. */
static void gguf_walk(const char *base, const char *rel, int depth, buf *list, char *first, size_t firstn,
                      int *count) {
    char dirp[PATH_MAX];
    if (fmt_path(dirp, sizeof dirp, "%s%s%s", base, *rel ? "/" : "", rel) || depth > 8) return;
    DIR *d = opendir(dirp);
    if (!d) return;
    /* sorted order, so the listing and the choice do not depend on the file system */
    struct dirent **names = NULL;
    int nn = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 16;
            struct dirent **g = realloc(names, (size_t)cap * sizeof *names);
            if (!g) break;
            names = g;
        }
        names[nn] = malloc(sizeof **names);
        if (!names[nn]) break;
        memcpy(names[nn], e, sizeof **names);
        nn++;
    }
    closedir(d);
    for (int i = 1; i < nn; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1]->d_name, names[j]->d_name) > 0; j--) {
            struct dirent *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < nn; i++) {
        char r[PATH_MAX], full[PATH_MAX];
        struct stat st;
        if (fmt_path(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", names[i]->d_name) ||
            fmt_path(full, sizeof full, "%s/%s", base, r) || stat(full, &st) != 0) {
            free(names[i]);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            gguf_walk(base, r, depth + 1, list, first, firstn, count);
        } else if (S_ISREG(st.st_mode) && ends_with(names[i]->d_name, ".gguf") && !gguf_later_part(names[i]->d_name)) {
            if (*count == 0) snprintf(first, firstn, "%s", r);
            buf_appendf(list, "%s%s", *count ? ", " : "", r);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
}

pacer_err hub_cache_find_gguf(const char *snapshot, char *out, size_t n, char *err, size_t err_len) {
    buf list;
    buf_init(&list, 4096);
    char first[PATH_MAX] = "";
    int count = 0;
    pacer_err rc = PACER_OK;
    if (!is_dir(snapshot)) {
        pacer_errorf(err, err_len, PACER_OK, "%s is not a directory", snapshot);
        rc = PACER_ERR_NOT_FOUND;
    } else {
        gguf_walk(snapshot, "", 0, &list, first, sizeof first, &count);
        if (count == 0) {
            pacer_errorf(err, err_len, PACER_OK, "no .gguf file in %s", snapshot);
            rc = PACER_ERR_NOT_FOUND;
        } else if (count > 1) {
            pacer_errorf(err, err_len, PACER_OK, "%d .gguf files in %s, name one: %s", count, snapshot, list.data);
            rc = PACER_ERR_STATE;
        } else {
            rc = fmt_path(out, n, "%s/%s", snapshot, first);
        }
    }
    buf_free(&list);
    return rc;
}

bool hub_cache_revision_of_path(const char *path, char *repo, size_t repon, char *commit) {
    if (repon) repo[0] = '\0';
    commit[0] = '\0';
    char abs[PATH_MAX];
    if (!path || !*path) return false;
    if (path[0] == '/') {
        if (fmt_path(abs, sizeof abs, "%s", path)) return false;
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || fmt_path(abs, sizeof abs, "%s/%s", cwd, path)) return false;
    }
    /* walk the components: ... / models--X / snapshots / COMMIT / ... */
    char *save = NULL;
    const char *prev2 = NULL, *prev1 = NULL;
    for (char *c = strtok_r(abs, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (prev2 && strncmp(prev2, "models--", 8) == 0 && strcmp(prev1, "snapshots") == 0 && hub_is_commit(c)) {
            const char *name = prev2 + 8;
            const char *sep = strstr(name, "--");
            char r[256];
            int w = sep ? snprintf(r, sizeof r, "%.*s/%s", (int)(sep - name), name, sep + 2)
                        : snprintf(r, sizeof r, "%s", name);
            if (w <= 0 || (size_t)w >= sizeof r || (size_t)w >= repon || !*name) return false;
            memcpy(repo, r, (size_t)w + 1);
            snprintf(commit, HUB_COMMIT_MAX, "%s", c);
            return true;
        }
        prev2 = prev1;
        prev1 = c;
    }
    return false;
}
