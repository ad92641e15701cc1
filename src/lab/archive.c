/* archive.c - the zip of a results directory through libzip: a walk of the directory in
 * sorted order (so two archives of the same files list them alike), files added by path. */
#include "lab/archive.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#define ARCHIVE_MAX_DEPTH 8

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Adds every regular file under `dir` (a directory of depth `depth`) as `prefix/NAME`. */
static pacer_err add_tree(zip_t *z, const char *dir, const char *prefix, int depth, size_t *n, char *err, size_t err_len) {
    if (depth > ARCHIVE_MAX_DEPTH) return PACER_OK;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "cannot read %s", dir);
        return PACER_ERR_IO;
    }
    char **names = NULL;
    size_t k = 0, cap = 0;
    struct dirent *e;
    pacer_err rc = PACER_OK;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (k == cap) {
            char **more = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof *names);
            if (!more) { rc = PACER_ERR_NOMEM; break; }
            names = more;
        }
        if (!(names[k] = strdup(e->d_name))) { rc = PACER_ERR_NOMEM; break; }
        k++;
    }
    closedir(d);
    if (!rc && k) qsort(names, k, sizeof *names, name_cmp);
    for (size_t i = 0; !rc && i < k; i++) {
        char path[PATH_MAX], entry[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path ||
            snprintf(entry, sizeof entry, "%s/%s", prefix, names[i]) >= (int)sizeof entry || lstat(path, &st) != 0) {
            rc = PACER_ERR_IO;
            snprintf(err, err_len, "cannot examine %s", path);
        } else if (S_ISDIR(st.st_mode)) {
            rc = add_tree(z, path, entry, depth + 1, n, err, err_len);
        } else if (S_ISREG(st.st_mode)) {
            zip_source_t *src = zip_source_file(z, path, 0, -1);
            if (!src || zip_file_add(z, entry, src, ZIP_FL_ENC_UTF_8) < 0) {
                zip_source_free(src);
                snprintf(err, err_len, "cannot add %s to the archive: %s", entry, zip_strerror(z));
                rc = PACER_ERR_IO;
            } else {
                (*n)++;
            }
        }
    }
    for (size_t i = 0; i < k; i++) free(names[i]);
    free(names);
    return rc;
}

pacer_err lab_archive_write(const char *dir, const char *zip_path, size_t *n_files, char *err, size_t err_len) {
    *n_files = 0;
    char tmp[PATH_MAX], base[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.partial", zip_path) >= (int)sizeof tmp || snprintf(base, sizeof base, "%s", dir) >= (int)sizeof base)
        return PACER_ERR_TOO_BIG;
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = '\0';
    const char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    unlink(tmp);
    int zerr = 0;
    zip_t *z = zip_open(tmp, ZIP_CREATE | ZIP_EXCL, &zerr);
    if (!z) {
        snprintf(err, err_len, "cannot create %s (libzip error %d)", tmp, zerr);
        return PACER_ERR_IO;
    }
    pacer_err rc = add_tree(z, base, name, 0, n_files, err, err_len);
    if (rc) {
        zip_discard(z);
        unlink(tmp);
        return rc;
    }
    if (zip_close(z) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", tmp, zip_strerror(z));
        zip_discard(z);
        unlink(tmp);
        return PACER_ERR_IO;
    }
    if (rename(tmp, zip_path) != 0) {
        snprintf(err, err_len, "cannot rename the archive into %s", zip_path);
        unlink(tmp);
        return PACER_ERR_IO;
    }
    return PACER_OK;
}
