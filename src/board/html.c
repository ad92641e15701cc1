/* html.c - escaping for the board's pages and SVG (see html.h): one escaping function, a
 * printf whose %s always escapes, and percent-encoding for URLs. */
#include "board/html.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "base/utf8.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* The entity for an ASCII byte that must not appear as itself, or NULL. */
static const char *entity(unsigned char c) {
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: break;
    }
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) return REPLACEMENT;
    return NULL;
}

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 when it is not one. */
static size_t sequence_len(const unsigned char *s, size_t n) {
    unsigned lo, hi;
    size_t len = utf8_lead(s[0], &lo, &hi);
    if (len < 2 || len > n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* Undoes a partial append: the buffer is as it was at `len`. */
static pacer_err undo(buf *b, size_t len, pacer_err rc) {
    if (rc && b->data && b->len > len) {
        b->len = len;
        b->data[len] = '\0';
    }
    return rc;
}

pacer_err html_escape_n(buf *b, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t start = b->len;
    size_t run = 0; /* bytes at p[i - run .. i) that go out as they are */
    pacer_err rc = PACER_OK;
    for (size_t i = 0; i < n && !rc;) {
        const char *ent = NULL;
        size_t step = 1;
        if (p[i] < 0x80) {
            ent = entity(p[i]);
        } else if (!(step = sequence_len(p + i, n - i))) {
            ent = REPLACEMENT;
            step = 1;
        }
        if (!ent) { run += step; i += step; continue; }
        rc = buf_append(b, p + i - run, run);
        if (!rc) rc = buf_append_str(b, ent);
        run = 0;
        i += step;
    }
    if (!rc && run) rc = buf_append(b, p + n - run, run);
    return undo(b, start, rc);
}

pacer_err html_escape(buf *b, const char *s) { return s ? html_escape_n(b, s, strlen(s)) : PACER_OK; }

/* One conversion of a printf format: the spec text with any '*' replaced by its number,
 * the length modifier and the conversion character. */
typedef struct conv {
    char spec[48];
    size_t spec_len;
    char length[3];
    char type;
    int precision; /* -1: none */
} conv;

static bool spec_add(conv *c, const char *s, size_t n) {
    if (c->spec_len + n + 1 >= sizeof c->spec) return false;
    memcpy(c->spec + c->spec_len, s, n);
    c->spec_len += n;
    c->spec[c->spec_len] = '\0';
    return true;
}

/* Parses the conversion starting after '%' at *fmt; consumes '*' arguments from ap.
 * Advances *fmt past it. False when it is not a conversion this formatter knows. */
static bool conv_parse(const char **fmt, va_list *ap, conv *c) {
    const char *f = *fmt;
    *c = (conv){.spec = "%", .spec_len = 1, .precision = -1};
    size_t flags = strspn(f, "-+ #0");
    if (!spec_add(c, f, flags)) return false;
    f += flags;
    for (int part = 0; part < 2; part++) {
        if (part == 1) {
            if (*f != '.') break;
            if (!spec_add(c, ".", 1)) return false;
            f++;
        }
        char num[16];
        int v = -1;
        if (*f == '*') {
            v = va_arg(*ap, int);
            f++;
        } else if (*f >= '0' && *f <= '9') {
            v = 0;
            while (*f >= '0' && *f <= '9' && v < 100000) v = v * 10 + (*f++ - '0');
        }
        if (part == 1 && v < 0) v = 0;
        if (v >= 0 && !spec_add(c, num, (size_t)snprintf(num, sizeof num, "%d", v))) return false;
        if (part == 1) c->precision = v;
    }
    size_t ln = strspn(f, "hlzjtL");
    if (ln > 2) return false;
    memcpy(c->length, f, ln);
    c->length[ln] = '\0';
    if (!spec_add(c, f, ln + 1)) return false;
    c->type = f[ln];
    *fmt = f + ln + (c->type ? 1 : 0);
    return c->type && strchr("diuxXofFgGeEaAcsp", c->type);
}

static bool len_is(const conv *c, const char *l) { return strcmp(c->length, l) == 0; }

/* Formats one non-%s conversion with its argument. */
static pacer_err conv_format(buf *b, const conv *c, va_list *ap) {
    switch (c->type) {
    case 'd': case 'i':
        if (len_is(c, "l")) return buf_appendf(b, c->spec, va_arg(*ap, long));
        if (len_is(c, "ll")) return buf_appendf(b, c->spec, va_arg(*ap, long long));
        if (len_is(c, "z")) return buf_appendf(b, c->spec, va_arg(*ap, ssize_t));
        if (len_is(c, "j")) return buf_appendf(b, c->spec, va_arg(*ap, intmax_t));
        if (len_is(c, "t")) return buf_appendf(b, c->spec, va_arg(*ap, ptrdiff_t));
        return buf_appendf(b, c->spec, va_arg(*ap, int));
    case 'u': case 'x': case 'X': case 'o':
        if (len_is(c, "l")) return buf_appendf(b, c->spec, va_arg(*ap, unsigned long));
        if (len_is(c, "ll")) return buf_appendf(b, c->spec, va_arg(*ap, unsigned long long));
        if (len_is(c, "z")) return buf_appendf(b, c->spec, va_arg(*ap, size_t));
        if (len_is(c, "j")) return buf_appendf(b, c->spec, va_arg(*ap, uintmax_t));
        if (len_is(c, "t")) return buf_appendf(b, c->spec, va_arg(*ap, ptrdiff_t));
        return buf_appendf(b, c->spec, va_arg(*ap, unsigned));
    case 'c': return buf_appendf(b, c->spec, va_arg(*ap, int));
    case 'p': return buf_appendf(b, c->spec, va_arg(*ap, void *));
    default:
        if (len_is(c, "L")) return buf_appendf(b, c->spec, va_arg(*ap, long double));
        return buf_appendf(b, c->spec, va_arg(*ap, double));
    }
}

pacer_err html_vappendf(buf *b, const char *fmt, va_list ap) {
    va_list args;
    va_copy(args, ap);
    size_t start = b->len;
    pacer_err rc = PACER_OK;
    while (*fmt && !rc) {
        const char *pct = strchr(fmt, '%');
        size_t lit = pct ? (size_t)(pct - fmt) : strlen(fmt);
        rc = buf_append(b, fmt, lit);
        if (rc || !pct) break;
        fmt = pct + 1;
        if (*fmt == '%') { rc = buf_append_char(b, '%'); fmt++; continue; }
        conv c;
        if (!conv_parse(&fmt, &args, &c)) { rc = PACER_ERR_ARG; break; }
        if (c.type == 's') {
            const char *s = va_arg(args, const char *);
            if (!s) continue;
            size_t n = strlen(s);
            if (c.precision >= 0 && (size_t)c.precision < n) n = (size_t)c.precision;
            rc = html_escape_n(b, s, n);
        } else {
            rc = conv_format(b, &c, &args);
        }
    }
    va_end(args);
    return undo(b, start, rc);
}

pacer_err html_appendf(buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pacer_err rc = html_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

pacer_err html_url_encode(buf *b, const char *s, const char *keep) {
    static const char hex[] = "0123456789ABCDEF";
    pacer_err rc = PACER_OK;
    for (const unsigned char *p = (const unsigned char *)s; p && *p && !rc; p++) {
        bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                     strchr("-._~", *p) || (keep && strchr(keep, *p));
        if (plain) {
            rc = buf_append_char(b, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = buf_append(b, esc, 3);
        }
    }
    return rc;
}
