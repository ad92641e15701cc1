/* rank.h - the one definition of a ranked receipt (DESIGN.md 4-6): a complete standard run
 * (both workloads at the suite's temperatures and seeds, every declared repetition of every
 * cell successful, the suite's token budget), from a native managed run or an attached
 * server whose manifest was accepted, with an attested rank count of one or two, a pinned
 * checkpoint (revision and weight-file digests) and reported GPU hardware. The runner, the
 * validator and inspect all read it from the receipt's own facts. Pure: no I/O. */
#ifndef PACER_RANK_H
#define PACER_RANK_H

#include <jansson.h>

#include "base/error.h"
#include "bench/suite.h"

/* Appends to `reasons` (a JSON array) one line per rule receipt `r` (of suite `s`, already
 * loaded) breaks; none when it may be ranked. Returns the number appended. */
size_t rank_reasons(const json_t *r, const suite *s, json_t *reasons);

/* Appends to `warnings` the lines run and inspect print for a public managed receipt that
 * names no GPU, no checkpoint revision or no configuration digest (the weight files'
 * SHA-256): such a receipt can be published but never ranked. None for other receipts.
 * Returns the number appended. */
size_t rank_public_warnings(const json_t *r, json_t *warnings);

#endif
