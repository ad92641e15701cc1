/* site_session.c - what the website knows of a browser: the security headers of every page,
 * the CSRF cookie and its form token (an HMAC under the site's key), the same-origin check
 * of a POST, and browser profiles behind the pacer_profile cookie. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "base/sha256.h"
#include "base/utf8.h"
#include "board/site_internal.h"

#define CSRF_COOKIE "pacer_csrf"
#define PROFILE_COOKIE "pacer_profile"
#define PROFILE_PREFIX "pbc_"
#define PROFILE_SECRET_HEX 48
#define COOKIE_MAX_AGE "31536000" /* a year */

static const char CSP[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                          "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pacer_err site_headers(http_req *r) {
    static const char *const h[][2] = {
        {"Content-Security-Policy", CSP},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "same-origin"},
        {"X-Frame-Options", "DENY"},
        {"Cache-Control", "no-cache"},
    };
    pacer_err rc = PACER_OK;
    for (size_t i = 0; i < sizeof h / sizeof h[0] && !rc; i++) rc = http_req_add_header(r, h[i][0], h[i][1]);
    return rc;
}

pacer_err site_respond_page(http_req *r, int status, buf *page) {
    pacer_err rc = site_headers(r);
    size_t len = page->len;
    char *body = rc ? NULL : buf_detach(page);
    if (rc || !body) return rc ? rc : PACER_ERR_NOMEM;
    return http_respond_take(r, status, "text/html; charset=utf-8", body, len);
}

/* True when the request came to a loopback host (development): cookies may then go without
 * Secure, which a browser would not send back over plain HTTP. */
static bool loopback_host(http_req *r) {
    const char *host = http_req_header(r, "Host");
    if (!host) return false;
    size_t n = strcspn(host, ":");
    if (host[0] == '[') return strncmp(host, "[::1]", 5) == 0;
    return (n == 9 && strncasecmp(host, "localhost", 9) == 0) || strncmp(host, "127.", 4) == 0;
}

static pacer_err set_cookie(http_req *r, const char *name, const char *value, bool persistent) {
    char c[256];
    snprintf(c, sizeof c, "%s=%s; Path=/; %sHttpOnly; SameSite=Strict%s", name, value,
             persistent ? "Max-Age=" COOKIE_MAX_AGE "; " : "", loopback_host(r) ? "" : "; Secure");
    return http_req_add_header(r, "Set-Cookie", c);
}

static bool is_hex(const char *s, size_t n) {
    if (!s || strlen(s) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

static pacer_err random_hex(char *out, size_t bytes) {
    unsigned char r[32];
    if (bytes > sizeof r || getrandom(r, bytes, 0) != (ssize_t)bytes) return PACER_ERR_IO;
    for (size_t i = 0; i < bytes; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
    return PACER_OK;
}

/* The form token of a CSRF cookie value: hex HMAC-SHA256 under the site's key. */
static pacer_err csrf_token(const board_site *s, const char *cookie, char token[65]) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char msg[64];
    int len = snprintf(msg, sizeof msg, "csrf:%s", cookie);
    if (!HMAC(EVP_sha256(), s->key, sizeof s->key, (const unsigned char *)msg, (size_t)len, mac, &n) || n != 32)
        return PACER_ERR_INTERNAL;
    sha256_to_hex(mac, token);
    return PACER_OK;
}

pacer_err site_csrf_issue(board_site *s, http_req *r, char token[65]) {
    const char *have = http_req_cookie(r, CSRF_COOKIE);
    char fresh[33];
    if (!is_hex(have, 32)) {
        pacer_err rc = random_hex(fresh, 16);
        if (!rc) rc = set_cookie(r, CSRF_COOKIE, fresh, false);
        if (rc) return rc;
        have = fresh;
    }
    return csrf_token(s, have, token);
}

/* True when the browser's own words (when it sent any) say the request came from the board. */
static bool same_origin(http_req *r) {
    const char *site = http_req_header(r, "Sec-Fetch-Site");
    if (site && strcmp(site, "same-origin") != 0) return false;
    const char *origin = http_req_header(r, "Origin"), *host = http_req_header(r, "Host");
    if (!origin) return true;
    const char *o = strstr(origin, "://");
    return o && host && strcasecmp(o + 3, host) == 0;
}

bool site_csrf_check(board_site *s, http_req *r, const char *token) {
    const char *cookie = http_req_cookie(r, CSRF_COOKIE);
    char want[65];
    if (!same_origin(r) || !is_hex(cookie, 32) || !token || strlen(token) != 64 || csrf_token(s, cookie, want))
        return false;
    return CRYPTO_memcmp(want, token, 64) == 0;
}

pacer_err site_profile_of(board_site *s, http_req *r, store_profile *out) {
    const char *secret = http_req_cookie(r, PROFILE_COOKIE);
    size_t plen = strlen(PROFILE_PREFIX);
    if (!secret || strncmp(secret, PROFILE_PREFIX, plen) != 0 || !is_hex(secret + plen, PROFILE_SECRET_HEX))
        return PACER_ERR_NOT_FOUND;
    char hash[65];
    pacer_err rc = sha256_hex(secret, strlen(secret), hash);
    if (!rc) rc = store_token_find(s->store, hash, out, NULL);
    if (!rc && strcmp(out->kind, "browser") != 0) rc = PACER_ERR_NOT_FOUND; /* an upload token is no cookie */
    return rc;
}

bool site_profile_cookie_sent(http_req *r) { return http_req_cookie(r, PROFILE_COOKIE) != NULL; }

pacer_err site_profile_create(board_site *s, http_req *r, const char *name, int64_t now_s, store_profile *out) {
    char secret[sizeof PROFILE_PREFIX + PROFILE_SECRET_HEX + 1] = PROFILE_PREFIX, hash[65], token_name[STORE_NAME_MAX];
    pacer_err rc = random_hex(secret + strlen(PROFILE_PREFIX), PROFILE_SECRET_HEX / 2);
    if (!rc) rc = sha256_hex(secret, strlen(secret), hash);
    if (!rc) rc = store_profile_create(s->store, name, "browser", now_s, out);
    if (!rc) {
        snprintf(token_name, sizeof token_name, "browser-%s", out->id);
        rc = store_token_create(s->store, token_name, hash, out->id, now_s);
    }
    if (!rc) rc = set_cookie(r, PROFILE_COOKIE, secret, true);
    return rc;
}

bool site_name_valid(const char *name, size_t n) {
    if (n == 0 || n > SITE_NAME_MAX) return false;
    bool visible = false;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)name[i];
        unsigned lo, hi;
        size_t len = utf8_lead(c, &lo, &hi);
        if (len == 0 || i + len > n || c < 0x20 || c == 0x7F) return false;
        if (len > 1 && ((unsigned char)name[i + 1] < lo || (unsigned char)name[i + 1] > hi)) return false;
        for (size_t k = 2; k < len; k++)
            if ((unsigned char)name[i + k] < 0x80 || (unsigned char)name[i + k] > 0xBF) return false;
        if (c != ' ') visible = true;
        i += len;
    }
    return visible;
}
