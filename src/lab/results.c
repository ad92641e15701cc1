/* results.c - files of the results directory, each replaced atomically (temporary file,
 * fsync, rename), so that a kill at any moment leaves either the old or the new file. */
#include "lab/results.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/sha256.h"

static const char *const lab_subdirs[] = {"samples", "answers", "pelicans"};
static const char lab_gitignore[] = "# pacer lab results stay out of Git\n*\n";

static pacer_err path_of(char *out, size_t n, const char *dir, const char *rel) {
    return snprintf(out, n, "%s/%s", dir, rel) < (int)n ? PACER_OK : PACER_ERR_TOO_BIG;
}

static bool dir_is_empty(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return true;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d))) empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

pacer_err lab_results_check_new(const char *dir, char *err, size_t err_len) {
    struct stat st;
    if (stat(dir, &st) == 0 && (!S_ISDIR(st.st_mode) || !dir_is_empty(dir))) {
        snprintf(err, err_len, "%s exists and is not an empty directory (a run is never written over)", dir);
        return PACER_ERR_STATE;
    }
    return PACER_OK;
}

pacer_err lab_results_create_bare(const char *dir, char *err, size_t err_len) {
    pacer_err rc = lab_results_check_new(dir, err, err_len);
    if (rc) return rc;
    char p[PATH_MAX];
    if (dir_create_all(dir, 0755)) {
        snprintf(err, err_len, "cannot create %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    if (path_of(p, sizeof p, dir, ".gitignore") || file_write_atomic(p, lab_gitignore, sizeof lab_gitignore - 1, 0644)) {
        snprintf(err, err_len, "cannot write %s/.gitignore", dir);
        return PACER_ERR_IO;
    }
    return PACER_OK;
}

pacer_err lab_results_create(const char *dir, char *err, size_t err_len) {
    struct stat st;
    if (stat(dir, &st) == 0 && (!S_ISDIR(st.st_mode) || !dir_is_empty(dir))) {
        snprintf(err, err_len, "%s exists and is not an empty directory (--resume continues a run there)", dir);
        return PACER_ERR_STATE;
    }
    pacer_err rc = lab_results_create_bare(dir, err, err_len);
    char p[PATH_MAX];
    for (size_t i = 0; !rc && i < sizeof lab_subdirs / sizeof lab_subdirs[0]; i++) {
        if (path_of(p, sizeof p, dir, lab_subdirs[i]) || dir_create_all(p, 0755)) {
            snprintf(err, err_len, "cannot create %s/%s", dir, lab_subdirs[i]);
            rc = PACER_ERR_IO;
        }
    }
    return rc;
}

pacer_err lab_results_ignore_dir(const char *dir) {
    char p[PATH_MAX];
    struct stat st;
    pacer_err rc = path_of(p, sizeof p, dir, ".gitignore");
    if (rc || stat(p, &st) == 0) return rc;
    if (dir_create_all(dir, 0755)) return PACER_ERR_IO;
    return file_write_atomic(p, lab_gitignore, sizeof lab_gitignore - 1, 0644);
}

pacer_err lab_results_write_file(const char *dir, const char *rel, const void *data, size_t n, char *err, size_t err_len) {
    char p[PATH_MAX];
    pacer_err rc = path_of(p, sizeof p, dir, rel);
    if (!rc) rc = file_write_atomic(p, data, n, 0644);
    if (rc) snprintf(err, err_len, "cannot write %s/%s: %s", dir, rel, pacer_strerror(rc));
    return rc;
}

pacer_err lab_results_write_json(const char *dir, const char *name, const json_t *doc, bool canonical, char *err,
                                 size_t err_len) {
    char *text = canonical ? json_canonical_dump(doc) : json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    if (!text) {
        snprintf(err, err_len, "out of memory encoding %s", name);
        return PACER_ERR_NOMEM;
    }
    size_t n = strlen(text);
    if (!canonical) text[n] = '\n'; /* json_dumps leaves room: the terminator becomes a newline */
    pacer_err rc = lab_results_write_file(dir, name, text, canonical ? n : n + 1, err, err_len);
    free(text);
    return rc;
}

pacer_err lab_results_write_sample(const char *dir, lab_sample_result *s, json_t *earlier, char *err, size_t err_len) {
    lab_record *r = &s->rec;
    const char *text = s->answer.data ? s->answer.data : "";
    snprintf(r->answer_file, sizeof r->answer_file, "answers/%s.txt", r->id);
    pacer_err rc = sha256_hex(text, s->answer.len, r->answer_sha256);
    if (!rc) rc = lab_results_write_file(dir, r->answer_file, text, s->answer.len, err, err_len);
    if (rc) return rc;
    if (strcmp(r->kind, "svg") == 0 && r->finish != LAB_FINISH_ERROR) {
        /* named by workload too: two svg workloads of one suite never share a file */
        char file[2 * LAB_NAME_MAX + 48];
        snprintf(file, sizeof file, "pelicans/%s-%s-%lld.svg", r->workload, r->config, (long long)r->round);
        if (s->svg.found && (rc = lab_results_write_file(dir, file, text + s->svg.start, s->svg.len, err, err_len))) return rc;
        json_decref(r->svg);
        r->svg = json_pack("{s:s?,s:b,s:s?}", "file", s->svg.found ? file : NULL, "valid", s->svg.valid, "reason",
                           s->svg.reason[0] ? s->svg.reason : NULL);
    }
    json_decref(r->earlier);
    r->earlier = earlier ? json_incref(earlier) : NULL;
    json_t *j = lab_record_to_json(r);
    if (!j) {
        snprintf(err, err_len, "out of memory");
        return PACER_ERR_NOMEM;
    }
    char name[LAB_ID_MAX + 16];
    snprintf(name, sizeof name, "samples/%s.json", r->id);
    rc = lab_results_write_json(dir, name, j, false, err, err_len);
    json_decref(j);
    return rc;
}

pacer_err lab_results_read_json(const char *dir, const char *name, json_t **out, char *err, size_t err_len) {
    *out = NULL;
    char p[PATH_MAX];
    if (path_of(p, sizeof p, dir, name)) return PACER_ERR_TOO_BIG;
    buf b;
    buf_init(&b, LAB_RUN_FILE_MAX);
    pacer_err rc = file_read_all(p, &b);
    if (rc == PACER_ERR_NOT_FOUND) {
        snprintf(err, err_len, "%s/%s does not exist", dir, name);
    } else if (rc) {
        snprintf(err, err_len, "cannot read %s/%s: %s", dir, name, pacer_strerror(rc));
    } else {
        json_error_t je;
        *out = json_loadb(b.data ? b.data : "", b.len, JSON_REJECT_DUPLICATES, &je);
        if (!*out) {
            snprintf(err, err_len, "%s/%s is not JSON: %s", dir, name, je.text);
            rc = PACER_ERR_FORMAT;
        }
    }
    buf_free(&b);
    return rc;
}

pacer_err lab_results_read_sample(const char *dir, const char *id, lab_record *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    char name[LAB_ID_MAX + 16];
    snprintf(name, sizeof name, "samples/%s.json", id);
    json_t *j;
    pacer_err rc = lab_results_read_json(dir, name, &j, err, err_len);
    if (rc) return rc;
    rc = lab_record_from_json(j, out, err, err_len);
    json_decref(j);
    if (rc) return rc;
    char expect[LAB_ID_MAX + 16], hash[65] = "", p[PATH_MAX];
    snprintf(expect, sizeof expect, "answers/%s.txt", id);
    if (strcmp(out->id, id) || strcmp(out->answer_file, expect) || path_of(p, sizeof p, dir, expect) ||
        sha256_file_hex(p, hash) || strcmp(hash, out->answer_sha256)) {
        snprintf(err, err_len, "sample %s: its record does not match its name or its answer file", id);
        lab_record_free(out);
        return PACER_ERR_FORMAT;
    }
    return PACER_OK;
}
