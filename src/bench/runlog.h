/* runlog.h - the run's local directory, ~/.pacer/runs/RUN_ID, and its server log: the full,
 * unsanitized text of what servers said (error bodies, stream error events, values refused
 * by a fixed vocabulary, a rejected manifest). Receipts keep only pacer's category and a
 * sanitized excerpt; nothing in this directory is ever published. */
#ifndef PACER_RUNLOG_H
#define PACER_RUNLOG_H

#include <stddef.h>

#include "base/error.h"

#define RUNLOG_ROOT ".pacer/runs"      /* below the home directory */
#define RUNLOG_SERVER_FILE "server.log" /* in the run's directory */

/* ~/.pacer/runs/RUN_ID into out (nothing is created). PACER_ERR_ARG when run_id could leave
 * the runs directory (empty, '/', a leading '.') or out is too small; PACER_ERR_NOT_FOUND when
 * there is no home directory. */
pacer_err runlog_dir(const char *run_id, char *out, size_t out_n);
/* The server log of a run: runlog_dir()/server.log. */
pacer_err runlog_server_path(const char *run_id, char *out, size_t out_n);
/* Appends one entry to the log at `path`: a line "== HEADER", then the n bytes of `text` as
 * they are, then a newline. The directory is created (0700) and the file (0600) on first use. */
pacer_err runlog_append(const char *path, const char *header, const char *text, size_t n);

#endif
