/* suite.h - lab suites as data (suites/lab-v1.json and custom --suite files): workloads with
 * their caps, configurations (named variants of one model), rounds, run settings and the
 * presets of --mode. Parsing does no I/O; the digest is the SHA-256 of the canonical JSON,
 * as for the community suites. */
#ifndef PACER_LAB_SUITE_H
#define PACER_LAB_SUITE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "bench/attempt.h"

#define LAB_NAME_MAX 48       /* workload, configuration and preset names, NUL included */
#define LAB_MAX_WORKLOADS 16
#define LAB_MAX_CONFIGS 16
#define LAB_MAX_CONFIG_ARGS 16
#define LAB_MAX_PRESETS 4
#define LAB_CAP_MAX 1000000   /* a cap above this is refused as a typo */
#define LAB_BUILTIN_ID "lab-v1"
#define LAB_PREFILL_ID "lab-prefill-v1" /* the prompts of `pacer lab prefill` (suites/lab-prefill-v1.json) */

typedef enum lab_kind {
    LAB_KIND_COMPLETION = 0,   /* an answer to EOS */
    LAB_KIND_LONG_PREFILL = 1, /* the same, with a long prompt: the prefill figure matters */
    LAB_KIND_SVG = 2,          /* the answer holds an SVG drawing that is extracted and checked */
} lab_kind;

typedef enum lab_phase {
    LAB_PHASE_ROUNDS = 0, /* once per configuration in every round */
    LAB_PHASE_ONCE = 1,   /* once per configuration, after all rounds */
} lab_phase;

typedef struct lab_workload {
    char name[LAB_NAME_MAX];
    lab_kind kind;
    lab_phase phase;
    attempt_route route;
    const char *prompt;      /* borrowed from the document; NULL when `messages` is used */
    const json_t *messages;  /* borrowed: [{"role","content"}...] for a multi-turn chat; or NULL */
    int cap;                 /* safety cap on answer tokens */
} lab_workload;

typedef struct lab_config {
    char name[LAB_NAME_MAX];
    char weights[24];        /* weight type of the store ("q8_0"); "" = the model as given */
    int threads;             /* 0: the engine's default */
    const char *args[LAB_MAX_CONFIG_ARGS]; /* extra engine arguments, verbatim; borrowed */
    int n_args;
} lab_config;

typedef struct lab_preset {
    char name[16];               /* "light", "heavy" */
    int rounds;                  /* 0: the suite's */
    bool all_cases;
    int cases[LAB_MAX_WORKLOADS];/* workload indexes, when !all_cases */
    int n_cases;
    bool configs_built;          /* only the configurations whose stores are on disk */
    bool archive;
} lab_preset;

typedef struct lab_suite {
    json_t *doc;                 /* owned */
    char id[LAB_NAME_MAX];
    int version;
    char digest[65];             /* SHA-256 of the canonical JSON */
    bool builtin;                /* an embedded suite (lab-v1, lab-prefill-v1) */
    int rounds;
    double temperature;          /* 0: greedy */
    int64_t seed;
    bool disable_thinking;       /* settings.thinking "disabled" */
    int context;                 /* settings.context: tokens the engine is started with; 0: its default */
    int check_every_s;           /* cycle, power and memory checks during a sample */
    lab_workload workloads[LAB_MAX_WORKLOADS];
    int n_workloads;
    lab_config configs[LAB_MAX_CONFIGS];
    int n_configs;
    lab_preset presets[LAB_MAX_PRESETS];
    int n_presets;
} lab_suite;

/* Parses a lab suite document (`len` bytes) into `s`, which owns the parsed document after
 * (lab_suite_free). A field of the wrong shape is PACER_ERR_FORMAT with its name in `err`;
 * text that is not JSON is PACER_ERR_PARSE. No I/O. */
pacer_err lab_suite_parse(const char *text, size_t len, lab_suite *s, char *err, size_t err_len);
/* Loads a built-in suite ("lab-v1", "lab-prefill-v1") or, for any other name, the file at
 * that path. */
pacer_err lab_suite_load(const char *name, lab_suite *s, char *err, size_t err_len);
/* Frees what parsing allocated; accepts a zeroed suite. */
void lab_suite_free(lab_suite *s);

/* Index of the workload / configuration / preset named `name`, or -1. */
int lab_suite_workload(const lab_suite *s, const char *name);
int lab_suite_config(const lab_suite *s, const char *name);
const lab_preset *lab_suite_preset(const lab_suite *s, const char *name);

/* Names used in records and reports. */
const char *lab_kind_name(lab_kind k);   /* "completion" | "long-prefill" | "svg" */
/* True when `name` is usable as a workload or configuration name (and in file names):
 * 1-47 bytes of [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool lab_name_ok(const char *name);

#endif
