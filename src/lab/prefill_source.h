/* prefill_source.h - what `pacer lab prefill` records about the two builds it compares: each
 * executable's sha256, the first line of its `--version`, its commit (from `--version` when
 * that names one, as llama-server's "version: N (abc1234)" does; pacer's names none, so else
 * the HEAD of the git checkout the executable sits in, with whether that checkout has
 * uncommitted changes), and the source diff between the two commits when a checkout holds
 * both. The paths of this machine are used here and never recorded. */
#ifndef PACER_LAB_PREFILL_SOURCE_H
#define PACER_LAB_PREFILL_SOURCE_H

#include <limits.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

#define LAB_DIFF_MAX (32u << 20) /* a longer source diff is summarized, not kept */

typedef struct lab_build_facts {
    char sha256[65];
    char commit[41];      /* "" when unknown */
    char top[PATH_MAX];   /* the git checkout holding the executable; "" when none */
    json_t *json;         /* owned: {"sha256", "version", "commit", "commit_source",
                           * "commit_note", "dirty"} as report.json keeps it */
} lab_build_facts;

/* Hashes the executable at `path`, asks it `--version` (10 s at most) and looks for its git
 * checkout. PACER_ERR_IO (with words) only when it cannot be read; what cannot be learnt
 * is recorded as unknown, with why. */
pacer_err lab_build_facts_read(const char *path, lab_build_facts *out, char *err, size_t err_len);
void lab_build_facts_free(lab_build_facts *f);

/* The source diff between the builds' commits, run in the after build's checkout, else the
 * before build's: {"available": true, "from", "to", "summary" (git's --shortstat, or "the
 * same commit"), "bytes", "sha256"} with the diff text in `diff` (left empty for the same
 * commit), or {"available": false, "reason"}. New reference. */
json_t *lab_build_diff(const lab_build_facts *before, const lab_build_facts *after, buf *diff);

#endif
