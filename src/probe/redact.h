/* redact.h - what may leave the machine. One allowlist (schema/hardware.h's table) names every hardware field a
 * receipt or manifest may carry and the form its value must have; everything else is
 * dropped. Host names, user names, home paths, serial numbers, MAC addresses and UUIDs
 * never pass. A path helper rewrites the benchmark's own paths to placeholders. */
#ifndef PACER_REDACT_H
#define PACER_REDACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The identifying strings of this machine that are searched for (empty: not known). */
typedef struct redact_context {
    char host[256];
    char user[256];
    char home[4096];
} redact_context;

/* Fills ctx from gethostname(), the password database / $USER, and $HOME. */
void redact_context_local(redact_context *ctx);

/* True when `s` (n bytes) holds something that must not leave the machine: a UUID
 * (8-4-4-4-12 hex), a MAC address (six hex pairs with ':' or '-'), ctx's host or user
 * name as a whole word (names shorter than 2 characters are not searched), or ctx's home
 * path. *what (may be NULL) gets a static word naming the first kind found.
 * ctx may be NULL: only the patterns are searched. This is the canary scan. */
bool redact_text_identifying(const char *s, size_t n, const redact_context *ctx, const char **what);

/* Filters a hardware object (probe.h's shape) in place against the allowlist: members not
 * in it are removed; a value of the wrong form, or an identifying string, becomes null.
 * Returns how many values were removed or nulled. */
size_t redact_hardware(json_t *hw, const redact_context *ctx);

/* The benchmark's paths; any may be NULL. */
typedef struct redact_paths {
    const char *binary; /* -> "<binary>" */
    const char *model;  /* -> "<model>" */
    const char *root;   /* index root -> "<root>" */
    const char *suite;  /* -> "<suite>" */
} redact_paths;

/* Returns a copy of `text` (free() it; NULL on OOM) in which every occurrence of one of
 * p's paths is replaced by its placeholder, longest path first. A path matches only where
 * it starts the text or follows a blank, quote, '=' or ':', and ends at a '/', a blank, a
 * quote or the end (so "/m/a" matches neither inside "/m/ab" nor inside "/x/m/a"). */
char *redact_paths_apply(const redact_paths *p, const char *text);

#endif
