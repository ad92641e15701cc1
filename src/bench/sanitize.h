/* sanitize.h - the one sanitizer for text that comes from a server and would otherwise reach
 * a receipt, a drafts file or a board upload (error bodies, SSE error events, manifest
 * strings). Pure: bytes in, bytes out, no I/O; linear time and memory in the input, which is
 * read up to SANITIZE_INPUT_MAX bytes.
 *
 * What is replaced by a placeholder: URLs (<url>), e-mail addresses (<email>), file-system
 * paths (<path>), IPv4 and IPv6 addresses (<address>), UUIDs and MAC addresses (<id>),
 * anything that looks like a token or key (<secret>), host names (<host>), names the caller
 * knows to be private (<name>), and every run of 8 or more characters that also occurs in a
 * text of the context, e.g. the prompt sent or a fixture of the suite (<prompt>). Control
 * characters become spaces, white space is collapsed, invisible format characters are
 * dropped, invalid UTF-8 becomes U+FFFD; the result is valid UTF-8, capped in length. */
#ifndef PACER_SANITIZE_H
#define PACER_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"
#include "bench/suite.h"

#define SANITIZE_INPUT_MAX (64u << 10) /* bytes of input read; the rest is cut ("...") */
#define SANITIZE_EXCERPT_MAX 120       /* bytes of a server's words an attempt reason keeps */
#define SANITIZE_TEXT_MAX (16u << 20)  /* bytes of context text (prompts, fixtures) in all */

/* What the sanitizer searches for besides its patterns: the texts whose 8-byte runs must not
 * appear (prompts, fixtures) and the names known to be private (host, user). Built once with
 * the add functions; sanitize_text() and the checks only read it, so threads may share a
 * finished context. */
typedef struct sanitize_context sanitize_context;

/* A new, empty context; NULL on OOM. Free with sanitize_context_free (accepts NULL). */
sanitize_context *sanitize_context_new(void);
void sanitize_context_free(sanitize_context *c);
/* Adds a text (n bytes): every run of 8 or more of its characters is removed from sanitized
 * text. Runs are compared after the same normalization on both sides (white space and the
 * escapes \n \t \r collapsed to one space), so a server quoting the prompt with its line
 * breaks escaped is still caught. PACER_ERR_TOO_BIG past SANITIZE_TEXT_MAX in all. */
pacer_err sanitize_context_add_text(sanitize_context *c, const char *text, size_t n);
/* Adds every prompt of a suite (its fixtures). */
pacer_err sanitize_context_add_suite(sanitize_context *c, const suite *s);
/* Adds a private name (a host or user name, a home directory): removed wherever it stands
 * as a whole word, case-insensitively. Names shorter than 3 bytes are ignored. At most 16. */
pacer_err sanitize_context_add_word(sanitize_context *c, const char *word);

/* Sanitizes `n` bytes of `in` into `out` (out_size >= 4 bytes; always NUL-terminated).
 * The output is at most out_size - 1 bytes, cut at a character boundary with "..." when
 * longer; `c` may be NULL (patterns only). Returns the output's length. Never fails: when
 * memory runs out the output is "<removed>". sanitize_check() finds nothing in the result. */
size_t sanitize_text(const sanitize_context *c, const char *in, size_t n, char *out, size_t out_size);

/* True when `s` (n bytes) still holds something sanitize_text() would remove or replace:
 * one of the patterns, a name or prompt run of `c` (may be NULL), a control or format
 * character, invalid UTF-8, or more than SANITIZE_INPUT_MAX bytes. Placeholders and
 * repeated white space are fine. *what (may be NULL) gets a static phrase naming the first
 * kind found, e.g. "a host name", never the text itself. The board's intake calls this. */
bool sanitize_check(const sanitize_context *c, const char *s, size_t n, const char **what);

/* Fixed vocabularies: NULL-terminated lists of the values a receipt may record. */
extern const char *const sanitize_finish_reasons[]; /* stop, length, content_filter, ... */
extern const char *const sanitize_backends[];       /* cpu, cuda, rocm, mlx, metal, vulkan */
/* `s` when it is one of `vocab`, otherwise "other" ("" stays "": nothing was sent). */
const char *sanitize_vocab(const char *const *vocab, const char *s);

/* Checks every field of a receipt that carries a server's text (attempt and cell reasons,
 * finish reasons, token hashes, manifest reason, backend, platform, revision, CPU and GPU
 * names, the served model id; the reasons and attempts of every load level as of every cell)
 * with sanitize_check(), and the fixed vocabularies. Returns PACER_OK, or PACER_ERR_FORMAT
 * with `err` naming the field and the kind found (never the text). `c` should hold the prompts of the receipt's suite (sanitize_context_add_suite). */
pacer_err sanitize_check_receipt(const json_t *receipt, const sanitize_context *c, char *err, size_t err_len);

#endif
