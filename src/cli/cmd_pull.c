/* cmd_pull.c - 'pacer pull REPO[@REV] [--include GLOB]... [--exclude GLOB]...': downloads a
 * checkpoint into the Hugging Face cache; one progress line per file on a terminal, then a
 * summary. A GGUF repo with several quantizations and no --include lists them instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "base/clock.h"
#include "cli/cli.h"
#include "hub/pull.h"

typedef struct pull_view {
    bool tty;
    double t0;
    const char *last;
} pull_view;

static void on_progress(void *ud, const char *path, int64_t done, int64_t total, bool finished) {
    pull_view *v = ud;
    if (v->last != path) {
        v->last = path;
        v->t0 = clock_now_s();
    }
    if (finished) {
        if (v->tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "  %s (%lld bytes)\n", path, (long long)total);
        return;
    }
    if (!v->tty) return;
    double dt = clock_now_s() - v->t0;
    double rate = dt > 0 ? done / dt : 0;
    double eta = (rate > 0 && total > done) ? (total - done) / rate : 0;
    fprintf(stderr, "\r\033[K  %s %lld/%lld bytes %.1f MB/s ETA %.0fs", path, (long long)done, (long long)total,
            rate / 1e6, eta);
}

static void usage(FILE *f) {
    fprintf(f, "usage: pacer pull REPO[@REVISION] [--include GLOB]... [--exclude GLOB]...\n"
               "Downloads a checkpoint into the Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub or\n"
               "~/.cache/huggingface/hub). $HF_TOKEN authenticates; $HF_ENDPOINT picks the hub.\n");
}

int cmd_pull(int argc, char **argv) {
    const char *inc[64], *exc[64];
    size_t ninc = 0, nexc = 0;
    const char *spec = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((strcmp(argv[i], "--include") == 0 || strcmp(argv[i], "--exclude") == 0) && i + 1 < argc) {
            bool in = argv[i][2] == 'i';
            if ((in ? ninc : nexc) >= 64) {
                cli_error("too many patterns");
                return 1;
            }
            if (in) inc[ninc++] = argv[++i];
            else exc[nexc++] = argv[++i];
        } else if (argv[i][0] == '-' || spec) {
            cli_error("unexpected argument '%s'", argv[i]);
            usage(stderr);
            return 1;
        } else {
            spec = argv[i];
        }
    }
    if (!spec) {
        usage(stderr);
        return 1;
    }
    char repo[256];
    snprintf(repo, sizeof repo, "%s", spec);
    char *at = strchr(repo, '@');
    const char *rev = NULL;
    if (at) {
        *at = '\0';
        rev = at + 1;
    }
    hub_plan plan;
    char err[1024] = "";
    int status = 1;
    if (hub_pull_plan(repo, rev, inc, ninc, exc, nexc, &plan, err, sizeof err)) {
        cli_error("%s", err);
        goto out;
    }
    if (ninc == 0 && hub_plan_gguf_count(&plan) > 1) {
        printf("%s@%s holds %zu GGUF files; choose one with --include:\n", plan.repo, plan.revision,
               hub_plan_gguf_count(&plan));
        for (size_t i = 0; i < plan.nfiles; i++) {
            size_t l = strlen(plan.files[i].path);
            if (l >= 5 && strcmp(plan.files[i].path + l - 5, ".gguf") == 0)
                printf("  %-48s %8.2f GB\n", plan.files[i].path, plan.files[i].size / 1e9);
        }
        printf("e.g. pacer pull %s --include '%s'\n", spec, plan.files[0].path);
        status = 2;
        goto out;
    }
    pull_view view = {.tty = isatty(STDERR_FILENO) == 1};
    hub_pull_stats st;
    fprintf(stderr, "pull %s@%s (commit %s), %zu files\n", plan.repo, plan.revision, plan.commit, plan.nfiles);
    if (hub_pull_run(&plan, on_progress, &view, &st, err, sizeof err)) {
        if (view.tty) fprintf(stderr, "\n");
        cli_error("%s", err);
        goto out;
    }
    printf("%zu files (%zu downloaded, %zu already cached), %lld bytes transferred\nsnapshot %s/snapshots/%s\n",
           st.files, st.downloaded, st.cached, (long long)st.bytes, plan.repo_dir, plan.commit);
    status = 0;
out:
    hub_plan_free(&plan);
    return status;
}
