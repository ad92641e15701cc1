/* rank.h - the board's standings, honours and trophies, computed from a plain array of
 * result rows: no I/O, no clock, no database. The pages take rows from the store, convert
 * them to rank_row and ask here who leads.
 *
 * The rules, in one place:
 *   - Every computation selects exactly one suite id and digest (rank_filter); rows of any
 *     other suite or digest are ignored, so v1 and v2 are never mixed.
 *   - Only published rows (state public) count; pending, rejected and withdrawn rows earn
 *     nothing (no count, no speed, no trophy, no honour).
 *   - Speeds count only from complete standard runs whose greedy-chat cell has a median
 *     (five repetitions, 256 tokens, as the intake judged); a row without one earns no speed.
 *   - Values are compared unrounded; equal values share a place (1, 1, 3) and an honour.
 *   - Size x speed ranks the product of the checkpoint's published parameter count (in
 *     billions) and the greedy-chat median. The total view uses the total count; the active
 *     view the parameters per token of a sparse MoE, and the total for a dense model. A row
 *     whose count is unknown is not ranked in that view.
 * Results borrow the rows' strings: keep the rows alive while using them. */
#ifndef PACER_BOARD_RANK_H
#define PACER_BOARD_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* One submission as the rankings see it. Strings are borrowed; "" for unknown. */
typedef struct rank_row {
    const char *id;            /* the submission's id (its receipt page) */
    const char *profile_id;
    const char *display_name;
    const char *suite_id, *suite_digest;
    bool published;            /* state public */
    bool complete;             /* a complete standard run, as the intake judged */
    const char *model_id;
    const char *hardware;      /* the GPU's name, or the CPU's for a CPU run */
    const char *platform, *backend;
    bool has_chat_greedy;      /* the greedy-chat cell has aggregates */
    double chat_greedy_tok_s;  /* its stream_tok_s median, unrounded */
    double chat_greedy_first_ms; /* its first_text_ms median */
    bool has_best_tok_s;
    double best_tok_s;         /* the highest stream_tok_s median of any cell (raw speed) */
    bool has_params_total, has_params_active;
    int64_t params_total, params_active; /* published parameter counts */
    int64_t created_s;
} rank_row;

/* Which rows a computation looks at. suite_id and suite_digest are required; the other
 * fields are NULL or "" for any value, else exact matches. */
typedef struct rank_filter {
    const char *suite_id, *suite_digest;
    const char *model_id, *platform, *hardware;
} rank_filter;

/* True when `r` is published and matches `f`. */
bool rank_row_selected(const rank_row *r, const rank_filter *f);
/* True when `r` carries a speed that ranks: complete, with a finite, positive greedy-chat median. */
bool rank_row_has_speed(const rank_row *r);

typedef enum rank_board {
    RANK_MOST_BENCHMARKS = 0, /* published runs per contributor */
    RANK_FASTEST = 1,         /* each contributor's best greedy-chat median */
    RANK_SIZE_TOTAL = 2,      /* each contributor's best size (total) x speed product */
    RANK_SIZE_ACTIVE = 3,     /* the same with active parameters */
    RANK_SPEED_RECORDS = 4,   /* runs (not contributors) by raw tok/s, any cell */
    RANK_BOARD__COUNT
} rank_board;

typedef struct rank_entry {
    int place;                /* 1-based; equal values share it */
    const char *profile_id, *display_name;
    size_t row;               /* the deciding row (the best run; the newest for counts) */
    double value;             /* the ranked value, unrounded (a count for MOST_BENCHMARKS) */
    int64_t count;            /* the contributor's selected rows */
} rank_entry;

typedef struct rank_list {
    rank_entry *items;
    size_t n;
} rank_list;

/* Computes board `which` over rows[0..n) under `f`, best first; ties keep a stable order
 * (display name, then profile id, then row order). `out` owns its items afterwards (free
 * with rank_list_free). PACER_ERR_ARG when the filter names no suite. */
pacer_err rank_compute(const rank_row *rows, size_t n, const rank_filter *f, rank_board which, rank_list *out);
void rank_list_free(rank_list *l);

/* The size of `r` in the given view, in parameters; false when unknown. */
bool rank_row_params(const rank_row *r, bool active, int64_t *params);

/* Counters of the selected rows. */
typedef struct rank_counts {
    int64_t runs, contributors, models, hardware;
} rank_counts;
pacer_err rank_count(const rank_row *rows, size_t n, const rank_filter *f, rank_counts *out);

/* ---- profiles ---- */

typedef enum rank_measure { RANK_MEASURE_RUNS = 0, RANK_MEASURE_MODELS = 1, RANK_MEASURE_HARDWARE = 2 } rank_measure;

/* A trophy: earned when the measure reaches `need`. */
typedef struct rank_trophy {
    const char *key;          /* "bronze", ... (CSS class, test id) */
    const char *name;         /* "Bronze" */
    rank_measure measure;
    int64_t need;
    const char *what;         /* "1 published run" */
} rank_trophy;

extern const rank_trophy rank_trophies[];
extern const size_t rank_trophy_count;

typedef struct rank_profile {
    int64_t runs, models, hardware;  /* published, selected rows of the profile */
    bool has_best;
    double best_tok_s;               /* personal best greedy-chat median */
    size_t best_row;
    bool earned[16];                 /* per rank_trophies[] entry */
    int64_t next_milestone;          /* the next run count with a trophy; 0 when all earned */
    int64_t prev_milestone;          /* the last run milestone reached (0 when none) */
    bool top_contributor;            /* highest published count of the whole suite (shared) */
    bool speed_leader;               /* highest greedy-chat median of the whole suite (shared) */
} rank_profile;

/* The profile `profile_id` under `f` (counts, best, trophies). Honours are decided over the
 * whole suite of `f` (its model/platform/hardware filters do not apply to them). */
pacer_err rank_profile_compute(const rank_row *rows, size_t n, const rank_filter *f, const char *profile_id,
                               rank_profile *out);

#endif
