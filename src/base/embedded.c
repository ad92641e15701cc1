/* embedded.c - lookup in the table of embedded files. */
#include "base/embedded.h"

#include <string.h>

const embedded_file *embedded_find(const char *name) {
    for (const embedded_file *f = embedded_files; f->name; f++)
        if (strcmp(f->name, name) == 0) return f;
    return NULL;
}
