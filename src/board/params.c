/* params.c - parameter counts of a checkpoint from the hub's model info and config.json.
 * The count from config.json follows the llama-family layout (embeddings, attention with
 * grouped KV heads, gated MLP or a mixture of gated experts, RMS norms, an untied or tied
 * output head); shapes it does not describe exactly (latent attention) stay unknown. */
#include "board/params.h"

#include <string.h>

#include "base/json.h"

/* The first positive integer among `keys` in `c`; 0 when none. */
static int64_t cfg_int(const json_t *c, const char *const *keys) {
    for (; *keys; keys++) {
        json_t *v = json_object_get(c, *keys);
        if (json_is_integer(v) && json_integer_value(v) > 0) return json_integer_value(v);
    }
    return 0;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

typedef struct acc {
    int64_t v;
    bool overflow;
} acc;

static int64_t mul(acc *a, int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_mul_overflow(x, y, &r)) { a->overflow = true; return 0; }
    return r;
}

static void add(acc *a, int64_t x) {
    if (__builtin_add_overflow(a->v, x, &a->v)) a->overflow = true;
}

bool params_from_config(const json_t *config, int64_t *total, int64_t *active) {
    const json_t *c = json_is_object(json_object_get(config, "text_config")) ? json_object_get(config, "text_config") : config;
    if (!json_is_object(c) || json_object_get(c, "kv_lora_rank")) return false; /* latent attention: not this layout */
    int64_t h = cfg_int(c, KEYS("hidden_size")), layers = cfg_int(c, KEYS("num_hidden_layers"));
    int64_t vocab = cfg_int(c, KEYS("vocab_size")), heads = cfg_int(c, KEYS("num_attention_heads"));
    int64_t inter = cfg_int(c, KEYS("intermediate_size"));
    if (!h || !layers || !vocab || !heads) return false;
    int64_t kv = cfg_int(c, KEYS("num_key_value_heads"));
    int64_t hd = cfg_int(c, KEYS("head_dim"));
    if (!kv) kv = heads;
    if (!hd) hd = h / heads;
    int64_t experts = cfg_int(c, KEYS("num_local_experts", "num_experts", "n_routed_experts"));
    int64_t per_tok = cfg_int(c, KEYS("num_experts_per_tok", "moe_topk"));
    int64_t expert_inter = cfg_int(c, KEYS("moe_intermediate_size"));
    if (!expert_inter) expert_inter = inter;
    bool moe = experts > 1;
    if ((moe && (!per_tok || per_tok > experts || !expert_inter)) || (!moe && !inter)) return false;
    int64_t dense_layers = moe ? cfg_int(c, KEYS("first_k_dense_replace")) : layers;
    if (dense_layers > layers) return false;
    acc a = {0, false};
    acc attn = {0, false};
    add(&attn, mul(&a, mul(&a, h, heads), hd) * 2);     /* q and o */
    add(&attn, mul(&a, mul(&a, h, kv), hd) * 2);        /* k and v */
    add(&attn, 2 * h);                                  /* the two norms of a layer */
    add(&a, mul(&a, vocab, h));                         /* embeddings */
    add(&a, mul(&a, layers, attn.v));
    add(&a, mul(&a, dense_layers, mul(&a, 3 * h, inter)));
    int64_t moe_layers = layers - dense_layers, expert = mul(&a, 3 * h, expert_inter), unused = 0;
    if (moe) {
        int64_t shared = cfg_int(c, KEYS("shared_expert_intermediate_size"));
        int64_t n_shared = cfg_int(c, KEYS("n_shared_experts"));
        acc layer = {0, false};
        add(&layer, mul(&a, experts, expert));
        add(&layer, mul(&a, h, experts));               /* the router */
        if (shared) add(&layer, mul(&a, 3 * h, shared) + h); /* one shared expert and its gate */
        else if (n_shared) add(&layer, mul(&a, n_shared, expert));
        add(&a, mul(&a, moe_layers, layer.v));
        unused = mul(&a, moe_layers, mul(&a, experts - per_tok, expert));
        a.overflow |= layer.overflow;
    }
    add(&a, h);                                         /* the final norm */
    if (!json_is_true(json_object_get(c, "tie_word_embeddings")) && !json_is_true(json_object_get(config, "tie_word_embeddings")))
        add(&a, mul(&a, vocab, h));                     /* the output head */
    if (a.overflow || attn.overflow) return false;
    *total = a.v;
    *active = a.v - unused;
    return true;
}

param_counts params_from_hub(const json_t *info, const json_t *config) {
    param_counts p = {0};
    json_t *t = json_get_path(info, "safetensors.total");
    if (!json_is_integer(t)) t = json_get_path(info, "gguf.total");
    if (json_is_integer(t) && json_integer_value(t) > 0) {
        p.has_total = true;
        p.total = json_integer_value(t);
    }
    int64_t total = 0, active = 0;
    if (!config || !params_from_config(config, &total, &active)) return p;
    if (!p.has_total) {
        p.has_total = true;
        p.total = total;
    }
    /* the published total minus what a token leaves unused: the config's count of the
     * unused experts, never more than the total */
    int64_t unused = total - active;
    if (unused >= 0 && unused < p.total) {
        p.has_active = true;
        p.active = p.total - unused;
    }
    return p;
}
