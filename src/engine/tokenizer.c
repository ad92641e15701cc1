/* tokenizer.c - placeholder: the API of tokenizer.h, every builder answering UNSUPPORTED
 * until the BPE and SentencePiece implementations land. */
#include "engine/tokenizer.h"

#include <stdio.h>
#include <string.h>

void tokenizer_vocab_init(tokenizer_vocab *v) {
    memset(v, 0, sizeof *v);
    v->bos_id = v->eos_id = v->eot_id = v->eom_id = v->pad_id = v->unk_id = -1;
    v->add_bos = v->add_eos = -1;
}

pacer_err tokenizer_build(const tokenizer_vocab *v, tokenizer **out, char *err, size_t err_len) {
    *out = NULL;
    if (err && err_len) snprintf(err, err_len, "tokenizer: not implemented yet");
    return PACER_ERR_UNSUPPORTED;
}

pacer_err tokenizer_from_gguf(const gguf_file *g, tokenizer **out, char *err, size_t err_len) {
    return tokenizer_build(NULL, out, err, err_len);
}

void tokenizer_free(tokenizer *t) {}

pacer_err tokenizer_encode(const tokenizer *t, const char *text, size_t len, bool add_special,
                           bool parse_special, int32_t *out, size_t cap, size_t *n_out) {
    *n_out = 0;
    return PACER_ERR_UNSUPPORTED;
}

const char *tokenizer_piece(const tokenizer *t, int32_t id, size_t *len) { *len = 0; return NULL; }
const char *tokenizer_token_text(const tokenizer *t, int32_t id, size_t *len) { *len = 0; return NULL; }
int tokenizer_token_type(const tokenizer *t, int32_t id) { return TOKEN_TYPE_UNDEFINED; }
size_t tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n, bool remove_space,
                        char *dst, size_t cap) { return 0; }
int tokenizer_n_vocab(const tokenizer *t) { return 0; }
int32_t tokenizer_bos(const tokenizer *t) { return -1; }
int32_t tokenizer_eos(const tokenizer *t) { return -1; }
int32_t tokenizer_eot(const tokenizer *t) { return -1; }
bool tokenizer_add_bos(const tokenizer *t) { return false; }
bool tokenizer_add_eos(const tokenizer *t) { return false; }
bool tokenizer_is_eog(const tokenizer *t, int32_t id) { return false; }
int32_t tokenizer_find_token(const tokenizer *t, const char *text) { return -1; }
const char *tokenizer_chat_template(const tokenizer *t) { return NULL; }
const char *tokenizer_model(const tokenizer *t) { return "gpt2"; }
const char *tokenizer_pre(const tokenizer *t) { return "gpt2"; }
