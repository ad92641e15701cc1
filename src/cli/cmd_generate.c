/* cmd_generate.c - 'pacer generate MODEL -p TEXT [-n N] [--seed S] [--temp T] [--top-k K]
 * [--top-p P] [--threads N]': runs the embedded engine on a prompt through one generation
 * session (engine/generate.h, as `pacer serve` does), prints the generated text on stdout as
 * it comes, then prompt and decode speed on stderr. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "cli/cli.h"
#include "engine/backend.h"
#include "engine/engine.h"
#include "engine/generate.h"

static const char generate_usage[] =
    "usage: pacer generate MODEL -p TEXT [-n N] [--seed S] [--temp T] [--top-k K] [--top-p P] [--threads N]";

static int usage(void) {
    cli_error("%s", generate_usage);
    return 1;
}

typedef struct generate_args {
    const char *model, *prompt;
    int n_gen, threads;
    gen_params p;
} generate_args;

/* Options into `a`; 0, or the exit status of a usage error (printed). */
static int generate_parse(int argc, char **argv, generate_args *a) {
    static const struct option opts[] = {
        {"prompt", required_argument, 0, 'p'}, {"seed", required_argument, 0, 's'},
        {"temp", required_argument, 0, 't'},   {"top-k", required_argument, 0, 'k'},
        {"top-p", required_argument, 0, 'P'},  {"threads", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    double temp = 0, top_p = 1;
    int c;
    bool ok = true;
    optind = 1;
    opterr = 0;
    while (ok && (c = getopt_long(argc, argv, "p:n:", opts, NULL)) != -1) {
        switch (c) {
        case 'p': a->prompt = optarg; break;
        case 'n': ok = parse_int(optarg, 0, 1 << 20, &a->n_gen); break;
        case 's': ok = parse_u64(optarg, &a->p.seed); break;
        case 't': ok = parse_double(optarg, 0, 100, &temp); break;
        case 'k': ok = parse_int(optarg, 0, 1 << 24, &a->p.sp.top_k); break;
        case 'P': ok = parse_double(optarg, 0, 1, &top_p); break;
        case 'T': ok = parse_int(optarg, 1, 1024, &a->threads); break;
        case 'h': puts(generate_usage); return -1;
        default: return usage();
        }
        if (!ok) {
            cli_error("bad value for %s", optarg == argv[optind - 1] && optind >= 2 ? argv[optind - 2] : argv[optind - 1]);
            return 1;
        }
    }
    if (optind < argc) a->model = argv[optind++];
    if (optind < argc || !a->model || !a->prompt) return usage();
    a->p.sp.temperature = (float)temp;
    a->p.sp.top_p = (float)top_p;
    a->p.max_tokens = a->n_gen;
    return 0;
}

/* Tokenizes the prompt (BOS per the model); NULL with a message when it is empty, does not
 * leave room in the context, or the model cannot tokenize. */
static int32_t *generate_tokens(const engine_backend *b, const char *prompt, int *n) {
    int need = 0;
    int32_t *ids = NULL;
    if (b->encode(b->ctx, prompt, false, NULL, 0, &need) == PACER_OK && need > 0 && need < b->n_ctx &&
        (ids = malloc((size_t)need * sizeof *ids)) && b->encode(b->ctx, prompt, false, ids, need, n) == PACER_OK)
        return ids;
    free(ids);
    cli_error("the prompt is empty or longer than the context (%d tokens)", b->n_ctx);
    return NULL;
}

int cmd_generate(int argc, char **argv) {
    generate_args a = {.n_gen = 64};
    int st = generate_parse(argc, argv, &a);
    if (st) return st < 0 ? 0 : st;
    int rc = 1;
    char err[512] = "";
    engine *e = NULL;
    engine_backend b;
    gen_model gm = {0};
    gen_session s = {0};
    int32_t *ids = NULL;
    int n = 0;
    buf text;
    buf_init(&text, 1u << 20);
    engine_params ep = {.n_threads = a.threads, .n_ctx = 0};
    if (engine_open(a.model, &ep, &e, err, sizeof err) != PACER_OK) { cli_error("%s: %s", a.model, err); goto done; }
    if (backend_from_engine(e, &b)) { cli_error("%s: the checkpoint has no usable tokenizer: %s", a.model, engine_tokenizer_error(e)); goto done; }
    if (!(ids = generate_tokens(&b, a.prompt, &n))) goto done;
    if (gen_model_init(&gm, &b, NULL, true, 1) || gen_session_start(&s, &gm, &a.p, ids, n, NULL, NULL, false)) {
        cli_error("evaluation failed");
        goto done;
    }
    while (!s.done) {
        if (gen_session_step(&s, &text)) { cli_error("evaluation failed"); goto done; }
        fwrite(text.data ? text.data : "", 1, text.len, stdout);
        fflush(stdout);
        buf_reset(&text);
    }
    printf("\n");
    fflush(stdout); /* the text and its newline before the timings, also when both go to one file */
    double t_prompt = (double)s.t_prefill_ns / 1e6, t_decode = (double)s.t_decode_ns / 1e6;
    fprintf(stderr, "prompt: %d tokens, %.1f ms, %.2f tok/s\n", n, t_prompt, n * 1e3 / (t_prompt > 0 ? t_prompt : 1e-9));
    fprintf(stderr, "decode: %d tokens, %.1f ms, %.2f tok/s\n", s.predicted_n, t_decode,
            s.predicted_n * 1e3 / (t_decode > 0 ? t_decode : 1e-9));
    rc = 0;
done:
    buf_free(&text);
    gen_session_free(&s);
    gen_model_free(&gm);
    free(ids);
    engine_close(e);
    return rc;
}
