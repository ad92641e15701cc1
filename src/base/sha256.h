/* sha256.h - SHA-256 through OpenSSL's libcrypto, one-shot and incremental. */
#ifndef PACER_SHA256_H
#define PACER_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define SHA256_HEX_LEN 64

typedef struct sha256_ctx {
    void *md; /* EVP_MD_CTX */
} sha256_ctx;

pacer_err sha256_begin(sha256_ctx *ctx);
pacer_err sha256_update(sha256_ctx *ctx, const void *data, size_t n);
/* Writes the 32-byte digest and frees the context. */
pacer_err sha256_end(sha256_ctx *ctx, uint8_t out[32]);
/* Frees a context that will not be finished. Accepts a zeroed context. */
void sha256_abort(sha256_ctx *ctx);

/* Digest of one buffer as 64 lowercase hex digits plus NUL. */
pacer_err sha256_hex(const void *data, size_t n, char out[SHA256_HEX_LEN + 1]);
/* Hex form of a 32-byte digest. */
void sha256_to_hex(const uint8_t digest[32], char out[SHA256_HEX_LEN + 1]);
/* Digest of a whole file, read in blocks. */
pacer_err sha256_file_hex(const char *path, char out[SHA256_HEX_LEN + 1]);

#endif
