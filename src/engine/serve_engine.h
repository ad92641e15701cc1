/* serve_engine.h - binds the embedded engine (engine.h + tokenizer.h) to serve_backend. */
#ifndef PACER_SERVE_ENGINE_H
#define PACER_SERVE_ENGINE_H

#include "engine/engine.h"
#include "engine/serve.h"

/* Fills `b` for an open engine (which must outlive it). PACER_ERR_STATE when the engine has
 * no tokenizer. */
pacer_err serve_engine_backend(engine *e, serve_backend *b);
/* The chat format of the engine's checkpoint (template text, then vocabulary). */
const chat_format *serve_engine_chat_format(const engine *e);

#endif
