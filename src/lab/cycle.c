/* cycle.c - the tail-periodicity check behind the cycle detector. The last words of the
 * text are collected backwards (at most enough for four of the longest blocks plus a
 * partial one), each with a hash; for every block length w from the shortest up, the
 * tail is walked back while word[j] equals word[j - w]. A periodic stretch of at least
 * four blocks ends the search. */
#include "lab/cycle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Words the check ever needs: four whole blocks of the longest length, and a partial fifth. */
#define CYCLE_TAIL_WORDS (LAB_CYCLE_REPEATS * LAB_CYCLE_MAX_WORDS + LAB_CYCLE_MAX_WORDS)

typedef struct cycle_word {
    size_t at, len;
    uint64_t hash;
} cycle_word;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static uint64_t word_hash(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* Fills words[] (oldest first) with up to `max` last words of the text; returns the count. */
static size_t tail_words(const char *text, size_t n, cycle_word *words, size_t max) {
    size_t k = 0, end = n;
    while (k < max) {
        while (end > 0 && is_space(text[end - 1])) end--;
        if (end == 0) break;
        size_t start = end;
        while (start > 0 && !is_space(text[start - 1])) start--;
        cycle_word *w = &words[max - 1 - k];
        w->at = start;
        w->len = end - start;
        w->hash = word_hash(text + start, w->len);
        k++;
        end = start;
    }
    memmove(words, words + (max - k), k * sizeof *words);
    return k;
}

static bool same_word(const char *text, const cycle_word *a, const cycle_word *b) {
    return a->hash == b->hash && a->len == b->len && memcmp(text + a->at, text + b->at, a->len) == 0;
}

bool lab_cycle_find(const char *text, size_t n, lab_cycle *out) {
    cycle_word *words = malloc(CYCLE_TAIL_WORDS * sizeof *words);
    if (!words) return false;
    size_t k = tail_words(text, n, words, CYCLE_TAIL_WORDS);
    bool found = false;
    for (size_t w = LAB_CYCLE_MIN_WORDS; w <= LAB_CYCLE_MAX_WORDS && !found; w++) {
        if (k < LAB_CYCLE_REPEATS * w) break;
        /* run = how many words, going back from the end, equal the word w before them */
        size_t run = 0;
        while (run + w < k && same_word(text, &words[k - 1 - run], &words[k - 1 - run - w])) run++;
        if (run + w < LAB_CYCLE_REPEATS * w) continue;
        size_t span = run + w;              /* periodic words at the tail */
        size_t whole = span / w;            /* complete blocks in it */
        size_t first = k - span;            /* first word of the loop */
        out->block_words = (int)w;
        out->repeats = (int)whole;
        out->loop_start = words[first].at;
        out->block_start = words[first].at;
        out->block_end = words[first + w - 1].at + words[first + w - 1].len;
        out->loop_words = span;
        found = true;
    }
    free(words);
    return found;
}
