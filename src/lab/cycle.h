/* cycle.h - the lab's cycle detector: does an answer end in a loop? A cycle is a block of
 * LAB_CYCLE_MIN_WORDS to LAB_CYCLE_MAX_WORDS words repeated exactly LAB_CYCLE_REPEATS
 * times in a row at the tail of the text (the text may stop part-way into a further
 * repetition). Words are maximal runs of bytes other than ASCII white space, compared
 * exactly; the white space between them does not matter. Pure: bytes in, evidence out. */
#ifndef PACER_LAB_CYCLE_H
#define PACER_LAB_CYCLE_H

#include <stdbool.h>
#include <stddef.h>

#define LAB_CYCLE_MIN_WORDS 32
#define LAB_CYCLE_MAX_WORDS 512
#define LAB_CYCLE_REPEATS 4

typedef struct lab_cycle {
    int block_words;     /* words in the repeated block (the shortest that repeats) */
    int repeats;         /* whole repetitions found at the tail (>= LAB_CYCLE_REPEATS) */
    size_t loop_start;   /* byte offset of the first word of the first repetition */
    size_t block_start;  /* == loop_start: the block is text[block_start, block_end) */
    size_t block_end;    /* byte offset just past the block's last word */
    size_t loop_words;   /* words from loop_start to the end of the text */
} lab_cycle;

/* Looks at the last words of text[0..n) for a cycle; true and `out` filled when there is
 * one, false otherwise (also when out of memory: then the caller checks again later). */
bool lab_cycle_find(const char *text, size_t n, lab_cycle *out);

#endif
