/* adapter.h - engine adapters as data: how pacer starts each engine it can manage, how it
 * tells it to disable prompt reuse and to use a drafter, where readiness is polled, and
 * which of its reported fields mean what. One table entry per engine; no code paths. */
#ifndef PACER_ADAPTER_H
#define PACER_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>

#define ADAPTER_ARGS_MAX 24

/* What an engine loads as its model; model resolution follows it. */
typedef enum launch_format {
    LAUNCH_FORMAT_GGUF = 0,   /* one .gguf file */
    LAUNCH_FORMAT_HF_DIR = 1, /* a Hugging Face checkpoint directory: config.json plus weight
                               * files (*.safetensors, else *.bin) */
} launch_format;

/* "gguf" or "hf-dir": the name the receipt records (model.checkpoint_format). */
const char *launch_format_name(launch_format f);
/* What an engine of format `f` needs, for messages ("a GGUF file", ...). */
const char *launch_format_needs(launch_format f);

/* Placeholders in argument templates, replaced when the command line is built:
 * {bin} {model} {host} {port} {name} {drafter} {threads} {ctx}. An argument whose only content
 * is a placeholder with no value is dropped together with the flag just before it. */
/* How an engine's log names the backend its weights were loaded on: lines containing
 * `line` end a word just before it (llama.cpp: "  CUDA0 model buffer size = ..."); a word
 * of a mark's prefix followed by a digit names that backend, any other word `fallback`. */
typedef struct launch_backend_mark {
    const char *prefix;  /* e.g. "CUDA" */
    const char *backend; /* e.g. "cuda" */
} launch_backend_mark;

typedef struct launch_backend_log {
    const char *line;                   /* NULL: the log names no backend */
    launch_backend_mark marks[6];       /* {0}-terminated */
    const char *fallback;               /* a buffer no mark names (host memory): "cpu" */
} launch_backend_log;

typedef struct launch_adapter {
    const char *name;           /* --engine NAME */
    const char *backend;        /* recorded backend when the adapter decides it; NULL: the
                                 * engine's log says (backend_log), else unknown */
    const char *default_bin;    /* executable; "{self}" means pacer's own binary */
    launch_format loads;        /* what {model} is: a GGUF file or a checkpoint directory */
    const char *args[ADAPTER_ARGS_MAX];          /* argv[1..]; NULL-terminated */
    const char *slot_args[6];                    /* appended: {slots} sequence slots (1 unless
                                                  * a load sweep asks for more), so the engine
                                                  * decodes that many requests at a time */
    const char *no_cache_args[4];                /* appended: disable prompt reuse */
    const char *serial_args[4];                  /* appended with --serial: turn off the
                                                  * drafting the engine does on its own */
    const char *drafter_args[4];                 /* appended with a drafter; {0} none */
    bool takes_drafter;         /* false: a named drafter is refused before start-up */
    bool drafter_gguf;          /* the drafter is given as a GGUF file; else as a checkpoint directory */
    const char *ready_path;     /* polled until it answers 200 */
    /* Dotted paths in a stream event (attempt_request's server_tok_s_field and
     * prefill_ms_field); NULL: the engine reports no such figure, nothing is read. */
    const char *server_tok_s_field; /* reported field read as server tok/s */
    const char *prefill_ms_field;   /* reported field read as prefill ms */
    bool python;                /* the engine runs under Python (records its version) */
    launch_backend_log backend_log; /* where `backend` is NULL */
} launch_adapter;

/* The table, terminated by an entry whose name is NULL. */
extern const launch_adapter launch_adapters[];

/* Finds an adapter by name; NULL when unknown. */
const launch_adapter *launch_adapter_find(const char *name);

typedef struct launch_argv_params {
    const char *bin;     /* NULL: the adapter's default (self_path for "{self}") */
    const char *self_path;
    const char *model;
    const char *host;
    int port;
    const char *name;    /* served model name */
    const char *drafter; /* NULL: none */
    bool serial;         /* --serial: the adapter's serial_args are passed */
    int threads;         /* <= 0: not passed */
    int ctx;             /* context tokens; <= 0: not passed (the engine's default) */
    int slots;           /* sequence slots ({slots}); <= 1: one */
} launch_argv_params;

/* Builds the command line into `argv` (capacity `cap` including the NULL terminator),
 * pointing into `storage` (capacity `storage_len`) for substituted strings. Returns the
 * argument count, or -1 when something does not fit. */
/* The backend `log` (the engine's log text, `n` bytes) says the weights were loaded on,
 * per the adapter's backend_log: a GPU backend when any weight buffer is on a device,
 * the fallback when all are in host memory; NULL when the log does not say. */
const char *launch_backend_from_log(const launch_adapter *a, const char *log, size_t n);

int launch_argv_build(const launch_adapter *a, const launch_argv_params *p, char **argv, size_t cap,
                      char *storage, size_t storage_len);

#endif
