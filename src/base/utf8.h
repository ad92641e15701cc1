/* utf8.h - the one table of well-formed UTF-8 lead bytes (RFC 3629), shared by the JSON
 * skim and the server's text holdback. */
#ifndef PACER_UTF8_H
#define PACER_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the sequence lead byte `c` announces: 1 for ASCII, 2..4 for a lead byte, 0
 * when `c` cannot start a sequence (a continuation byte, an overlong lead, > U+10FFFF).
 * For 2..4, *lo..*hi is the range the second byte must fall in (this is what rules out
 * overlongs and surrogates); later bytes are 0x80..0xBF. */
size_t utf8_lead(unsigned char c, unsigned *lo, unsigned *hi);

/* True when the `n` bytes at `s` are whole, well-formed UTF-8 text: every sequence valid
 * and complete (none cut at the end). The empty string is whole. */
bool utf8_is_whole(const char *s, size_t n);

#endif
