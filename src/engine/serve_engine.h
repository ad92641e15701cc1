/* serve_engine.h - binds the embedded engine (engine.h + tokenizer.h) to engine_backend. */
#ifndef PACER_SERVE_ENGINE_H
#define PACER_SERVE_ENGINE_H

#include <stddef.h>

#include "engine/backend.h"
#include "engine/chat.h"
#include "engine/engine.h"

/* Fills `b` for an open engine (which must outlive it). PACER_ERR_STATE when the engine has
 * no tokenizer. */
pacer_err serve_engine_backend(engine *e, engine_backend *b);
/* Fills `b` for a drafter: eval and the sizes only (a drafter needs no tokenizer). */
void serve_engine_drafter_backend(engine *e, engine_backend *b);
/* PACER_OK when `drafter` shares the vocabulary of `target` (same size, same token texts);
 * else PACER_ERR_ARG and one line in err. */
pacer_err serve_engine_check_drafter(const engine *target, const engine *drafter, char *err, size_t err_len);
/* The chat format of the engine's checkpoint (template text, then vocabulary). */
const chat_format *serve_engine_chat_format(const engine *e);

#endif
