/* cmd_model.c - 'pacer model': synth (write a seeded random-weight llama GGUF), info
 * (print a GGUF's metadata and tensor summary; a corrupt file is a one-line error) and
 * quantize (a deterministic copy with its weight matrices in another type). */
#include <float.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/parse.h"
#include "cli/cli.h"
#include "engine/gguf.h"
#include "engine/quantize.h"
#include "engine/synth.h"

static const char synth_usage[] =
    "usage: pacer model synth -o FILE [--dim N] [--layers N] [--heads N] [--kv-heads N] [--ffn N]\n"
    "                         [--ctx N] [--rope-theta X] [--eps X] [--type f32|f16|bf16|q8_0|q4_0]\n"
    "                         [--seed N] [--logit-std X] [--name NAME] [--tokenizer FILE] [--text-only]\n"
    "  Writes a seeded random-weight llama-architecture GGUF; the same arguments give the same bytes.\n"
    "  Defaults: dim 128, 2 layers, 4 heads, 4 KV heads, ffn 384, ctx 2048, theta 10000, eps 1e-5,\n"
    "  f16, seed 0, logit std 8. --tokenizer: an HF tokenizer.json (byte-level BPE) or a GGUF whose\n"
    "  tokenizer.* keys are copied; without it, a byte-level vocabulary of 256 bytes + BOS + EOS.\n"
    "  --text-only: the model generates only pieces that are whole UTF-8 text, never a control token\n"
    "  (so a reply runs to its token budget) nor a byte of an unfinished character (servers that\n"
    "  parse their own output, llama-server among them, refuse such text); the demo model is one.\n";

/* The integer options of synth: each an int field of synth_params, 1 .. 2^30. */
static const struct {
    int code;
    size_t field;
} synth_int_fields[] = {
    {'d', offsetof(synth_params, dim)}, {'l', offsetof(synth_params, layers)}, {'H', offsetof(synth_params, heads)},
    {'K', offsetof(synth_params, kv_heads)}, {'f', offsetof(synth_params, ffn)}, {'c', offsetof(synth_params, ctx)},
};

/* A float option: any finite value a float holds. */
static bool parse_float(const char *s, float *out) {
    double d;
    if (!parse_double(s, -FLT_MAX, FLT_MAX, &d)) return false;
    *out = (float)d;
    return true;
}

static int model_synth(int argc, char **argv) {
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'},        {"text-only", no_argument, 0, 'x'},
        {"dim", required_argument, 0, 'd'},   {"layers", required_argument, 0, 'l'},
        {"heads", required_argument, 0, 'H'}, {"kv-heads", required_argument, 0, 'K'},
        {"ffn", required_argument, 0, 'f'},   {"ctx", required_argument, 0, 'c'},
        {"rope-theta", required_argument, 0, 'r'}, {"eps", required_argument, 0, 'e'},
        {"logit-std", required_argument, 0, 'L'}, {"seed", required_argument, 0, 's'},
        {"type", required_argument, 0, 't'},  {"name", required_argument, 0, 'n'},
        {"tokenizer", required_argument, 0, 'T'}, {0, 0, 0, 0}};
    synth_params p;
    synth_params_default(&p);
    const char *out = NULL;
    bool kv_given = false;
    int c, at;
    optind = 1;
    opterr = 0;
    while ((at = optind, c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'h': fputs(synth_usage, stdout); return 0;
        case 'x': p.text_only = true; break;
        case 'o': out = optarg; break;
        case 'r': ok = parse_float(optarg, &p.rope_theta); break;
        case 'e': ok = parse_float(optarg, &p.rms_eps); break;
        case 'L': ok = parse_float(optarg, &p.logit_std); break;
        case 's': ok = parse_u64(optarg, &p.seed); break;
        case 't': ok = ggml_type_from_name(optarg, &p.type); break;
        case 'n': p.name = optarg; break;
        case 'T': p.tokenizer_path = optarg; break;
        case ':': cli_error("model synth: '%s' needs a value (see --help)", argv[at]); return 1;
        case '?': cli_error("model synth: unknown option '%s' (see --help)", argv[at]); return 1;
        default:
            for (size_t k = 0; k < sizeof synth_int_fields / sizeof synth_int_fields[0]; k++)
                if (synth_int_fields[k].code == c) ok = parse_int(optarg, 1, 1 << 30, (int *)((char *)&p + synth_int_fields[k].field));
            kv_given = kv_given || c == 'K';
        }
        if (!ok) {
            cli_error("model synth: bad value '%s' for %s", optarg, argv[at]);
            return 1;
        }
    }
    if (optind < argc) {
        cli_error("model synth: unexpected argument '%s' (see --help)", argv[optind]);
        return 1;
    }
    if (!kv_given) p.kv_heads = p.heads;
    if (!out) {
        cli_error("model synth: -o FILE is required (see --help)");
        return 1;
    }
    char err[512];
    pacer_err rc = synth_write(&p, out, err, sizeof err);
    if (rc) {
        cli_error("model synth: %s", err);
        return 1;
    }
    struct stat st;
    fprintf(stderr, "pacer: wrote %s: dim %d, %d layers, %d heads (%d KV), ffn %d, %s matrices, seed %llu, %lld bytes\n",
            out, p.dim, p.layers, p.heads, p.kv_heads, p.ffn, ggml_type_name(p.type), (unsigned long long)p.seed,
            stat(out, &st) == 0 ? (long long)st.st_size : -1LL);
    return 0;
}

/* Prints entry i's value: scalars in full, strings up to 80 bytes, arrays as a summary. */
static void print_kv(const gguf_file *f, int64_t i) {
    gguf_value_type t = gguf_get_kv_type(f, i);
    int64_t iv;
    uint64_t uv;
    double dv;
    const char *s;
    printf("  %s (%s) = ", gguf_get_key(f, i), gguf_type_name(t));
    if ((s = gguf_get_kv_str(f, i))) {
        size_t n = strlen(s);
        int shown = n > 80 ? 80 : (int)n;
        printf("\"");
        for (int k = 0; k < shown; k++) putchar(s[k] == '\n' ? ' ' : s[k]);
        printf("\"%s\n", n > 80 ? "..." : "");
    } else if (t == GGUF_TYPE_FLOAT32 || t == GGUF_TYPE_FLOAT64) {
        gguf_get_kv_f64(f, i, &dv);
        printf("%g\n", dv);
    } else if (t == GGUF_TYPE_BOOL) {
        gguf_get_kv_u64(f, i, &uv);
        printf("%s\n", uv ? "true" : "false");
    } else if (gguf_get_kv_i64(f, i, &iv)) {
        printf("%lld\n", (long long)iv);
    } else if (gguf_get_kv_u64(f, i, &uv)) {
        printf("%llu\n", (unsigned long long)uv);
    } else {
        printf("[%s x %llu]\n", gguf_type_name(gguf_get_arr_type(f, i)), (unsigned long long)gguf_get_arr_n(f, i));
    }
}

static int model_info(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        fputs("usage: pacer model info FILE\n  Prints a GGUF file's metadata and tensors.\n", argc == 2 ? stdout : stderr);
        return argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) ? 0 : 1;
    }
    gguf_file *f;
    char err[512];
    if (gguf_open(argv[1], &f, err, sizeof err)) {
        cli_error("%s: %s", argv[1], err);
        return 1;
    }
    printf("%s: GGUF v%u, %llu bytes, alignment %u, data at %llu\n", argv[1], gguf_get_version(f),
           (unsigned long long)gguf_get_file_size(f), gguf_get_alignment(f),
           (unsigned long long)gguf_get_data_offset(f));
    printf("metadata: %lld keys\n", (long long)gguf_get_n_kv(f));
    for (int64_t i = 0; i < gguf_get_n_kv(f); i++) print_kv(f, i);
    uint64_t params = 0, bytes = 0;
    uint64_t by_type[GGML_TYPE__COUNT] = {0};
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_get_tensor(f, i);
        params += (uint64_t)t->n_elements;
        bytes += t->nbytes;
        by_type[t->type] += t->nbytes;
    }
    printf("tensors: %lld, %llu parameters, %llu bytes (", (long long)gguf_get_n_tensors(f),
           (unsigned long long)params, (unsigned long long)bytes);
    const char *sep = "";
    for (int t = 0; t < GGML_TYPE__COUNT; t++) {
        if (!by_type[t]) continue;
        printf("%s%s %llu", sep, ggml_type_name((uint32_t)t), (unsigned long long)by_type[t]);
        sep = ", ";
    }
    printf(")\n");
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_get_tensor(f, i);
        printf("  %-32s %-5s [", t->name, ggml_type_name(t->type));
        for (int d = 0; d < t->n_dims; d++) printf("%s%lld", d ? ", " : "", (long long)t->ne[d]);
        printf("] %llu bytes at %llu\n", (unsigned long long)t->nbytes, (unsigned long long)t->offset);
    }
    gguf_close(f);
    return 0;
}

static const char quantize_usage[] =
    "usage: pacer model quantize IN OUT --type T\n"
    "  Writes OUT, a copy of the GGUF checkpoint IN with its weight matrices in type T\n"
    "  (f32, f16, bf16, q8_0, q4_0, q4_K, q6_K), or in q4_K_M, llama.cpp's mixture: q4_K, with\n"
    "  the output matrix and half the layers' attn_v and ffn_down in q6_K. IN must hold f32,\n"
    "  f16 or bf16 matrices; norms are copied as they are; a matrix whose rows do not divide\n"
    "  into T's blocks becomes q8_0.\n"
    "  Deterministic: the same IN and T give the same bytes. The disk space OUT needs is printed\n"
    "  first; nothing is written when the volume lacks it. OUT appears only when complete.\n";

static int model_quantize(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"type", required_argument, 0, 't'}, {0, 0, 0, 0}};
    const char *pos[2] = {NULL, NULL}, *type_name = NULL;
    int n_pos = 0, c, at;
    optind = 1;
    opterr = 0;
    while ((at = optind, c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(quantize_usage, stdout);
            return 0;
        }
        if (c != 't') {
            cli_error("model quantize: unexpected argument '%s' (see --help)", argv[at]);
            return 1;
        }
        type_name = optarg;
    }
    for (; optind < argc; optind++) {
        if (n_pos == 2) {
            cli_error("model quantize: unexpected argument '%s' (see --help)", argv[optind]);
            return 1;
        }
        pos[n_pos++] = argv[optind];
    }
    quantize_scheme sch;
    if (n_pos != 2 || !type_name) {
        fputs(quantize_usage, stderr);
        return 1;
    }
    if (!quantize_scheme_from_name(type_name, &sch)) {
        cli_error("model quantize: unknown type '%s' (%s)", type_name, quantize_type_list());
        return 1;
    }
    char err[512];
    quantize_job *j;
    if (quantize_open_scheme(pos[0], sch, &j, err, sizeof err)) {
        cli_error("model quantize: %s: %s", pos[0], err);
        return 1;
    }
    uint64_t need = quantize_output_bytes(j), avail = 0;
    int conv, fb, copied;
    quantize_counts(j, &conv, &fb, &copied);
    bool known = quantize_volume_free(pos[1], &avail) == PACER_OK;
    fprintf(stderr, "pacer: %s needs %llu bytes (%.2f GB) on disk; ", pos[1], (unsigned long long)need, (double)need / 1e9);
    if (known)
        fprintf(stderr, "%.2f GB free there\n", (double)avail / 1e9);
    else
        fputs("free space there unknown\n", stderr);
    int rc = 0;
    if (known && avail < need) {
        cli_error("model quantize: not enough space for %s: %llu bytes needed, %llu free", pos[1],
                  (unsigned long long)need, (unsigned long long)avail);
        rc = 1;
    } else if (quantize_write(j, pos[1], err, sizeof err)) {
        cli_error("model quantize: %s", err);
        rc = 1;
    } else {
        fprintf(stderr, "pacer: wrote %s: %d matrices %s", pos[1], conv, quantize_scheme_name(sch));
        if (fb) fprintf(stderr, ", %d q8_0 (rows not a multiple of %s's block)", fb, quantize_scheme_name(sch));
        fprintf(stderr, ", %d tensors copied as they were\n", copied);
    }
    quantize_close(j);
    return rc;
}

typedef struct model_subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} model_subcommand;

static const model_subcommand model_subcommands[] = {
    {"synth", model_synth, "write a seeded random-weight llama GGUF"},
    {"info", model_info, "print a GGUF file's metadata and tensors"},
    {"quantize", model_quantize, "copy a GGUF with its weight matrices in another type"},
};

int cmd_model(int argc, char **argv) {
    size_t n = sizeof model_subcommands / sizeof model_subcommands[0];
    if (argc >= 2) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(argv[1], model_subcommands[i].name) == 0) return model_subcommands[i].run(argc - 1, argv + 1);
    }
    bool help = argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
    FILE *o = help ? stdout : stderr;
    if (argc >= 2 && !help) cli_error("model: unknown subcommand '%s'", argv[1]);
    fprintf(o, "usage: pacer model SUBCOMMAND [ARGS]\n");
    for (size_t i = 0; i < n; i++) fprintf(o, "  %-8s %s\n", model_subcommands[i].name, model_subcommands[i].summary);
    return help ? 0 : 1;
}
