/* chat.h - chat formats as data (llama3, chatml, mistral, llama2, plain) and rendering
 * messages into a prompt. The family is matched from the checkpoint's chat template text
 * and tokenizer vocabulary, never from the model's name. */
#ifndef PACER_CHAT_H
#define PACER_CHAT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/buf.h"
#include "base/error.h"

typedef struct chat_format {
    const char *name;          /* "llama3", "chatml", "mistral", "llama2", "plain" */
    bool raw_text;             /* /v1/completions accepts raw text for this family */
    const char *marker;        /* substring of the template (or a vocabulary token) that selects it */
    const char *role_prefix;   /* printf-like with one %s for the role, or NULL */
    const char *role_suffix;   /* after the role header */
    const char *msg_suffix;    /* after each message's content */
    const char *gen_prompt;    /* appended to ask for the assistant's turn */
} chat_format;

/* Asks whether the vocabulary holds a token with exactly this text. */
typedef bool (*chat_has_token_fn)(void *ctx, const char *text);

/* The format for a checkpoint: by its chat template text (may be NULL), else by the
 * vocabulary's special tokens (has_token may be NULL), else "plain". Never NULL. */
const chat_format *chat_format_detect(const char *tmpl, chat_has_token_fn has_token, void *ctx);
/* The format named `name`, or NULL. */
const chat_format *chat_format_by_name(const char *name);
/* Renders OpenAI `messages` (array of {role, content}) and the generation prompt into `out`.
 * PACER_ERR_FORMAT with `err` filled when a message is not {role: string, content: string}. */
pacer_err chat_render(const chat_format *f, const json_t *messages, buf *out, char *err, size_t err_len);

#endif
