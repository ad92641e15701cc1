/* pull.h - downloads a repo revision from a Hugging Face hub into the cache layout
 * (blobs/ETAG, snapshots/COMMIT/PATH as relative links, refs/REV), verifying each file and
 * resuming interrupted downloads. The one place in pacer that follows HTTP redirects. */
#ifndef PACER_HUB_PULL_H
#define PACER_HUB_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "hub/cache.h"

typedef struct hub_file {
    char *path;      /* path inside the repo */
    int64_t size;    /* bytes, -1 when the hub did not say */
    char etag[72];   /* sha256 (64 hex) for large files, git blob sha1 (40 hex) for others */
    bool cached;     /* the blob is already in the cache */
} hub_file;

typedef struct hub_plan {
    char repo[256];
    char revision[256];            /* as asked ("main" by default) */
    char commit[HUB_COMMIT_MAX];   /* what the hub resolved it to */
    char endpoint[1024];           /* $HF_ENDPOINT or https://huggingface.co, no trailing '/' */
    char repo_dir[4096];           /* CACHE/models--ORG--NAME */
    hub_file *files;               /* the selected files, in the hub's order */
    size_t nfiles;
} hub_plan;

typedef struct hub_pull_stats {
    size_t files, downloaded, cached;
    int64_t bytes;                 /* bytes transferred in this run */
} hub_pull_stats;

/* Called while a file downloads (done/total bytes, total -1 when unknown) and once when it
 * is in place (finished true). */
typedef void (*hub_progress_fn)(void *ud, const char *path, int64_t done, int64_t total, bool finished);

/* Asks the hub (GET ENDPOINT/api/models/REPO/revision/REV?blobs=true) for the commit and file
 * list of `repo` at `revision` (NULL: "main"), keeps the files matching one of `include`
 * (all when none) and none of `exclude` (fnmatch globs), and marks those already cached.
 * $HF_TOKEN, when set, is sent as a bearer token and appears in no message. Errors with
 * words in `err`: PACER_ERR_NOT_FOUND (repo or revision unknown, or nothing selected),
 * PACER_ERR_HTTP (401/403: gated or private, "set HF_TOKEN"), PACER_ERR_NET (no network),
 * PACER_ERR_PARSE/FORMAT (an answer that is not the hub's), PACER_ERR_ARG. Free with
 * hub_plan_free() whatever the result. */
pacer_err hub_pull_plan(const char *repo, const char *revision, const char *const *include, size_t ninclude,
                        const char *const *exclude, size_t nexclude, hub_plan *plan, char *err, size_t err_len);

/* Number of .gguf files among the selected ones. */
size_t hub_plan_gguf_count(const hub_plan *plan);

/* Downloads the plan's files that are not cached (resuming BLOB.incomplete with Range,
 * following redirects, retrying a dropped transfer twice), verifies each against its etag,
 * moves it into blobs/ by rename, links snapshots/COMMIT/PATH to it and writes refs/REV.
 * A file that fails verification is deleted and the pull fails with PACER_ERR_INTEGRITY;
 * a transfer cut short keeps its .incomplete file for the next pull (PACER_ERR_NET);
 * PACER_ERR_IO names the path (e.g. disk full). `progress` may be NULL. */
pacer_err hub_pull_run(hub_plan *plan, hub_progress_fn progress, void *ud, hub_pull_stats *stats, char *err,
                       size_t err_len);

void hub_plan_free(hub_plan *plan);

#endif
