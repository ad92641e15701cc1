/* hub_resolve.c - test tool: resolves REPO [REVISION] in the Hugging Face cache the way
 * `pacer bench REPO` does (hub/cache only, no network) and prints
 * "commit C gguf PATH repo R", or the error message with exit status 1. */
#include <limits.h>
#include <stdio.h>

#include "hub/cache.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hub_resolve REPO [REVISION]\n");
        return 2;
    }
    char snap[PATH_MAX], commit[HUB_COMMIT_MAX], err[HUB_ERR_MAX], gguf[PATH_MAX], repo[256], c2[HUB_COMMIT_MAX];
    if (hub_cache_resolve(argv[1], argc > 2 ? argv[2] : NULL, snap, sizeof snap, commit, err, sizeof err) ||
        hub_cache_find_gguf(snap, gguf, sizeof gguf, err, sizeof err)) {
        printf("error: %s\n", err);
        return 1;
    }
    if (!hub_cache_revision_of_path(gguf, repo, sizeof repo, c2)) {
        printf("error: %s is not inside a snapshot\n", gguf);
        return 1;
    }
    printf("commit %s gguf %s repo %s\n", c2, gguf, repo);
    return 0;
}
