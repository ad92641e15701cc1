/* sha256.c - SHA-256 via libcrypto's EVP interface. */
#include "base/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

pacer_err sha256_begin(sha256_ctx *ctx) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md) return PACER_ERR_NOMEM;
    if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return PACER_ERR_INTERNAL;
    }
    ctx->md = md;
    return PACER_OK;
}

pacer_err sha256_update(sha256_ctx *ctx, const void *data, size_t n) {
    return EVP_DigestUpdate(ctx->md, data, n) == 1 ? PACER_OK : PACER_ERR_INTERNAL;
}

pacer_err sha256_end(sha256_ctx *ctx, uint8_t out[32]) {
    unsigned int len = 0;
    int ok = EVP_DigestFinal_ex(ctx->md, out, &len);
    EVP_MD_CTX_free(ctx->md);
    ctx->md = NULL;
    return ok == 1 && len == 32 ? PACER_OK : PACER_ERR_INTERNAL;
}

void sha256_abort(sha256_ctx *ctx) {
    if (ctx && ctx->md) EVP_MD_CTX_free(ctx->md);
    if (ctx) ctx->md = NULL;
}

void sha256_to_hex(const uint8_t digest[32], char out[SHA256_HEX_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[SHA256_HEX_LEN] = '\0';
}

pacer_err sha256_hex(const void *data, size_t n, char out[SHA256_HEX_LEN + 1]) {
    uint8_t d[32];
    unsigned int len = 0;
    if (EVP_Digest(data, n, d, &len, EVP_sha256(), NULL) != 1) return PACER_ERR_INTERNAL;
    sha256_to_hex(d, out);
    return PACER_OK;
}

pacer_err sha256_file_hex(const char *path, char out[SHA256_HEX_LEN + 1]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    sha256_ctx ctx;
    pacer_err rc = sha256_begin(&ctx);
    if (rc) goto out;
    enum { BLOCK = 1 << 20 };
    char *block = malloc(BLOCK);
    if (!block) {
        rc = PACER_ERR_NOMEM;
        sha256_abort(&ctx);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, block, BLOCK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = PACER_ERR_IO;
            break;
        }
        if (n == 0) break;
        if ((rc = sha256_update(&ctx, block, (size_t)n))) break;
    }
    free(block);
    if (rc) {
        sha256_abort(&ctx);
        goto out;
    }
    uint8_t d[32];
    rc = sha256_end(&ctx, d);
    if (!rc) sha256_to_hex(d, out);
out:
    close(fd);
    return rc;
}
