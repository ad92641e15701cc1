/* cache.h - the Hugging Face cache layout, read side: where the cache is, which snapshot a
 * repo id (and revision) names, which GGUF file a snapshot holds, and whether a file path
 * lies inside a snapshot. No network; used by `pacer bench`, `pacer serve` and `pacer pull`. */
#ifndef PACER_HUB_CACHE_H
#define PACER_HUB_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define HUB_COMMIT_MAX 64   /* a commit id is 40 hex digits; room to spare, NUL included */
#define HUB_ERR_MAX 512     /* suggested size of the `err` buffers below */

/* Writes the cache root to `out` (`n` bytes): $HF_HUB_CACHE, else $HF_HOME/hub, else
 * ~/.cache/huggingface/hub. Does not check that it exists. PACER_ERR_NOT_FOUND when no
 * home directory is known, PACER_ERR_TOO_BIG when `out` is too small. */
pacer_err hub_cache_root(char *out, size_t n);

/* Writes ROOT/models--ORG--NAME for `repo` ("ORG/NAME" or "NAME") to `out`. `root` NULL
 * means hub_cache_root(). PACER_ERR_ARG for a malformed repo id (empty, "..", more than one
 * '/', a "--" or a leading '.' in a part). */
pacer_err hub_cache_repo_dir(const char *root, const char *repo, char *out, size_t n);

/* True when `s` is a commit id: exactly 40 lowercase hex digits. */
bool hub_is_commit(const char *s);

/* Finds the snapshot directory of `repo` at `revision` in the cache (no network).
 * `revision` NULL or "" means "main"; a commit id names snapshots/COMMIT directly; any other
 * value is a branch or tag read from refs/REVISION. On success `snapshot` holds the
 * directory's path and `commit` (HUB_COMMIT_MAX bytes) the commit id. Errors, with words
 * in `err` (`err_len` bytes; may be NULL): PACER_ERR_NOT_FOUND when the repo, the ref or the
 * snapshot is absent (the message names `pacer pull REPO[@REV]`), PACER_ERR_FORMAT when a ref
 * file holds no commit id, PACER_ERR_ARG for a malformed repo id or revision. */
pacer_err hub_cache_resolve(const char *repo, const char *revision, char *snapshot, size_t snapn,
                            char *commit, char *err, size_t err_len);

/* Picks the one .gguf file of a snapshot directory (searched recursively, symlinks
 * followed; a split model's "-00001-of-000NN.gguf" first part stands for its set).
 * On success `out` holds its path. PACER_ERR_NOT_FOUND when there is none;
 * PACER_ERR_STATE when there are several: `err` then lists the candidates (relative
 * paths, comma separated) so the user can name one. */
pacer_err hub_cache_find_gguf(const char *snapshot, char *out, size_t n, char *err, size_t err_len);

/* Tells whether `path` (a file or directory, as given: symlinks are not resolved, since a
 * snapshot entry links into blobs/) lies inside ROOT/models--ORG--NAME/snapshots/COMMIT/
 * of some cache. Returns true and fills `repo` ("ORG/NAME", `repon` bytes) and `commit`
 * (HUB_COMMIT_MAX bytes) when it does; false (outputs emptied) otherwise. A relative path
 * is taken against the current directory. */
bool hub_cache_revision_of_path(const char *path, char *repo, size_t repon, char *commit);

#endif
