/* utf8.c - lead bytes of well-formed UTF-8. */
#include "base/utf8.h"

size_t utf8_lead(unsigned char c, unsigned *lo, unsigned *hi) {
    *lo = 0x80;
    *hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return 2;
    if (c >= 0xE0 && c <= 0xEF) {
        if (c == 0xE0) *lo = 0xA0;
        if (c == 0xED) *hi = 0x9F;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (c == 0xF0) *lo = 0x90;
        if (c == 0xF4) *hi = 0x8F;
        return 4;
    }
    return 0;
}

bool utf8_is_whole(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned lo, hi;
        size_t len = utf8_lead(u[i], &lo, &hi);
        if (len == 0 || n - i < len) return false;
        if (len >= 2 && (u[i + 1] < lo || u[i + 1] > hi)) return false;
        for (size_t k = 2; k < len; k++)
            if (u[i + k] < 0x80 || u[i + k] > 0xBF) return false;
        i += len;
    }
    return true;
}
