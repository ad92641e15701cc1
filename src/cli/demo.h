/* demo.h - the demo checkpoint `pacer bench` runs when no model is named: a small seeded
 * random-weight model with a real tokenizer, synthesized once under ~/.pacer/models/. */
#ifndef PACER_CLI_DEMO_H
#define PACER_CLI_DEMO_H

#include <stddef.h>

/* Writes the demo model's path to `path`, synthesizing it first when it is missing.
 * Returns 0, or -1 with a message in `err`. Progress goes to stderr. */
int demo_model_ensure(char *path, size_t path_len, char *err, size_t err_len);

#endif
