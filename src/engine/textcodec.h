/* textcodec.h - a plain codec between text and token ids of a byte-level (GPT-2 style)
 * GGUF vocabulary: encoding is a greedy longest match (not the BPE merge order, so ids may
 * differ from a reference tokenizer), decoding maps each piece back to its bytes. It is
 * what `pacer generate` falls back on when engine/tokenizer.h cannot build the vocabulary. */
#ifndef PACER_TEXTCODEC_H
#define PACER_TEXTCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/gguf.h"

typedef struct textcodec textcodec;

/* Reads tokenizer.ggml.tokens/bos/eos from `f` (which must outlive the codec). */
pacer_err textcodec_open(const gguf_file *f, textcodec **out, char *err, size_t err_len);
void textcodec_close(textcodec *c);
/* Encodes `len` bytes of text into at most `max` ids (BOS first when the model asks for
 * it); returns the count, or -1 when `max` is too small. */
int textcodec_encode(const textcodec *c, const char *text, size_t len, int32_t *ids, int max);
/* Writes the bytes of token `id` into buf (at most cap); returns their count (0 for
 * control tokens and unknown ids). */
size_t textcodec_piece(const textcodec *c, int32_t id, char *buf, size_t cap);
/* Whether `id` ends generation (EOS or EOT). */
bool textcodec_is_eog(const textcodec *c, int32_t id);

#endif
