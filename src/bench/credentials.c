/* credentials.c - the credentials file: {"default": URL, "boards": {URL: {"token": T}}},
 * written atomically with mode 0600; read only when nobody else can read it. */
#include "bench/credentials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/fileio.h"

#define CREDENTIALS_FILE_MAX (1u << 20)

pacer_err credentials_path(char *out, size_t n) {
    const char *home = path_home();
    if (!home) return PACER_ERR_NOT_FOUND;
    snprintf(out, n, "%s/.pacer/credentials.json", home);
    return PACER_OK;
}

/* The file's document (new reference; an empty one when there is no file). */
static pacer_err credentials_load(json_t **out) {
    char path[4096];
    *out = NULL;
    pacer_err rc = credentials_path(path, sizeof path);
    if (rc) return rc;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) return PACER_ERR_IO;
        *out = json_pack("{s:n,s:{}}", "default", "boards");
        return *out ? PACER_OK : PACER_ERR_NOMEM;
    }
    if (st.st_mode & 077) return PACER_ERR_STATE;
    buf b;
    buf_init(&b, CREDENTIALS_FILE_MAX);
    rc = file_read_all(path, &b);
    if (!rc) {
        *out = json_loadb(b.data ? b.data : "", b.len, 0, NULL);
        if (!json_is_object(*out) || !json_is_object(json_object_get(*out, "boards"))) {
            json_decref(*out);
            *out = NULL;
            rc = PACER_ERR_FORMAT;
        }
    }
    buf_free(&b);
    return rc;
}

static pacer_err credentials_save(const json_t *doc) {
    char path[4096], dir[4096];
    pacer_err rc = credentials_path(path, sizeof path);
    if (rc) return rc;
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
    if ((rc = dir_create_all(dir, 0700))) return rc;
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (!text) return PACER_ERR_NOMEM;
    size_t n = strlen(text);
    rc = file_write_atomic(path, text, n, 0600);
    memset(text, 0, n); /* the token does not linger in freed memory */
    free(text);
    return rc;
}

pacer_err credentials_get(const char *url, char token[CREDENTIALS_TOKEN_MAX]) {
    token[0] = '\0';
    json_t *doc;
    pacer_err rc = credentials_load(&doc);
    if (rc) return rc;
    const char *t = json_string_value(json_object_get(json_object_get(json_object_get(doc, "boards"), url), "token"));
    if (!t || !t[0] || strlen(t) >= CREDENTIALS_TOKEN_MAX) rc = PACER_ERR_NOT_FOUND;
    else snprintf(token, CREDENTIALS_TOKEN_MAX, "%s", t);
    json_decref(doc);
    return rc;
}

pacer_err credentials_default_url(char url[CREDENTIALS_URL_MAX]) {
    url[0] = '\0';
    json_t *doc;
    pacer_err rc = credentials_load(&doc);
    if (rc) return rc;
    const char *u = json_string_value(json_object_get(doc, "default"));
    if (!u || !u[0] || strlen(u) >= CREDENTIALS_URL_MAX) rc = PACER_ERR_NOT_FOUND;
    else snprintf(url, CREDENTIALS_URL_MAX, "%s", u);
    json_decref(doc);
    return rc;
}

pacer_err credentials_put(const char *url, const char *token) {
    json_t *doc;
    pacer_err rc = credentials_load(&doc);
    if (rc == PACER_ERR_STATE || rc == PACER_ERR_FORMAT) { /* rewritten whole, with the right mode */
        doc = json_pack("{s:n,s:{}}", "default", "boards");
        rc = doc ? PACER_OK : PACER_ERR_NOMEM;
    }
    if (rc) return rc;
    json_object_set_new(json_object_get(doc, "boards"), url, json_pack("{s:s}", "token", token));
    json_object_set_new(doc, "default", json_string(url));
    rc = credentials_save(doc);
    json_decref(doc);
    return rc;
}

pacer_err credentials_remove(const char *url, bool *removed) {
    char path[4096];
    *removed = false;
    pacer_err rc = credentials_path(path, sizeof path);
    if (rc) return rc;
    if (!url) {
        if (unlink(path) == 0) *removed = true;
        else if (errno != ENOENT) return PACER_ERR_IO;
        return PACER_OK;
    }
    json_t *doc;
    rc = credentials_load(&doc);
    if (rc == PACER_ERR_STATE || rc == PACER_ERR_FORMAT) return credentials_remove(NULL, removed);
    if (rc) return rc;
    json_t *boards = json_object_get(doc, "boards");
    if (json_object_get(boards, url)) {
        json_object_del(boards, url);
        *removed = true;
        if (strcmp(json_string_value(json_object_get(doc, "default")) ? json_string_value(json_object_get(doc, "default")) : "", url) == 0)
            json_object_set_new(doc, "default", json_null());
        rc = json_object_size(boards) ? credentials_save(doc) : credentials_remove(NULL, removed);
    }
    json_decref(doc);
    return rc;
}
