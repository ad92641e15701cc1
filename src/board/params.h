/* params.h - a checkpoint's parameter counts from what its publisher published: the hub's
 * own count of the weights (safetensors or GGUF metadata) for the total, and the model's
 * config.json for the parameters active per token of a sparse mixture of experts. Pure
 * functions over parsed JSON; a repository name ("-7B") is never taken as a size. */
#ifndef PACER_BOARD_PARAMS_H
#define PACER_BOARD_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

typedef struct param_counts {
    bool has_total, has_active;
    int64_t total, active;
} param_counts;

/* Counts from the hub's model info (`info`, may be NULL: safetensors.total or gguf.total)
 * and config.json (`config`, may be NULL). Total: the hub's count, else computed from a
 * llama-family config. Active: for a dense config the total; for an MoE config (experts and
 * experts-per-token named) the total less the experts a token does not use; unknown when
 * the config does not say. Returns what is known. */
param_counts params_from_hub(const json_t *info, const json_t *config);

/* The total computed from a llama-family (dense or MoE) config; false when a needed field
 * is missing or a product would overflow. *active gets the per-token count. */
bool params_from_config(const json_t *config, int64_t *total, int64_t *active);

#endif
