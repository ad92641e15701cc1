/* archive.h - `--archive`: a finished results directory zipped beside itself (DIR.zip) with
 * libzip, every file under DIR stored as "<name of DIR>/<relative path>", in sorted order.
 * Written to a temporary name and renamed, so an interrupted archive leaves no DIR.zip. */
#ifndef PACER_LAB_ARCHIVE_H
#define PACER_LAB_ARCHIVE_H

#include <stddef.h>

#include "base/error.h"

/* Zips `dir` into `zip_path`. Returns the number of files through *n_files. */
pacer_err lab_archive_write(const char *dir, const char *zip_path, size_t *n_files, char *err, size_t err_len);

#endif
