/* embedded.h - files compiled into the binary (the built-in suites; the board's style
 * sheet, script and icon), generated at build time by scripts/embed.sh from suites/ and
 * src/board/assets/. */
#ifndef PACER_EMBEDDED_H
#define PACER_EMBEDDED_H

#include <stddef.h>

typedef struct embedded_file {
    const char *name; /* base name, e.g. "community-v2.json" */
    const char *data; /* NUL-terminated; size excludes the terminator */
    size_t size;
} embedded_file;

/* Terminated by an entry whose name is NULL. */
extern const embedded_file embedded_files[];

/* Looks up an embedded file by base name; NULL when absent. */
const embedded_file *embedded_find(const char *name);

#endif
