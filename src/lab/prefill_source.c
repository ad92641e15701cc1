/* prefill_source.c - the builds' hashes, versions, commits and source diff (prefill_source.h). */
#include "lab/prefill_source.h"

#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "probe/probe.h"

#define VERSION_MAX 200 /* bytes of the first --version line kept */

/* Runs a command and keeps its output in `out` (cap `cap`), with trailing white space cut
 * unless `exact`. */
static pacer_err run_output(const char *const *argv, bool merge, size_t cap, bool exact, buf *out) {
    buf_init(out, cap);
    pacer_err rc = probe_command_run(argv, 20000, merge, out);
    while (!exact && out->len && isspace((unsigned char)out->data[out->len - 1])) out->data[--out->len] = '\0';
    return rc;
}

static pacer_err run_capture(const char *const *argv, bool merge, size_t cap, buf *out) { return run_output(argv, merge, cap, false, out); }

/* A commit named in parentheses in `text` ("version: 4589 (b4d92a59)"): 7-40 hex digits. */
static bool commit_in(const char *text, char *commit) {
    for (const char *p = strchr(text, '('); p; p = strchr(p + 1, '(')) {
        size_t n = strspn(p + 1, "0123456789abcdef");
        if (n >= 7 && n <= 40 && p[1 + n] == ')') {
            snprintf(commit, 41, "%.*s", (int)n, p + 1);
            return true;
        }
    }
    return false;
}

/* The first non-empty line of the executable's --version output into `version`. */
static void version_of(const char *path, char *version, size_t n, char *commit) {
    const char *argv[] = {path, "--version", NULL};
    buf out;
    version[0] = '\0';
    run_capture(argv, true, 1 << 16, &out); /* whatever it printed, exit status aside */
    const char *p = out.data ? out.data : "";
    while (*p == '\n' || *p == '\r' || *p == ' ') p++;
    size_t len = strcspn(p, "\r\n");
    snprintf(version, n, "%.*s", (int)(len < n ? len : n - 1), p);
    if (!commit_in(out.data ? out.data : "", commit)) commit[0] = '\0';
    buf_free(&out);
}

/* The git checkout holding the directory of `path` into f->top, its HEAD into `head` and
 * whether tracked files differ from it. False when there is none. */
static bool checkout_of(const char *path, lab_build_facts *f, char *head, bool *dirty) {
    char real[PATH_MAX];
    if (!realpath(path, real)) return false;
    const char *dir = dirname(real);
    const char *top_argv[] = {"git", "-C", dir, "rev-parse", "--show-toplevel", NULL};
    buf out;
    bool ok = run_capture(top_argv, false, 1 << 16, &out) == PACER_OK && out.len && out.len < sizeof f->top;
    if (ok) snprintf(f->top, sizeof f->top, "%s", out.data);
    buf_free(&out);
    const char *head_argv[] = {"git", "-C", f->top, "rev-parse", "--verify", "HEAD", NULL};
    ok = ok && run_capture(head_argv, false, 256, &out) == PACER_OK && out.len == 40;
    if (ok) snprintf(head, 41, "%s", out.data);
    buf_free(&out);
    const char *status_argv[] = {"git", "-C", f->top, "status", "--porcelain", "--untracked-files=no", NULL};
    *dirty = ok && (run_capture(status_argv, false, 1 << 20, &out) != PACER_OK || out.len > 0);
    buf_free(&out);
    if (!ok) f->top[0] = '\0';
    return ok;
}

pacer_err lab_build_facts_read(const char *path, lab_build_facts *f, char *err, size_t err_len) {
    memset(f, 0, sizeof *f);
    if (sha256_file_hex(path, f->sha256)) {
        snprintf(err, err_len, "cannot read %s", path);
        return PACER_ERR_IO;
    }
    char version[VERSION_MAX + 1], head[41] = "";
    version_of(path, version, sizeof version, f->commit);
    bool dirty = false, in_checkout = checkout_of(path, f, head, &dirty);
    const char *source = NULL, *note = NULL;
    bool from_checkout = !f->commit[0] && in_checkout;
    if (f->commit[0]) source = "its --version";
    else if (from_checkout) source = "the HEAD of the git checkout it sits in", snprintf(f->commit, sizeof f->commit, "%s", head);
    else note = "its --version names no commit (pacer's does not) and it does not sit in a git checkout";
    f->json = json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:b}", "sha256", f->sha256, "version", version, "commit", f->commit[0] ? f->commit : NULL,
                        "commit_source", source, "commit_note", note, "dirty", from_checkout && dirty);
    if (!f->json) {
        snprintf(err, err_len, "out of memory");
        return PACER_ERR_NOMEM;
    }
    return PACER_OK;
}

void lab_build_facts_free(lab_build_facts *f) {
    json_decref(f->json);
    f->json = NULL;
}

static json_t *unavailable(const char *why) { return json_pack("{s:b,s:s}", "available", false, "reason", why); }

/* git diff A B in checkout `top`: the short statistics into `stat`, the whole into `diff`. */
static pacer_err diff_in(const char *top, const char *a, const char *b, buf *stat, buf *diff) {
    const char *stat_argv[] = {"git", "-C", top, "diff", "--shortstat", a, b, NULL};
    const char *diff_argv[] = {"git", "-C", top, "diff", a, b, NULL};
    pacer_err rc = run_capture(stat_argv, false, 1 << 16, stat);
    buf_free(diff);
    if (!rc) rc = run_output(diff_argv, false, LAB_DIFF_MAX, true, diff); /* the diff as git wrote it */
    return rc;
}

json_t *lab_build_diff(const lab_build_facts *before, const lab_build_facts *after, buf *diff) {
    buf_init(diff, LAB_DIFF_MAX);
    if (!before->commit[0] || !after->commit[0]) return unavailable(!before->commit[0] ? "the before build's commit is unknown" : "the after build's commit is unknown");
    if (!strcmp(before->commit, after->commit))
        return json_pack("{s:b,s:s,s:s,s:s,s:i,s:n}", "available", true, "from", before->commit, "to", after->commit, "summary",
                         "the same commit: no source difference", "bytes", 0, "sha256");
    const char *tops[2] = {after->top, before->top};
    pacer_err rc = PACER_ERR_NOT_FOUND;
    buf stat;
    buf_init(&stat, 1);
    for (int i = 0; i < 2 && rc; i++) {
        if (!tops[i][0] || (i == 1 && !strcmp(tops[0], tops[1]))) continue;
        buf_free(&stat);
        rc = diff_in(tops[i], before->commit, after->commit, &stat, diff);
    }
    json_t *out = NULL;
    char hash[65];
    if (rc == PACER_ERR_TOO_BIG)
        out = unavailable("the source diff is larger than 32 MB");
    else if (rc)
        out = unavailable(!before->top[0] && !after->top[0] ? "neither build sits in a git checkout"
                                                            : "no git checkout of either build holds both commits");
    else if (sha256_hex(diff->data ? diff->data : "", diff->len, hash))
        out = unavailable("out of memory");
    else {
        const char *summary = stat.data ? stat.data : "";
        while (isspace((unsigned char)*summary)) summary++;
        out = json_pack("{s:b,s:s,s:s,s:s,s:I,s:s}", "available", true, "from", before->commit, "to", after->commit, "summary",
                        summary[0] ? summary : "no source difference", "bytes", (json_int_t)diff->len, "sha256", hash);
    }
    if (rc) buf_free(diff), buf_init(diff, LAB_DIFF_MAX);
    buf_free(&stat);
    return out;
}
