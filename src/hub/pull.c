/* pull.c - hub revision API, file downloads with libcurl (redirects followed, Range resume),
 * verification against sha256 / git blob sha1, and placement into the cache layout. */
#include "hub/pull.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "base/json.h"
#include "net/client.h"
#include "net/http.h"

#define API_MAX (16u << 20) /* cap on the revision API's answer */

static bool is_hex(const char *s, size_t n) {
    if (strlen(s) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* A repo path that stays inside the snapshot: relative, no "." or ".." parts, no "//". */
static bool repo_path_ok(const char *p) {
    if (!*p || p[0] == '/' || strstr(p, "//") || strlen(p) > 1024) return false;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
        s += n + (e ? 1 : 0);
    }
    return true;
}

typedef struct http_ctx {
    CURL *h;
    buf *body;           /* API answers */
    FILE *out;           /* file downloads */
    bool write_failed;
    int write_errno;
    char error_code[64]; /* X-Error-Code of the answer */
    char linked_etag[80];
    char etag[80];
    hub_progress_fn progress;
    void *ud;
    const char *path;
    int64_t base, total;
} http_ctx;

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
    http_ctx *c = ud;
    size_t len = sz * n;
    if (c->out) {
        long status = 0;
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200 && status != 206) return len; /* an error page is not the file */
        if (fwrite(p, 1, len, c->out) != len) {
            c->write_failed = true;
            c->write_errno = errno;
            return 0;
        }
        return len;
    }
    return buf_append(c->body, p, len) == PACER_OK ? len : 0;
}

/* Copies a header's value (quotes and a W/ prefix removed) when `line` is that header. */
static void header_take(const char *line, size_t len, const char *name, char *out, size_t outn) {
    size_t nl = strlen(name);
    if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':') return;
    const char *v = line + nl + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    if (end - v >= 2 && v[0] == 'W' && v[1] == '/') v += 2;
    if (v < end && *v == '"') v++;
    if (end > v && end[-1] == '"') end--;
    snprintf(out, outn, "%.*s", (int)(end - v), v);
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
    http_ctx *c = ud;
    size_t len = sz * n;
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0) c->error_code[0] = '\0';
    header_take(p, len, "X-Error-Code", c->error_code, sizeof c->error_code);
    /* the first answer (the hub's own) carries the etags; the storage's come after it */
    if (!c->linked_etag[0]) header_take(p, len, "X-Linked-Etag", c->linked_etag, sizeof c->linked_etag);
    if (!c->etag[0]) header_take(p, len, "ETag", c->etag, sizeof c->etag);
    return len;
}

static int on_xfer(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    http_ctx *c = ud;
    if (c->progress) c->progress(c->ud, c->path, c->base + dlnow, dltotal ? c->base + dltotal : c->total, false);
    return 0;
}

/* A curl handle set up for the hub: bearer token from $HF_TOKEN, timeouts, redirects. */
static CURL *hub_curl(const char *url, http_ctx *c, struct curl_slist **hdrs) {
    CURL *h = curl_easy_init();
    /* redirects (the hub sends files to its CDN) and the environment's proxy rules */
    http_client_options co = {.connect_timeout_ms = 20000, .max_redirects = 5, .use_proxy = true};
    if (!h || http_client_setup(h, url, &co)) {
        if (h) curl_easy_cleanup(h);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    const char *tok = getenv("HF_TOKEN");
    if (tok && *tok) {
        /* curl's own bearer auth: never sent on to another host after a redirect */
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, tok);
    }
    *hdrs = curl_slist_append(NULL, "Accept-Encoding: identity");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    return h;
}

/* Words for a failed transfer or an HTTP error status; the URL is not shown (it is ours). */
static pacer_err http_fail(CURLcode cc, long status, const http_ctx *c, const char *repo, const char *rev,
                           const char *endpoint, const char *what, char *err, size_t err_len) {
    if (cc != CURLE_OK) {
        if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_CONNECT || cc == CURLE_OPERATION_TIMEDOUT)
            pacer_errorf(err, err_len, PACER_OK, "cannot reach %s (%s): no network?", endpoint, curl_easy_strerror(cc));
        else
            pacer_errorf(err, err_len, PACER_OK, "%s: transfer failed: %s", what, curl_easy_strerror(cc));
        return PACER_ERR_NET;
    }
    if (status == 401 || status == 403) {
        pacer_errorf(err, err_len, PACER_OK, "%s: repo %s not found, gated or private (HTTP %ld): set HF_TOKEN to a token with access",
                what, repo, status);
        return PACER_ERR_HTTP;
    }
    if (status == 404) {
        if (strcmp(c->error_code, "RevisionNotFound") == 0)
            pacer_errorf(err, err_len, PACER_OK, "revision '%s' not found in %s", rev, repo);
        else if (strcmp(c->error_code, "EntryNotFound") == 0)
            pacer_errorf(err, err_len, PACER_OK, "%s: not found in %s@%s", what, repo, rev);
        else
            pacer_errorf(err, err_len, PACER_OK, "repo %s not found on %s (HTTP 404; a private repo needs HF_TOKEN)", repo, endpoint);
        return PACER_ERR_NOT_FOUND;
    }
    pacer_errorf(err, err_len, PACER_OK, "%s: the hub answered HTTP %ld", what, status);
    return PACER_ERR_HTTP;
}

static bool selected(const char *path, const char *const *inc, size_t ninc, const char *const *exc, size_t nexc) {
    bool in = ninc == 0;
    for (size_t i = 0; i < ninc && !in; i++) in = fnmatch(inc[i], path, 0) == 0;
    for (size_t i = 0; i < nexc && in; i++) in = fnmatch(exc[i], path, 0) != 0;
    return in;
}

static bool file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The plan's repository, revision, cache directory and endpoint, checked. */
static pacer_err plan_begin(hub_plan *plan, const char *repo, const char *rev, char *err, size_t err_len) {
    pacer_err rc = hub_cache_repo_dir(NULL, repo, plan->repo_dir, sizeof plan->repo_dir);
    if (rc) {
        pacer_errorf(err, err_len, PACER_OK, rc == PACER_ERR_ARG ? "'%s' is not a valid repo id (expected ORG/NAME)"
                                               : "no Hugging Face cache directory for %s (set HF_HUB_CACHE or HF_HOME)",
                repo ? repo : "");
        return rc;
    }
    if (strlen(rev) >= sizeof plan->revision || rev[0] == '/' || strstr(rev, "..") || strchr(rev, ' ')) {
        pacer_errorf(err, err_len, PACER_OK, "'%s' is not a valid revision", rev);
        return PACER_ERR_ARG;
    }
    snprintf(plan->repo, sizeof plan->repo, "%s", repo);
    snprintf(plan->revision, sizeof plan->revision, "%s", rev);
    const char *ep = getenv("HF_ENDPOINT");
    snprintf(plan->endpoint, sizeof plan->endpoint, "%s", (ep && *ep) ? ep : "https://huggingface.co");
    size_t el = strlen(plan->endpoint);
    while (el && plan->endpoint[el - 1] == '/') plan->endpoint[--el] = '\0';
    return PACER_OK;
}

/* The files of the hub's revision answer `root` that the patterns select, with their
 * content hashes and whether the cache holds them already. */
static pacer_err plan_files(hub_plan *plan, const json_t *root, const char *const *include, size_t ninclude,
                            const char *const *exclude, size_t nexclude, char *err, size_t err_len) {
    const char *sha = json_get_str(root, "sha", NULL);
    json_t *sib = json_object_get(root, "siblings");
    if (!sha || !is_hex(sha, 40) || !json_is_array(sib))
        return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "the hub's revision answer has no commit sha or file list");
    snprintf(plan->commit, sizeof plan->commit, "%s", sha);
    plan->files = calloc(json_array_size(sib) + 1, sizeof *plan->files);
    if (!plan->files) return PACER_ERR_NOMEM;
    size_t i;
    json_t *f;
    json_array_foreach(sib, i, f) {
        const char *p = json_get_str(f, "rfilename", NULL);
        if (!p || !repo_path_ok(p))
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "the hub lists a file with an unsafe or missing name");
        if (!selected(p, include, ninclude, exclude, nexclude)) continue;
        hub_file *hf = &plan->files[plan->nfiles];
        json_t *lfs = json_object_get(f, "lfs");
        const char *etag = lfs ? json_get_str(lfs, "sha256", NULL) : json_get_str(f, "blobId", NULL);
        if (!etag || !(lfs ? is_hex(etag, 64) : is_hex(etag, 40)))
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "the hub gives no content hash for %s", p);
        if (!(hf->path = strdup(p))) return PACER_ERR_NOMEM;
        plan->nfiles++;
        snprintf(hf->etag, sizeof hf->etag, "%s", etag);
        hf->size = lfs ? json_get_int(lfs, "size", -1) : json_get_int(f, "size", -1);
        char bp[PATH_MAX];
        hf->cached = snprintf(bp, sizeof bp, "%s/blobs/%s", plan->repo_dir, etag) < (int)sizeof bp && file_exists(bp);
    }
    return PACER_OK;
}

pacer_err hub_pull_plan(const char *repo, const char *revision, const char *const *include, size_t ninclude,
                        const char *const *exclude, size_t nexclude, hub_plan *plan, char *err, size_t err_len) {
    memset(plan, 0, sizeof *plan);
    const char *rev = (revision && *revision) ? revision : "main";
    pacer_err rc = plan_begin(plan, repo, rev, err, err_len);
    if (rc) return rc;
    http_global_once();
    buf body, url;
    buf_init(&body, API_MAX);
    buf_init(&url, 8192);
    http_ctx c = {.body = &body};
    struct curl_slist *hdrs = NULL;
    CURL *h = NULL;
    json_t *root = NULL;
    char *erev = curl_easy_escape(NULL, rev, 0);
    if (!erev || buf_appendf(&url, "%s/api/models/%s/revision/%s?blobs=true", plan->endpoint, repo, erev)) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    if (!(h = hub_curl(url.data, &c, &hdrs))) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (cc != CURLE_OK || status != 200) {
        rc = http_fail(cc, status, &c, repo, rev, plan->endpoint, "revision lookup", err, err_len);
        goto out;
    }
    json_error_t je;
    root = json_loadb(body.data ? body.data : "", body.len, 0, &je);
    if (!root) {
        pacer_errorf(err, err_len, PACER_OK, "the hub's revision answer is not JSON (line %d: %s)", je.line, je.text);
        rc = PACER_ERR_PARSE;
        goto out;
    }
    if ((rc = plan_files(plan, root, include, ninclude, exclude, nexclude, err, err_len))) goto out;
    if (plan->nfiles == 0)
        rc = pacer_errorf(err, err_len, PACER_ERR_NOT_FOUND, "no file of %s@%s matches the --include/--exclude patterns",
                          repo, rev);
out:
    json_decref(root);
    curl_free(erev);
    if (h) curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    buf_free(&body);
    buf_free(&url);
    return rc;
}

size_t hub_plan_gguf_count(const hub_plan *plan) {
    size_t n = 0;
    for (size_t i = 0; i < plan->nfiles; i++) {
        size_t l = strlen(plan->files[i].path);
        if (l >= 5 && strcmp(plan->files[i].path + l - 5, ".gguf") == 0) n++;
    }
    return n;
}

void hub_plan_free(hub_plan *plan) {
    if (!plan) return;
    for (size_t i = 0; i < plan->nfiles; i++) free(plan->files[i].path);
    free(plan->files);
    plan->files = NULL;
    plan->nfiles = 0;
}

/* Hash of a file as the hub names it: sha256 (64 hex) or git's blob sha1 (40 hex). */
static pacer_err file_etag_hash(const char *path, bool git_sha1, char *out, size_t outn) {
    FILE *f = fopen(path, "rb");
    if (!f) return PACER_ERR_IO;
    struct stat st;
    pacer_err rc = PACER_OK;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md || fstat(fileno(f), &st) != 0 || !EVP_DigestInit_ex(md, git_sha1 ? EVP_sha1() : EVP_sha256(), NULL)) {
        rc = PACER_ERR_IO;
        goto out;
    }
    if (git_sha1) {
        char hdr[64];
        int hl = snprintf(hdr, sizeof hdr, "blob %lld", (long long)st.st_size);
        EVP_DigestUpdate(md, hdr, (size_t)hl + 1); /* the NUL is part of git's header */
    }
    static char block[1 << 16];
    for (size_t n; (n = fread(block, 1, sizeof block, f)) > 0;) EVP_DigestUpdate(md, block, n);
    if (ferror(f)) {
        rc = PACER_ERR_IO;
        goto out;
    }
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    EVP_DigestFinal_ex(md, d, &dl);
    if (outn < dl * 2 + 1) {
        rc = PACER_ERR_TOO_BIG;
        goto out;
    }
    for (unsigned int i = 0; i < dl; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
out:
    EVP_MD_CTX_free(md);
    fclose(f);
    return rc;
}

/* One transfer attempt into `part` (appending from its current size with Range). */
static pacer_err download_once(hub_plan *plan, const hub_file *hf, const char *part, hub_progress_fn progress,
                               void *ud, int64_t *got, char *err, size_t err_len) {
    struct stat st;
    int64_t have = stat(part, &st) == 0 ? (int64_t)st.st_size : 0;
    if (hf->size >= 0 && have > hf->size) {
        unlink(part);
        have = 0;
    }
    if (hf->size > 0 && have == hf->size) return PACER_OK; /* complete: only verification is left */
    buf url;
    buf_init(&url, 8192);
    char *epath = NULL;
    pacer_err rc = PACER_OK;
    struct curl_slist *hdrs = NULL;
    http_ctx c = {.progress = progress, .ud = ud, .path = hf->path, .base = have, .total = hf->size};
    CURL *h = NULL;
    curl_off_t dl = 0; /* bytes this call downloaded: every exit counts them */
    /* path parts are escaped, the '/' between them kept */
    buf ep;
    buf_init(&ep, 8192);
    for (const char *s = hf->path; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *x = curl_easy_escape(NULL, s, (int)n);
        /* a part that cannot be escaped or appended fails the download: a cut URL would
         * fetch some other file */
        pacer_err arc = x ? buf_appendf(&ep, "%s%s", x, e ? "/" : "") : PACER_ERR_NOMEM;
        curl_free(x);
        if (arc) { rc = arc; goto out; }
        s += n + (e ? 1 : 0);
    }
    if (buf_appendf(&url, "%s/%s/resolve/%s/%s", plan->endpoint, plan->repo, plan->commit, ep.data ? ep.data : "")) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    c.out = fopen(part, "ab");
    if (!c.out) {
        pacer_errorf(err, err_len, PACER_OK, "cannot write %s: %s", part, strerror(errno));
        rc = PACER_ERR_IO;
        goto out;
    }
    if (!(h = hub_curl(url.data, &c, &hdrs))) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    c.h = h;
    char range[64];
    if (have > 0) {
        snprintf(range, sizeof range, "%lld-", (long long)have);
        curl_easy_setopt(h, CURLOPT_RANGE, range);
    }
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &c);
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &dl);
    if (c.write_failed) {
        pacer_errorf(err, err_len, PACER_OK, "cannot write %s: %s", part,
                c.write_errno == ENOSPC ? "disk full" : strerror(c.write_errno));
        rc = PACER_ERR_IO;
        goto out;
    }
    if (have > 0 && cc == CURLE_OK && status == 200) {
        /* the server ignored Range: what came is the whole file; start over next attempt */
        fclose(c.out);
        c.out = NULL;
        truncate(part, 0);
        rc = PACER_ERR_NET;
        pacer_errorf(err, err_len, PACER_OK, "%s: the server ignored the resume request", hf->path);
        goto out;
    }
    if (cc != CURLE_OK || (status != 200 && status != 206)) {
        if (status == 416) truncate(part, 0);
        rc = http_fail(cc, status, &c, plan->repo, plan->revision, plan->endpoint, hf->path, err, err_len);
        goto out;
    }
    /* the hub's headers must agree with its file list */
    const char *claimed = c.linked_etag[0] ? c.linked_etag : c.etag;
    if (claimed[0] && (is_hex(claimed, 64) || is_hex(claimed, 40)) && strcmp(claimed, hf->etag) != 0) {
        pacer_errorf(err, err_len, PACER_OK, "%s: the hub's etag %s differs from its file list's %s", hf->path, claimed, hf->etag);
        rc = PACER_ERR_INTEGRITY;
        unlink(part);
    }
out:
    *got += (int64_t)dl;
    if (c.out && fclose(c.out) != 0 && !rc) {
        pacer_errorf(err, err_len, PACER_OK, "cannot write %s: %s", part, errno == ENOSPC ? "disk full" : strerror(errno));
        rc = PACER_ERR_IO;
    }
    if (h) curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    buf_free(&url);
    buf_free(&ep);
    free(epath);
    return rc;
}

/* Makes `link` point at `target`, replacing what is there, atomically. */
static pacer_err link_place(const char *target, const char *link) {
    char cur[PATH_MAX];
    ssize_t n = readlink(link, cur, sizeof cur - 1);
    if (n >= 0) {
        cur[n] = '\0';
        if (strcmp(cur, target) == 0) return PACER_OK;
    }
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", link, (long)getpid()) >= (int)sizeof tmp) return PACER_ERR_TOO_BIG;
    unlink(tmp);
    if (symlink(target, tmp) != 0) return PACER_ERR_IO;
    if (rename(tmp, link) != 0) {
        unlink(tmp);
        return PACER_ERR_IO;
    }
    return PACER_OK;
}

static pacer_err file_fetch(hub_plan *plan, hub_file *hf, hub_progress_fn progress, void *ud, hub_pull_stats *st,
                            char *err, size_t err_len) {
    char blob[PATH_MAX], part[PATH_MAX], snapfile[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
    if (snprintf(blob, sizeof blob, "%s/blobs/%s", plan->repo_dir, hf->etag) >= (int)sizeof blob ||
        snprintf(part, sizeof part, "%s.incomplete", blob) >= (int)sizeof part ||
        snprintf(snapfile, sizeof snapfile, "%s/snapshots/%s/%s", plan->repo_dir, plan->commit, hf->path) >=
            (int)sizeof snapfile)
        return PACER_ERR_TOO_BIG;
    pacer_err rc = PACER_OK;
    if (snprintf(dir, sizeof dir, "%s/blobs", plan->repo_dir) >= (int)sizeof dir) return PACER_ERR_TOO_BIG;
    if (dir_create_all(dir, 0755)) {
        pacer_errorf(err, err_len, PACER_OK, "cannot create %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    if (!file_exists(blob)) {
        for (int attempt = 0; attempt < 3; attempt++) {
            rc = download_once(plan, hf, part, progress, ud, &st->bytes, err, err_len);
            if (rc != PACER_ERR_NET) break;
        }
        if (rc) return rc;
        char got[80];
        bool sha1 = strlen(hf->etag) == 40;
        if ((rc = file_etag_hash(part, sha1, got, sizeof got))) {
            pacer_errorf(err, err_len, PACER_OK, "cannot read %s: %s", part, strerror(errno));
            return rc;
        }
        if (strcmp(got, hf->etag) != 0) {
            unlink(part);
            pacer_errorf(err, err_len, PACER_OK, "%s: downloaded content does not match the hub's %s (expected %s, got %s); deleted",
                    hf->path, sha1 ? "git sha1" : "sha256", hf->etag, got);
            return PACER_ERR_INTEGRITY;
        }
        chmod(part, 0644);
        if (rename(part, blob) != 0) {
            pacer_errorf(err, err_len, PACER_OK, "cannot move %s into place: %s", part, strerror(errno));
            return PACER_ERR_IO;
        }
        st->downloaded++;
    } else {
        st->cached++;
    }
    /* the link is relative: ../../blobs/ETAG, one more ../ per directory in the path */
    snprintf(dir, sizeof dir, "%s", snapfile);
    *strrchr(dir, '/') = '\0';
    if (dir_create_all(dir, 0755)) {
        pacer_errorf(err, err_len, PACER_OK, "cannot create %s: %s", dir, strerror(errno));
        return PACER_ERR_IO;
    }
    size_t up = 2;
    for (const char *s = hf->path; *s; s++) up += *s == '/';
    target[0] = '\0';
    for (size_t i = 0; i < up; i++) strcat(target, "../");
    strcat(target, "blobs/");
    strcat(target, hf->etag);
    if (link_place(target, snapfile)) {
        pacer_errorf(err, err_len, PACER_OK, "cannot link %s: %s", snapfile, strerror(errno));
        return PACER_ERR_IO;
    }
    hf->cached = true;
    st->files++;
    if (progress) progress(ud, hf->path, hf->size, hf->size, true);
    return PACER_OK;
}

pacer_err hub_pull_run(hub_plan *plan, hub_progress_fn progress, void *ud, hub_pull_stats *stats, char *err,
                       size_t err_len) {
    memset(stats, 0, sizeof *stats);
    pacer_err rc = PACER_OK;
    for (size_t i = 0; i < plan->nfiles && !rc; i++) rc = file_fetch(plan, &plan->files[i], progress, ud, stats, err, err_len);
    if (!rc && strcmp(plan->revision, plan->commit) != 0) {
        char ref[PATH_MAX * 2], dir[PATH_MAX * 2];
        if (snprintf(ref, sizeof ref, "%s/refs/%s", plan->repo_dir, plan->revision) >= (int)sizeof ref)
            return PACER_ERR_TOO_BIG;
        memcpy(dir, ref, sizeof dir);
        *strrchr(dir, '/') = '\0';
        if (dir_create_all(dir, 0755) || file_write_atomic(ref, plan->commit, strlen(plan->commit), 0644)) {
            pacer_errorf(err, err_len, PACER_OK, "cannot write %s: %s", ref, strerror(errno));
            rc = PACER_ERR_IO;
        }
    }
    return rc;
}
