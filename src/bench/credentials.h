/* credentials.h - upload tokens stored by 'pacer bench login': ~/.pacer/credentials.json,
 * mode 0600 in a 0700 directory, one token per exact board URL (another URL never gets
 * it), and the URL logged into last as the default. PACER_BENCHMARK_TOKEN is never stored
 * here (the CLI reads it for one run). */
#ifndef PACER_CREDENTIALS_H
#define PACER_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define CREDENTIALS_TOKEN_MAX 256
#define CREDENTIALS_URL_MAX 1024

/* The file's path (under $HOME). PACER_ERR_NOT_FOUND when there is no home directory. */
pacer_err credentials_path(char *out, size_t n);
/* The token stored for exactly `url` into `token`. PACER_ERR_NOT_FOUND when none;
 * PACER_ERR_STATE when the file is readable by others (it is then not used). */
pacer_err credentials_get(const char *url, char token[CREDENTIALS_TOKEN_MAX]);
/* The URL logged into last. PACER_ERR_NOT_FOUND when none. */
pacer_err credentials_default_url(char url[CREDENTIALS_URL_MAX]);
/* Stores `token` for `url` (replacing an earlier one) and makes `url` the default. */
pacer_err credentials_put(const char *url, const char *token);
/* Removes the token of `url`, or every token (and the file) when `url` is NULL. *removed
 * says whether anything was there. */
pacer_err credentials_remove(const char *url, bool *removed);

#endif
