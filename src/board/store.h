/* store.h - the board's storage: one interface, two implementations (SQLite, the default,
 * one file in WAL mode with synchronous=FULL; PostgreSQL through libpq for a board that
 * outgrows one machine). Same schema, same SQL, same tests; versioned migrations run in
 * store_open. Every write is one transaction, and a function that writes returns only after
 * its transaction committed: an upload is acknowledged only after that.
 *
 * The interface in one screen (what the receiver uses, and what the website builds on):
 *   - store_open(&cfg, &st, err, n) / store_close(st). Thread-safe: a small pool of
 *     connections; every function may be called from any thread.
 *   - Profiles (a contributor: made by `pacer board token create NAME`, or by the website
 *     for a browser) and upload tokens, stored only as their SHA-256:
 *       store_profile_create, store_profile_get, store_token_create, store_token_find.
 *   - Submissions (one uploaded receipt, its state and the facts the pages rank by):
 *       store_submission_insert   idempotent by canonical hash, quota checked in the same
 *                                 transaction (STORE_INSERTED / _EXISTING / _QUOTA / _CONFLICT)
 *       store_submission_get      by id, the stored receipt text optionally
 *       store_submission_set_state   review, approve, reject, withdraw (with allowed from-states)
 *       store_lookup_due / store_lookup_record   the pending-checkpoint retry queue
 *       store_queue               pending submissions of every suite, for `pacer board review`
 *       store_checkpoint_get / store_checkpoint_put   cached public-checkpoint lookups
 *   - Queries for the pages (every one selects exactly one suite id + digest):
 *       store_results             submissions by state and filters (model, platform,
 *                                 backend, GPU, profile), newest first, keyset pagination
 *                                 (cursor = the last row's created_s and id; "load more")
 *       store_contributors        per profile: public submissions, distinct models and
 *                                 hardware, best greedy-chat median, under the same filters
 *       store_profile_history     = store_results with profile_id set
 *   - Free lists with store_submission_list_free / store_contributor_list_free.
 * Times are Unix seconds passed in by the caller (the board's clock), so tests control them.
 * No SQL is built by concatenation: every value travels as a bound parameter. */
#ifndef PACER_BOARD_STORE_H
#define PACER_BOARD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct board_store board_store;

typedef enum store_kind {
    STORE_SQLITE = 0,   /* target: a file path */
    STORE_POSTGRES = 1, /* target: a libpq conninfo string or postgresql:// URL */
} store_kind;

typedef struct store_config {
    store_kind kind;
    const char *target;
    int connections; /* pool size; 0: 4 */
} store_config;

/* The states of a submission (DESIGN.md section 12). Names are stored; never renumber. */
typedef enum board_state {
    BOARD_STATE_PUBLIC = 0,
    BOARD_STATE_PENDING_CHECKPOINT = 1, /* saved privately until the hub check passes */
    BOARD_STATE_PENDING_REVIEW = 2,     /* valid, but not publishable without a person */
    BOARD_STATE_REJECTED = 3,
    BOARD_STATE_WITHDRAWN = 4,
    BOARD_STATE__COUNT
} board_state;

/* "public", "pending-checkpoint", "pending-review", "rejected", "withdrawn". */
const char *board_state_name(board_state s);
/* Parses a state name; false when unknown. */
bool board_state_parse(const char *name, board_state *out);

#define STORE_ID_MAX 40
#define STORE_NAME_MAX 128
#define STORE_TEXT_MAX 256

typedef struct store_profile {
    char id[STORE_ID_MAX];             /* public, shareable ("c-" + 16 hex); grants nothing */
    char display_name[STORE_NAME_MAX]; /* self-chosen; never merges profiles */
    char kind[16];                     /* "token" (made by an admin) | "browser" */
    int64_t created_s;
} store_profile;

/* One submission. Numbers that may be unknown have a has_ flag (unknown is never 0). */
typedef struct store_submission {
    char id[STORE_ID_MAX];             /* "s-" + 16 hex */
    char profile_id[STORE_ID_MAX];
    char display_name[STORE_NAME_MAX]; /* the profile's, filled by the queries */
    char token_name[STORE_NAME_MAX];   /* the upload token's name; "" for a browser upload */
    char canonical_hash[65];           /* SHA-256 of the receipt's canonical JSON */
    board_state state;
    char reasons[2048];                /* JSON array of strings: why pending or rejected */
    char suite_id[64], suite_digest[65];
    int suite_version, rule_version;
    bool standard, complete;           /* complete: a complete standard run as the board judges */
    char mode[16];                     /* "managed" | "attached" */
    char model_id[STORE_TEXT_MAX], revision[STORE_TEXT_MAX];
    char backend[32], platform[64];
    char gpu_name[STORE_NAME_MAX];     /* the first GPU's name; "" when none */
    int gpu_count;
    char cpu_model[STORE_NAME_MAX];
    bool has_params_total, has_params_active;
    int64_t params_total, params_active; /* the checkpoint's published counts */
    bool has_chat_greedy;              /* the greedy chat cell has aggregates */
    double chat_greedy_tok_s;          /* its stream_tok_s median, unrounded */
    double chat_greedy_first_ms;       /* its first_text_ms median */
    bool has_best_tok_s;
    double best_tok_s;                 /* the highest stream_tok_s median of any cell */
    int64_t created_s, updated_s;
    int lookup_attempts;               /* hub checks tried so far */
    int64_t next_lookup_s;             /* pending-checkpoint: when to try again; else 0 */
    char *receipt;                     /* canonical receipt text (malloc'd) or NULL */
} store_submission;

typedef struct store_submission_list {
    store_submission *items;
    size_t n;
    bool more;                         /* another page exists after the last item */
} store_submission_list;

/* Opens (creating when needed) and migrates the store. `err` gets one line on failure. */
pacer_err store_open(const store_config *cfg, board_store **out, char *err, size_t err_len);
/* Closes every connection. Accepts NULL. */
void store_close(board_store *st);
/* The schema version after migrations. */
int store_schema_version(const board_store *st);
/* The number of migrations this build knows (the version a fresh store reaches). */
int store_schema_latest(void);

/* ---- profiles and tokens ---- */

/* Creates a profile with a fresh random id; fills *out. */
pacer_err store_profile_create(board_store *st, const char *display_name, const char *kind, int64_t now_s,
                               store_profile *out);
/* PACER_ERR_NOT_FOUND when no such profile. */
pacer_err store_profile_get(board_store *st, const char *id, store_profile *out);
/* Sets the display name of profile `id` (a contributor may change it; it never merges
 * profiles). PACER_ERR_NOT_FOUND when no such profile, PACER_ERR_ARG for a name too long. */
pacer_err store_profile_rename(board_store *st, const char *id, const char *display_name);
/* Stores token `name` (unique; PACER_ERR_STATE when taken) for `profile_id`, kept only as
 * `token_sha256` (hex). */
pacer_err store_token_create(board_store *st, const char *name, const char *token_sha256, const char *profile_id,
                             int64_t now_s);
/* The profile and name of the token whose SHA-256 is `token_sha256`; PACER_ERR_NOT_FOUND
 * when none. name may be NULL. */
pacer_err store_token_find(board_store *st, const char *token_sha256, store_profile *profile, char name[STORE_NAME_MAX]);

/* ---- submissions ---- */

typedef enum store_insert_result {
    STORE_INSERTED = 0,  /* a new submission; *sub is what was stored */
    STORE_EXISTING = 1,  /* the same receipt from the same profile: *sub is the earlier one */
    STORE_QUOTA = 2,     /* the profile used its quota; nothing stored */
    STORE_CONFLICT = 3,  /* the same receipt was submitted by another profile; nothing stored */
} store_insert_result;

/* In one transaction: returns the existing submission of the same canonical hash, or
 * refuses when the profile has `quota` or more submissions created since `now_s - 86400`,
 * or inserts `sub` (its id is made here; created_s/updated_s = now_s). `sub->receipt` must
 * be set. */
pacer_err store_submission_insert(board_store *st, store_submission *sub, int quota, int64_t now_s,
                                  store_insert_result *result);
/* Uploads of `profile_id` created since `since_s`. */
pacer_err store_quota_used(board_store *st, const char *profile_id, int64_t since_s, int *used);
/* By id; the receipt text too when `with_receipt`. PACER_ERR_NOT_FOUND when none. Free
 * with store_submission_clear. */
pacer_err store_submission_get(board_store *st, const char *id, bool with_receipt, store_submission *out);
/* By canonical hash (receipt not loaded). PACER_ERR_NOT_FOUND when none. */
pacer_err store_submission_by_hash(board_store *st, const char *canonical_hash, store_submission *out);
/* Frees the receipt text. */
void store_submission_clear(store_submission *s);

/* Moves submission `id` to `to` when its state is one of `from` (a bit per board_state:
 * 1u << state) and, when `profile_id` is set, it belongs to that profile. `reasons_json`
 * (NULL: unchanged) replaces the reasons. PACER_ERR_NOT_FOUND: no such submission (or not
 * that profile's); PACER_ERR_STATE: its state is not among `from`. */
pacer_err store_submission_set_state(board_store *st, const char *id, unsigned from, board_state to,
                                     const char *profile_id, const char *reasons_json, int64_t now_s);

/* Pending-checkpoint submissions whose next check is due at `now_s`, oldest first. */
pacer_err store_lookup_due(board_store *st, int64_t now_s, size_t limit, store_submission_list *out);
/* Records a hub check of a pending-checkpoint submission: its new state (public,
 * pending-checkpoint or pending-review), parameter counts (has flags in `sub`), reasons,
 * attempts and next time. Only a submission still pending-checkpoint changes
 * (PACER_ERR_STATE otherwise: a person decided in the meantime). */
pacer_err store_lookup_record(board_store *st, const store_submission *sub, int64_t now_s);

/* Submissions in `states` (bit per board_state) of every suite, oldest first: the review
 * queue a person works through. */
pacer_err store_queue(board_store *st, unsigned states, size_t limit, store_submission_list *out);

/* A cached hub answer for a public checkpoint. */
typedef struct store_checkpoint {
    bool has_params_total, has_params_active;
    int64_t params_total, params_active;
    int64_t checked_s;
} store_checkpoint;
pacer_err store_checkpoint_get(board_store *st, const char *model_id, const char *revision, store_checkpoint *out);
pacer_err store_checkpoint_put(board_store *st, const char *model_id, const char *revision,
                               const store_checkpoint *c);

/* ---- queries for the pages ---- */

typedef struct store_query {
    const char *suite_id, *suite_digest; /* required: one ranking is one suite id + digest */
    unsigned states;                     /* bit per board_state; 0: public only */
    const char *model_id, *platform, *backend, *gpu_name, *profile_id; /* NULL or "": any */
    bool complete_only;                  /* complete standard runs only */
    /* pagination: rows strictly older than (before_s, before_id); before_id NULL: newest */
    int64_t before_s;
    const char *before_id;
    size_t limit;                        /* 0: 50; at most 1000 */
    bool with_receipt;
} store_query;

/* Submissions matching `q`, newest first (created_s, then id, descending). */
pacer_err store_results(board_store *st, const store_query *q, store_submission_list *out);
void store_submission_list_free(store_submission_list *l);

typedef struct store_contributor {
    char profile_id[STORE_ID_MAX];
    char display_name[STORE_NAME_MAX];
    int64_t submissions;             /* matching submissions (public ones by default) */
    int64_t models, hardware;        /* distinct model ids, distinct GPU (or CPU) names */
    bool has_best_chat_greedy;
    double best_chat_greedy_tok_s;   /* the highest greedy-chat median among complete runs */
} store_contributor;

typedef struct store_contributor_list {
    store_contributor *items;
    size_t n;
} store_contributor_list;

/* Per profile, under the suite, states and filters of `q` (pagination fields ignored),
 * most submissions first. */
pacer_err store_contributors(board_store *st, const store_query *q, store_contributor_list *out);
void store_contributor_list_free(store_contributor_list *l);

#endif
