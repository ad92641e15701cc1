/* fileio.h - whole-file reads with a cap, atomic writes, directory creation. */
#ifndef PACER_FILEIO_H
#define PACER_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"

/* Writes `n` bytes to `path` so that a reader sees either the old file or the whole new
 * one: a temporary file in the same directory, fsync, rename over `path`, fsync of the
 * directory. `mode` is the new file's permission bits. On error nothing is left behind. */
pacer_err file_write_atomic(const char *path, const void *data, size_t n, mode_t mode);
/* Appends the contents of `path` to `out` (whose cap applies). */
pacer_err file_read_all(const char *path, buf *out);
/* Creates `path` and its missing parents with `mode`. An existing directory is fine. */
pacer_err dir_create_all(const char *path, mode_t mode);
/* Home directory from $HOME, or the password database; NULL when neither is known. */
const char *path_home(void);

#endif
