/* test_hub_cache.c - hub/cache: cache root from the environment, revision -> snapshot on a
 * real directory tree, GGUF choice, and the snapshot a path lies in. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "hub/cache.h"

#define C1 "0123456789abcdef0123456789abcdef01234567"
#define C2 "fedcba9876543210fedcba9876543210fedcba98"

static char root[PATH_MAX];

static void put(const char *rel, const char *text) {
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char d[sizeof p];
    snprintf(d, sizeof d, "%s", p);
    *strrchr(d, '/') = '\0';
    cr_assert_eq(dir_create_all(d, 0755), PACER_OK);
    cr_assert_eq(file_write_atomic(p, text, strlen(text), 0644), PACER_OK);
}

static void setup(void) {
    snprintf(root, sizeof root, "/tmp/pacer-hubcache-XXXXXX");
    cr_assert(mkdtemp(root));
    setenv("HF_HUB_CACHE", root, 1);
    put("models--org--m/refs/main", C1);
    put("models--org--m/refs/v1", C2 "\n");
    put("models--org--m/snapshots/" C1 "/model.gguf", "x");
    put("models--org--m/snapshots/" C1 "/config.json", "{}");
    put("models--org--m/snapshots/" C2 "/a-Q4_0.gguf", "x");
    put("models--org--m/snapshots/" C2 "/sub/b-Q8_0.gguf", "x");
    put("models--org--m/refs/bad", "not a commit");
    put("models--org--split/refs/main", C1);
    put("models--org--split/snapshots/" C1 "/m-00001-of-00002.gguf", "x");
    put("models--org--split/snapshots/" C1 "/m-00002-of-00002.gguf", "x");
}

static void teardown(void) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(hub_cache, .init = setup, .fini = teardown);

Test(hub_cache, root_from_environment) {
    char out[PATH_MAX];
    setenv("HF_HUB_CACHE", "/x/hc", 1);
    setenv("HF_HOME", "/x/home", 1);
    cr_assert_eq(hub_cache_root(out, sizeof out), PACER_OK);
    cr_assert_str_eq(out, "/x/hc");
    unsetenv("HF_HUB_CACHE");
    cr_assert_eq(hub_cache_root(out, sizeof out), PACER_OK);
    cr_assert_str_eq(out, "/x/home/hub");
    unsetenv("HF_HOME");
    setenv("HOME", "/x/user", 1);
    cr_assert_eq(hub_cache_root(out, sizeof out), PACER_OK);
    cr_assert_str_eq(out, "/x/user/.cache/huggingface/hub");
    char tiny[4];
    cr_assert_eq(hub_cache_root(tiny, sizeof tiny), PACER_ERR_TOO_BIG);
}

Test(hub_cache, repo_dir_names) {
    char out[PATH_MAX];
    cr_assert_eq(hub_cache_repo_dir("/r", "org/name", out, sizeof out), PACER_OK);
    cr_assert_str_eq(out, "/r/models--org--name");
    cr_assert_eq(hub_cache_repo_dir("/r", "gpt2", out, sizeof out), PACER_OK);
    cr_assert_str_eq(out, "/r/models--gpt2");
    const char *bad[] = {"", "a/b/c", "../x", "a/..", "a--b/c", "/x", "x/", "a b/c"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(hub_cache_repo_dir("/r", bad[i], out, sizeof out), PACER_ERR_ARG, "%s", bad[i]);
}

Test(hub_cache, resolve_main_tag_commit) {
    char snap[PATH_MAX], commit[HUB_COMMIT_MAX], err[HUB_ERR_MAX], want[PATH_MAX * 2];
    cr_assert_eq(hub_cache_resolve("org/m", NULL, snap, sizeof snap, commit, err, sizeof err), PACER_OK, "%s", err);
    snprintf(want, sizeof want, "%s/models--org--m/snapshots/%s", root, C1);
    cr_assert_str_eq(snap, want);
    cr_assert_str_eq(commit, C1);
    cr_assert_eq(hub_cache_resolve("org/m", "v1", snap, sizeof snap, commit, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(commit, C2);
    cr_assert_eq(hub_cache_resolve("org/m", C2, snap, sizeof snap, commit, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(commit, C2);
}

Test(hub_cache, resolve_errors_name_the_cause) {
    char snap[PATH_MAX], commit[HUB_COMMIT_MAX], err[HUB_ERR_MAX];
    cr_assert_eq(hub_cache_resolve("org/none", NULL, snap, sizeof snap, commit, err, sizeof err),
                 PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "pacer pull org/none"), "%s", err);
    cr_assert_eq(hub_cache_resolve("org/m", "v9", snap, sizeof snap, commit, err, sizeof err), PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "pacer pull org/m@v9"), "%s", err);
    cr_assert_eq(hub_cache_resolve("org/m", "bad", snap, sizeof snap, commit, err, sizeof err), PACER_ERR_FORMAT);
    cr_assert_eq(hub_cache_resolve("org/m", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", snap, sizeof snap, commit, err,
                                   sizeof err),
                 PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "pacer pull"), "%s", err);
    cr_assert_eq(hub_cache_resolve("org/m", "../../x", snap, sizeof snap, commit, err, sizeof err), PACER_ERR_ARG);
    cr_assert_eq(hub_cache_resolve("not//valid", NULL, snap, sizeof snap, commit, err, sizeof err), PACER_ERR_ARG);
}

Test(hub_cache, find_gguf_one_several_split) {
    char snap[PATH_MAX], commit[HUB_COMMIT_MAX], err[HUB_ERR_MAX], out[PATH_MAX];
    cr_assert_eq(hub_cache_resolve("org/m", NULL, snap, sizeof snap, commit, err, sizeof err), PACER_OK);
    cr_assert_eq(hub_cache_find_gguf(snap, out, sizeof out, err, sizeof err), PACER_OK, "%s", err);
    cr_assert(strstr(out, "/" C1 "/model.gguf"), "%s", out);
    cr_assert_eq(hub_cache_resolve("org/m", "v1", snap, sizeof snap, commit, err, sizeof err), PACER_OK);
    cr_assert_eq(hub_cache_find_gguf(snap, out, sizeof out, err, sizeof err), PACER_ERR_STATE);
    cr_assert(strstr(err, "a-Q4_0.gguf, sub/b-Q8_0.gguf"), "%s", err);
    cr_assert_eq(hub_cache_resolve("org/split", NULL, snap, sizeof snap, commit, err, sizeof err), PACER_OK);
    cr_assert_eq(hub_cache_find_gguf(snap, out, sizeof out, err, sizeof err), PACER_OK, "%s", err);
    cr_assert(strstr(out, "m-00001-of-00002.gguf"), "%s", out);
    cr_assert_eq(hub_cache_find_gguf("/nonexistent-dir", out, sizeof out, err, sizeof err), PACER_ERR_NOT_FOUND);
}

Test(hub_cache, revision_of_path) {
    char repo[128], commit[HUB_COMMIT_MAX], p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/models--org--m/snapshots/%s/model.gguf", root, C1);
    cr_assert(hub_cache_revision_of_path(p, repo, sizeof repo, commit));
    cr_assert_str_eq(repo, "org/m");
    cr_assert_str_eq(commit, C1);
    cr_assert(hub_cache_revision_of_path("/c/models--gpt2/snapshots/" C2 "/a/b.gguf", repo, sizeof repo, commit));
    cr_assert_str_eq(repo, "gpt2");
    cr_assert(!hub_cache_revision_of_path("/tmp/model.gguf", repo, sizeof repo, commit));
    cr_assert_str_eq(repo, "");
    cr_assert(!hub_cache_revision_of_path("/c/models--o--m/blobs/" C2, repo, sizeof repo, commit));
    cr_assert(!hub_cache_revision_of_path("/c/models--o--m/snapshots/main/x.gguf", repo, sizeof repo, commit));
    cr_assert_eq(chdir(root), 0);
    cr_assert(hub_cache_revision_of_path("models--org--m/snapshots/" C1 "/model.gguf", repo, sizeof repo, commit));
    cr_assert_str_eq(repo, "org/m");
}
