/* tokenizer.h - text <-> token ids for the embedded engine: byte-level BPE (GPT-2 style,
 * with the pre-tokenizer regex of gpt2, llama3/llama-bpe or qwen2) and SentencePiece-style
 * (score-merged, byte fallback). Built from plain arrays or from a GGUF's tokenizer.* keys. */
#ifndef PACER_TOKENIZER_H
#define PACER_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h" /* typedef struct tokenizer tokenizer; gguf_file */

/* Token types as GGUF's tokenizer.ggml.token_type defines them. */
enum {
    TOKEN_TYPE_UNDEFINED = 0,
    TOKEN_TYPE_NORMAL = 1,
    TOKEN_TYPE_UNKNOWN = 2,
    TOKEN_TYPE_CONTROL = 3,
    TOKEN_TYPE_USER_DEFINED = 4,
    TOKEN_TYPE_UNUSED = 5,
    TOKEN_TYPE_BYTE = 6,
};

/* Everything a tokenizer is built from; the builder copies what it keeps, so the arrays
 * may be freed afterwards. Ids are -1 when absent. */
typedef struct tokenizer_vocab {
    const char *model;          /* "gpt2" (byte-level BPE) or "llama" (SentencePiece) */
    const char *pre;            /* "gpt2" (also NULL/""/unknown), "llama-bpe"/"llama3", "qwen2" */
    size_t n_tokens;
    const char *const *tokens;  /* n_tokens strings as stored in the vocabulary */
    const size_t *token_lens;   /* their lengths; NULL: NUL-terminated */
    const float *scores;        /* SPM scores (NULL: all 0) */
    const int32_t *token_types; /* TOKEN_TYPE_*; NULL: all normal */
    size_t n_merges;
    const char *const *merges;  /* BPE "left right" strings, best first */
    const size_t *merge_lens;   /* NULL: NUL-terminated */
    int32_t bos_id, eos_id, eot_id, eom_id, pad_id, unk_id;
    int add_bos, add_eos;       /* 1 / 0; -1: the model's default (bos: llama yes, gpt2 no) */
    int add_space_prefix;       /* SPM: prefix a space; 1 / 0; -1: default (yes) */
    const char *chat_template;  /* NULL when none */
} tokenizer_vocab;

/* Sets every field of `v` to "absent" (ids -1, add flags -1, pointers NULL, counts 0). */
void tokenizer_vocab_init(tokenizer_vocab *v);

/* Builds a tokenizer from `v`. Codes: ARG (missing tokens), UNSUPPORTED (unknown model),
 * FORMAT (a merge naming tokens not in the vocabulary, ids out of range), NOMEM. On error
 * *out is NULL and `err` (when non-NULL) holds one line. */
pacer_err tokenizer_build(const tokenizer_vocab *v, tokenizer **out, char *err, size_t err_len);
/* The same from the tokenizer.ggml.* keys of `g` (model, pre, tokens, scores, token_type,
 * merges, bos/eos/eot/eom/padding/unknown_token_id, add_bos_token, add_eos_token) and
 * tokenizer.chat_template. NOT_FOUND when the file has no tokenizer.ggml.tokens. */
pacer_err tokenizer_from_gguf(const gguf_file *g, tokenizer **out, char *err, size_t err_len);
/* Frees `t`; accepts NULL. */
void tokenizer_free(tokenizer *t);

/* Tokenizes len bytes of `text` (any bytes; invalid UTF-8 is handled byte-wise) into
 * out[0..cap). add_special: add BOS / EOS as the metadata rules say. parse_special: text
 * that spells a control token becomes that token (otherwise it is plain text); text that
 * spells a user-defined token always becomes it, as llama.cpp does. *n_out receives the number of ids the full result has; when that exceeds cap,
 * returns TOO_BIG and out holds the first cap ids. */
pacer_err tokenizer_encode(const tokenizer *t, const char *text, size_t len, bool add_special,
                           bool parse_special, int32_t *out, size_t cap, size_t *n_out);

/* The bytes token `id` decodes to (not NUL-terminated; *len receives the length): byte-level
 * BPE with the byte mapping undone; SPM with U+2581 as space and <0xNN> as the byte. Control
 * tokens give an empty piece (use tokenizer_token_text for their text). NULL when id is out
 * of range. Pointers stay valid until tokenizer_free. */
const char *tokenizer_piece(const tokenizer *t, int32_t id, size_t *len);
/* The token's string as stored in the vocabulary (e.g. "<|eot_id|>", "Ġthe"), or NULL. */
const char *tokenizer_token_text(const tokenizer *t, int32_t id, size_t *len);
/* TOKEN_TYPE_* of `id` (TOKEN_TYPE_UNDEFINED when out of range). */
int tokenizer_token_type(const tokenizer *t, int32_t id);
/* Appends the decoded pieces of ids[0..n) to dst (capacity cap, no NUL written); returns
 * the number of bytes the full text has (may exceed cap: then dst holds a prefix). The SPM
 * leading space the encoder adds is removed when remove_space and the first non-empty
 * piece (after BOS) starts with a space. */
size_t tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n, bool remove_space,
                        char *dst, size_t cap);

int tokenizer_n_vocab(const tokenizer *t);
int32_t tokenizer_bos(const tokenizer *t);  /* -1 when none */
int32_t tokenizer_eos(const tokenizer *t);  /* -1 when none */
int32_t tokenizer_eot(const tokenizer *t);  /* -1 when none */
bool tokenizer_add_bos(const tokenizer *t);
bool tokenizer_add_eos(const tokenizer *t);
/* True for end-of-generation ids: eos, eot, eom. */
bool tokenizer_is_eog(const tokenizer *t, int32_t id);
/* Id of the token whose vocabulary string is exactly `text` (NUL-terminated), or -1. */
int32_t tokenizer_find_token(const tokenizer *t, const char *text);
/* tokenizer.chat_template, or NULL. */
const char *tokenizer_chat_template(const tokenizer *t);
/* "gpt2" or "llama"; and the pre-tokenizer name as given ("gpt2" when none). */
const char *tokenizer_model(const tokenizer *t);
const char *tokenizer_pre(const tokenizer *t);

/* GPT-2's byte-level mapping: the printable code point byte `b` (0..255) is written as in a
 * byte-level BPE vocabulary (printable bytes stand for themselves, the rest map to 256+). */
uint32_t tokenizer_byte_to_codepoint(int b);

#endif
