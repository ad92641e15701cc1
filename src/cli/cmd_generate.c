/* cmd_generate.c - 'pacer generate MODEL -p TEXT [-n N] [--seed S] [--temp T] [--top-k K]
 * [--top-p P] [--threads N]': runs the embedded engine on a prompt, prints the generated
 * text on stdout as it comes, then prompt and decode speed on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "engine/textcodec.h"
#include "engine/tokenizer.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int usage(void) {
    cli_error("usage: pacer generate MODEL -p TEXT [-n N] [--seed S] [--temp T] [--top-k K] [--top-p P] [--threads N]");
    return 1;
}

static bool parse_num(const char *s, double lo, double hi, double *out) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (!end || *end || end == s || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int cmd_generate(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL;
    double n_gen = 64, seed = 0, threads = 0, top_k = 0, top_p = 1, temp = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double *num = NULL, lo = 0, hi = 1e9;
        if (strcmp(a, "-p") == 0 || strcmp(a, "--prompt") == 0) {
            if (!v)
                return usage();
            prompt = v;
            i++;
            continue;
        }
        if (strcmp(a, "-n") == 0) num = &n_gen, lo = 0, hi = 1 << 20;
        else if (strcmp(a, "--seed") == 0) num = &seed, hi = 1.8e19;
        else if (strcmp(a, "--temp") == 0) num = &temp, hi = 100;
        else if (strcmp(a, "--top-k") == 0) num = &top_k, hi = 1 << 24;
        else if (strcmp(a, "--top-p") == 0) num = &top_p, hi = 1;
        else if (strcmp(a, "--threads") == 0) num = &threads, lo = 1, hi = 1024;
        else if (a[0] == '-')
            return usage();
        else if (!model) {
            model = a;
            continue;
        } else
            return usage();
        if (!v || !parse_num(v, lo, hi, num)) {
            cli_error("bad value for %s", a);
            return 1;
        }
        i++;
    }
    if (!model || !prompt)
        return usage();

    int rc = 1;
    char err[512] = "";
    engine *e = NULL;
    textcodec *tc = NULL;
    int32_t *ids = NULL;
    float *logits = NULL;
    sampler s;
    sampler_params sp = {.temperature = (float)temp, .top_k = (int)top_k, .top_p = (float)top_p};
    sampler_init(&s, &sp, (uint64_t)seed);
    engine_params ep = {.n_threads = (int)threads, .n_ctx = 0};
    if (engine_open(model, &ep, &e, err, sizeof err) != PACER_OK) {
        cli_error("%s: %s", model, err);
        goto done;
    }
    const tokenizer *tok = engine_get_tokenizer(e); /* else the plain byte-level codec */
    if (!tok && textcodec_open(engine_get_gguf(e), &tc, err, sizeof err) != PACER_OK) {
        cli_error("%s: %s", model, err);
        goto done;
    }
    const engine_info *info = engine_get_info(e);
    ids = malloc((size_t)info->n_ctx * sizeof *ids);
    logits = malloc((size_t)info->n_vocab * sizeof *logits);
    if (!ids || !logits) {
        cli_error("out of memory");
        goto done;
    }
    int np = -1;
    if (tok) {
        size_t got = 0;
        if (tokenizer_encode(tok, prompt, strlen(prompt), true, false, ids, (size_t)info->n_ctx, &got) == PACER_OK)
            np = (int)got;
    } else {
        np = textcodec_encode(tc, prompt, strlen(prompt), ids, info->n_ctx);
    }
    if (np <= 0) {
        cli_error("the prompt is empty or longer than the context (%d tokens)", info->n_ctx);
        goto done;
    }
    double t0 = now_ms();
    if (engine_eval(e, ids, np, 0, logits, false) != PACER_OK) {
        cli_error("evaluation failed");
        goto done;
    }
    double t_prompt = now_ms() - t0;
    int n_out = 0, budget = (int)n_gen;
    if (np + budget > info->n_ctx)
        budget = info->n_ctx - np;
    t0 = now_ms();
    char piece[256];
    while (n_out < budget) {
        int32_t id = sampler_sample(&s, logits, info->n_vocab);
        if (id < 0 || (tok ? tokenizer_is_eog(tok, id) : textcodec_is_eog(tc, id)))
            break;
        if (tok) {
            size_t pl = 0;
            const char *pc = tokenizer_piece(tok, id, &pl);
            if (pc)
                fwrite(pc, 1, pl, stdout);
        } else {
            fwrite(piece, 1, textcodec_piece(tc, id, piece, sizeof piece), stdout);
        }
        fflush(stdout);
        n_out++;
        if (n_out >= budget)
            break;
        if (engine_eval(e, &id, 1, np + n_out - 1, logits, false) != PACER_OK) {
            cli_error("evaluation failed");
            goto done;
        }
    }
    double t_decode = now_ms() - t0;
    printf("\n");
    fprintf(stderr, "prompt: %d tokens, %.1f ms, %.2f tok/s\n", np, t_prompt, np * 1e3 / (t_prompt > 0 ? t_prompt : 1e-9));
    fprintf(stderr, "decode: %d tokens, %.1f ms, %.2f tok/s\n", n_out, t_decode,
            n_out * 1e3 / (t_decode > 0 ? t_decode : 1e-9));
    rc = 0;
done:
    sampler_free(&s);
    free(ids);
    free(logits);
    textcodec_close(tc);
    engine_close(e);
    return rc;
}
