/* sanitize_internal.h - what sanitize.c (context, normalization, output, checks) and
 * sanitize_scan.c (the pattern detectors) share. Not for use outside bench/sanitize*. */
#ifndef PACER_SANITIZE_INTERNAL_H
#define PACER_SANITIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/sanitize.h"

#define SAN_WORDS_MAX 16
#define SAN_WORD_LEN 256

/* What a byte of normalized text is: kept, or replaced as part of a run of one class.
 * SAN_PLACEHOLDER marks a placeholder already in the text: kept, and never part of a match. */
typedef enum san_class {
    SAN_KEEP = 0,
    SAN_URL,
    SAN_EMAIL,
    SAN_PATH,
    SAN_ADDRESS,
    SAN_ID,
    SAN_SECRET,
    SAN_HOST,
    SAN_NAME,
    SAN_PROMPT,
    SAN_N_CLASSES,
    SAN_PLACEHOLDER = 0xff,
} san_class;

/* Placeholder and the phrase sanitize_check() reports, per class. */
extern const struct san_class_info {
    const char *placeholder;
    const char *what;
} san_classes[SAN_N_CLASSES];

struct sanitize_context {
    uint64_t *windows;   /* open addressing set of 8-byte folded windows; 0 = empty slot */
    size_t cap, count;   /* cap: a power of two, or 0 */
    size_t text_bytes;   /* context text added so far */
    char words[SAN_WORDS_MAX][SAN_WORD_LEN];
    int n_words;
};

/* One scan: normalized text t (valid UTF-8, no control characters) and its byte classes. */
typedef struct san_scan {
    const sanitize_context *ctx; /* may be NULL */
    bool use_texts;              /* match the context's texts (prompt runs) */
    const unsigned char *t;
    size_t n;
    uint8_t *m;                  /* n bytes, SAN_KEEP when nothing matched */
} san_scan;

/* Runs every detector over s->t in priority order, filling s->m. */
void san_scan_all(san_scan *s);

/* Folding shared by context texts and scanned text: white space and the escapes \n \t \r
 * become one space, \" \' \\ \/ their character. Calls emit(ctx, byte, from, to) for each
 * folded byte with its source span [from, to) in t; a byte that breaks windows (a matched
 * or placeholder byte of a scan) is reported as 0. */
typedef void (*san_fold_fn)(void *ctx, unsigned char c, size_t from, size_t to);
void san_fold(const unsigned char *t, size_t n, const uint8_t *breaks, san_fold_fn emit, void *ctx);

/* Whether the context's window set holds `key` (8 folded bytes, big-endian). */
bool san_window_has(const sanitize_context *c, uint64_t key);

#endif
