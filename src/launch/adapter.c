/* adapter.c - the engine adapter table and command-line construction. */
#include "launch/adapter.h"

#include <stdio.h>
#include <string.h>

/* Every managed engine decodes one request at a time (DESIGN.md 6: "its own
 * single-request serve"): {slots} is 1, except in a load sweep, where the engine gets as many
 * sequence slots as the sweep keeps requests in flight (launch_argv_params.slots). */
const launch_adapter launch_adapters[] = {
    {.name = "builtin", .backend = "cpu", .default_bin = "{self}", .loads = LAUNCH_FORMAT_GGUF,
     .args = {"serve", "{model}", "--host", "{host}", "--port", "{port}", "--name", "{name}", "--threads", "{threads}", "--ctx", "{ctx}"},
     .slot_args = {"--parallel", "{slots}"}, .no_cache_args = {"--no-prompt-cache"}, .serial_args = {"--serial"}, .drafter_args = {"--drafter", "{drafter}"},
     .takes_drafter = true, .drafter_gguf = true,
     .ready_path = "/health", .server_tok_s_field = "timings.predicted_per_second", .prefill_ms_field = "timings.prompt_ms"},
    {.name = "llama.cpp", .backend = NULL, .default_bin = "llama-server", .loads = LAUNCH_FORMAT_GGUF,
     .args = {"--model", "{model}", "--host", "{host}", "--port", "{port}", "--alias", "{name}", "--threads", "{threads}", "--ctx-size", "{ctx}"},
     .slot_args = {"--parallel", "{slots}"}, .no_cache_args = {"--cache-reuse", "0", "--no-cache-prompt"},
     .drafter_args = {"--model-draft", "{drafter}"}, .takes_drafter = true, .drafter_gguf = true,
     .ready_path = "/health", .server_tok_s_field = "timings.predicted_per_second", .prefill_ms_field = "timings.prompt_ms",
     .backend_log = {"model buffer size",
                     {{"CUDA", "cuda"}, {"ROCm", "rocm"}, {"MTL", "metal"}, {"Metal", "metal"}, {"Vulkan", "vulkan"}},
                     "cpu"}},
    {.name = "vllm", .backend = "cuda", .default_bin = "vllm", .loads = LAUNCH_FORMAT_HF_DIR,
     .args = {"serve", "{model}", "--host", "{host}", "--port", "{port}", "--served-model-name", "{name}"},
     .slot_args = {"--max-num-seqs", "{slots}"}, .no_cache_args = {"--no-enable-prefix-caching"},
     .drafter_args = {"--speculative-config", "{\"model\":\"{drafter}\",\"num_speculative_tokens\":4}"}, .takes_drafter = true,
     .ready_path = "/health", .python = true},
    {.name = "sglang", .backend = "cuda", .default_bin = "python3", .loads = LAUNCH_FORMAT_HF_DIR,
     .args = {"-m", "sglang.launch_server", "--model-path", "{model}", "--host", "{host}", "--port", "{port}", "--served-model-name", "{name}"},
     .slot_args = {"--max-running-requests", "{slots}"}, .no_cache_args = {"--disable-radix-cache"},
     .drafter_args = {"--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "{drafter}"}, .takes_drafter = true,
     .ready_path = "/health", .python = true},
    {.name = "mlx", .backend = "mlx", .default_bin = "mlx_lm.server", .loads = LAUNCH_FORMAT_HF_DIR,
     .args = {"--model", "{model}", "--host", "{host}", "--port", "{port}"},
     .slot_args = {"--decode-concurrency", "{slots}", "--prompt-concurrency", "{slots}"},
     .no_cache_args = {"--prompt-cache-size", "0"}, .drafter_args = {"--draft-model", "{drafter}"}, .takes_drafter = true,
     .ready_path = "/v1/models", .python = true},
    {0},
};

const char *launch_format_name(launch_format f) {
    return f == LAUNCH_FORMAT_HF_DIR ? "hf-dir" : "gguf";
}

const char *launch_format_needs(launch_format f) {
    return f == LAUNCH_FORMAT_HF_DIR ? "a Hugging Face checkpoint directory (config.json plus *.safetensors or *.bin)"
                                     : "a GGUF file";
}

const launch_adapter *launch_adapter_find(const char *name) {
    for (const launch_adapter *a = launch_adapters; a->name; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

/* Value of placeholder `key` ("model" for "{model}"), or NULL when it has none. */
static const char *placeholder_value(const launch_argv_params *p, const char *key, size_t key_len, char *num, size_t num_len) {
#define KEY_IS(s) (key_len == sizeof(s) - 1 && memcmp(key, s, key_len) == 0)
    if (KEY_IS("model")) return p->model;
    if (KEY_IS("host")) return p->host ? p->host : "127.0.0.1";
    if (KEY_IS("name")) return p->name;
    if (KEY_IS("drafter")) return p->drafter;
    if (KEY_IS("port")) {
        snprintf(num, num_len, "%d", p->port);
        return p->port > 0 ? num : NULL;
    }
    if (KEY_IS("threads")) {
        snprintf(num, num_len, "%d", p->threads);
        return p->threads > 0 ? num : NULL;
    }
    if (KEY_IS("slots")) {
        snprintf(num, num_len, "%d", p->slots > 1 ? p->slots : 1);
        return num;
    }
    if (KEY_IS("ctx")) {
        snprintf(num, num_len, "%d", p->ctx);
        return p->ctx > 0 ? num : NULL;
    }
#undef KEY_IS
    return NULL;
}

/* Substitutes placeholders of `tmpl` into storage; returns the new string, NULL when a
 * placeholder has no value (*missing set) or storage ran out. */
static char *substitute(const char *tmpl, const launch_argv_params *p, char **storage, size_t *left, int *missing) {
    char *out = *storage;
    size_t n = 0;
    *missing = 0;
    for (const char *s = tmpl; *s;) {
        const char *close = NULL;
        const char *val = NULL;
        char num[32];
        size_t vlen;
        if (*s == '{' && (close = strchr(s, '}')) && close - s > 1 && strchr("abcdefghijklmnopqrstuvwxyz", s[1]) &&
            (size_t)(close - s - 1) < 16 && !memchr(s + 1, '"', (size_t)(close - s - 1))) {
            val = placeholder_value(p, s + 1, (size_t)(close - s - 1), num, sizeof num);
            if (!val) {
                *missing = 1;
                return NULL;
            }
            vlen = strlen(val);
            s = close + 1;
        } else {
            val = s;
            vlen = 1;
            s++;
        }
        if (n + vlen + 1 > *left) return NULL;
        memcpy(out + n, val, vlen);
        n += vlen;
    }
    if (n + 1 > *left) return NULL;
    out[n++] = '\0';
    *storage += n;
    *left -= n;
    return out;
}

int launch_argv_build(const launch_adapter *a, const launch_argv_params *p, char **argv, size_t cap,
                      char *storage, size_t storage_len) {
    size_t argc = 0;
    const char *bin = p->bin ? p->bin : a->default_bin;
    if (strcmp(bin, "{self}") == 0) bin = p->self_path;
    if (!bin || cap < 2) return -1;
    argv[argc++] = (char *)bin;
    const char *const *lists[5] = {a->args, a->slot_args, a->no_cache_args, p->serial ? a->serial_args : NULL,
                                   p->drafter ? a->drafter_args : NULL};
    size_t list_len[5] = {ADAPTER_ARGS_MAX, 6, 4, 4, 4};
    for (int l = 0; l < 5; l++) {
        if (!lists[l]) continue;
        for (size_t i = 0; i < list_len[l] && lists[l][i]; i++) {
            int missing = 0;
            char *arg = substitute(lists[l][i], p, &storage, &storage_len, &missing);
            if (missing) {
                /* drop the flag before an absent value, e.g. "--threads {threads}" */
                if (argc > 1 && argv[argc - 1][0] == '-') argc--;
                continue;
            }
            if (!arg || argc + 1 >= cap) return -1;
            argv[argc++] = arg;
        }
    }
    argv[argc] = NULL;
    return (int)argc;
}

/* The word that ends just before `at` on its line (skipping blanks), or length 0. */
static size_t word_before(const char *line, const char *at, const char **word) {
    const char *e = at;
    while (e > line && (e[-1] == ' ' || e[-1] == '\t')) e--;
    const char *b = e;
    while (b > line && b[-1] != ' ' && b[-1] != '\t' && b[-1] != ':') b--;
    *word = b;
    return (size_t)(e - b);
}

const char *launch_backend_from_log(const launch_adapter *a, const char *log, size_t n) {
    const launch_backend_log *bl = &a->backend_log;
    if (!bl->line || !log) return NULL;
    const char *found = NULL, *end = log + n;
    size_t line_len = strlen(bl->line);
    for (const char *p = log; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *hit = memmem(p, (size_t)(le - p), bl->line, line_len);
        const char *word;
        size_t wl = hit ? word_before(p, hit, &word) : 0;
        if (wl) {
            const char *named = bl->fallback;
            for (const launch_backend_mark *m = bl->marks; m->prefix; m++) {
                size_t pl = strlen(m->prefix);
                if (wl > pl && memcmp(word, m->prefix, pl) == 0 && word[pl] >= '0' && word[pl] <= '9') named = m->backend;
            }
            /* a device buffer decides; host memory only when nothing else was named */
            if (!found || (named != bl->fallback && found == bl->fallback)) found = named;
        }
        p = le + 1;
    }
    return found;
}
