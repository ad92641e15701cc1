/* html.h - the board's one escaping function and the formatters built on it. Every string
 * that reaches a page or an SVG from outside the program (display names, model ids, GPU
 * names, reasons, notes, receipt fields) goes through html_escape, directly or as a %s of
 * html_appendf; markup is only ever appended from string literals. */
#ifndef PACER_BOARD_HTML_H
#define PACER_BOARD_HTML_H

#include <stdarg.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

/* Appends `s` escaped for HTML text and for quoted attribute values alike (also valid in
 * XML, so in SVG): & < > " ' become entities; bytes that are not well-formed UTF-8 and C0
 * controls other than tab and newline (and DEL) become U+FFFD. NULL appends nothing. On
 * error the buffer is unchanged. */
pacer_err html_escape(buf *b, const char *s);
/* As html_escape for the first `n` bytes of `s` (which may hold NUL bytes: each becomes
 * U+FFFD). */
pacer_err html_escape_n(buf *b, const char *s, size_t n);

/* Like buf_appendf, with one difference: every %s argument is appended through
 * html_escape (a NULL %s appends nothing). Other conversions (d i u ld lld zu f g e x c,
 * with flags, width and precision, and PRId64) are formatted as printf does; %% is a
 * percent sign. The format itself is trusted markup. On error (PACER_ERR_TOO_BIG past the
 * cap, PACER_ERR_ARG for an unknown conversion) the buffer is unchanged. */
pacer_err html_appendf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
pacer_err html_vappendf(buf *b, const char *fmt, va_list ap);

/* Appends `s` percent-encoded for a URL query value or path segment: everything but
 * A-Z a-z 0-9 - . _ ~ is %XX; `keep` lists further bytes kept as they are (e.g. "/" for a
 * model id in a path). The result still goes through html_escape when it lands in an
 * attribute, which html_appendf's %s does. */
pacer_err html_url_encode(buf *b, const char *s, const char *keep);

#endif
