/* suite.h - benchmark suites as data: load a suite document (built-in or a file), check
 * its shape, take its digest (SHA-256 of the canonical JSON) and expand it into cells
 * (workload x setting, in document order). */
#ifndef PACER_SUITE_H
#define PACER_SUITE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "bench/attempt.h"

#define SUITE_MAX_WORKLOADS 8
#define SUITE_MAX_SETTINGS 8
#define SUITE_NAME_MAX 64

typedef struct suite_workload {
    char name[SUITE_NAME_MAX];
    attempt_route route;
    const char *prompt; /* borrowed from suite.doc */
    int max_tokens;
} suite_workload;

typedef struct suite_setting {
    char name[SUITE_NAME_MAX];
    double temperature; /* 0: greedy */
    int top_k;          /* 0: not sent */
    double top_p;       /* 0: not sent */
    int64_t seed_base;  /* repetition r (1-based) uses seed_base + r; warm-up uses seed_base */
} suite_setting;

typedef struct suite {
    json_t *doc;                 /* owned */
    char id[SUITE_NAME_MAX];
    int version;
    char digest[65];
    bool builtin;                /* one of the embedded suites, digest matching */
    suite_workload workloads[SUITE_MAX_WORKLOADS];
    int n_workloads;
    suite_setting settings[SUITE_MAX_SETTINGS];
    int n_settings;
    int repetitions, warmups;
    bool thinking_disabled, prompt_cache_disabled;
    int rule_version;            /* 1 or 2: see rules.h */
    int natural_stop_min_tokens; /* v2: a sampled reply may stop naturally after this many */
} suite;

/* Parses a suite document from `text` (`len` bytes) into `s` (which owns the parsed
 * document afterwards; release with suite_free). `err` (may be NULL) gets a message of at
 * most `err_len` bytes on failure. Does no I/O. */
pacer_err suite_parse(const char *text, size_t len, suite *s, char *err, size_t err_len);
/* Loads a built-in suite by id ("community-v2") or, when `name` is a readable path, a file. */
pacer_err suite_load(const char *name, suite *s, char *err, size_t err_len);
/* Frees what suite_parse allocated; accepts a zeroed suite. */
void suite_free(suite *s);

/* The built-in suite ids, NULL-terminated, in the order `bench suites` prints them. */
extern const char *const suite_builtin_ids[];
/* Digest of the built-in suite `id` into `out`; PACER_ERR_NOT_FOUND when no such suite. */
pacer_err suite_builtin_digest(const char *id, char out[65]);

#endif
