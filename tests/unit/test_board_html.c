/* test_board_html.c - board/html: the one escaping function (markup characters, invalid
 * UTF-8, controls), the printf whose %s escapes, and URL encoding. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>

#include "board/html.h"

static char *esc(const char *s) {
    static buf b;
    buf_free(&b);
    buf_init(&b, 1 << 16);
    cr_assert_eq(html_escape(&b, s), PACER_OK);
    return b.data ? b.data : "";
}

Test(html, markup_characters_become_entities) {
    cr_assert_str_eq(esc("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
    cr_assert_str_eq(esc("\"><img src=x onerror=alert(1)>"), "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
    cr_assert_str_eq(esc("a&b 'c'"), "a&amp;b &#39;c&#39;");
    cr_assert_str_eq(esc("plain text, tab\tnewline\n"), "plain text, tab\tnewline\n");
    cr_assert_str_eq(esc(""), "");
    cr_assert_str_eq(esc(NULL), "");
}

Test(html, utf8_kept_and_bad_bytes_replaced) {
    cr_assert_str_eq(esc("Zürich 東京 🚀"), "Zürich 東京 🚀");
    /* a lone continuation byte, an overlong '<', a surrogate, a truncated sequence, controls */
    cr_assert_str_eq(esc("a\x80z"), "a\xEF\xBF\xBDz");
    cr_assert_str_eq(esc("\xC0\xBC"), "\xEF\xBF\xBD\xEF\xBF\xBD");
    cr_assert_str_eq(esc("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    cr_assert_str_eq(esc("x\xE6\x9D"), "x\xEF\xBF\xBD\xEF\xBF\xBD");
    cr_assert_str_eq(esc("bell\a esc\x1b del\x7f"), "bell\xEF\xBF\xBD esc\xEF\xBF\xBD del\xEF\xBF\xBD");
    buf b;
    buf_init(&b, 64);
    cr_assert_eq(html_escape_n(&b, "a\0b", 3), PACER_OK);
    cr_assert_str_eq(b.data, "a\xEF\xBF\xBD" "b");
    buf_free(&b);
}

Test(html, appendf_escapes_every_string_and_formats_numbers) {
    buf b;
    buf_init(&b, 4096);
    int64_t big = INT64_C(9007199254740993);
    const char *volatile none = NULL; /* a NULL %s appends nothing */
    cr_assert_eq(html_appendf(&b, "<td title=\"%s\">%s</td><td>%d|%5.2f|%" PRId64 "|%zu|%x|%%|%.3s|%s|%-4d|%*d</td>",
                              "\"><img onerror=x>", "<b>", -7, 3.14159, big, (size_t)12, 255u, "abcdef", none,
                              5, 3, 9),
                 PACER_OK);
    cr_assert_str_eq(b.data, "<td title=\"&quot;&gt;&lt;img onerror=x&gt;\">&lt;b&gt;</td>"
                             "<td>-7| 3.14|9007199254740993|12|ff|%|abc||5   |  9</td>");
    buf_reset(&b);
    cr_assert_eq(html_appendf(&b, "%g %.1e %lld %lu %c", 0.5, 12345.0, -5LL, 7UL, 'z'), PACER_OK);
    cr_assert_str_eq(b.data, "0.5 1.2e+04 -5 7 z");
    buf_free(&b);
}

Test(html, appendf_respects_the_cap) {
    buf b;
    buf_init(&b, 8);
    cr_assert_eq(html_appendf(&b, "ab%scd", "<<<<"), PACER_ERR_TOO_BIG);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(html_appendf(&b, "%s", "12345678"), PACER_OK);
    cr_assert_eq(html_escape(&b, "<"), PACER_ERR_TOO_BIG);
    cr_assert_str_eq(b.data, "12345678");
    buf_free(&b);
}

Test(html, url_encode) {
    buf b;
    buf_init(&b, 256);
    cr_assert_eq(html_url_encode(&b, "org/Model-1.5B_x~ a&b=c\"<", NULL), PACER_OK);
    cr_assert_str_eq(b.data, "org%2FModel-1.5B_x~%20a%26b%3Dc%22%3C");
    buf_reset(&b);
    cr_assert_eq(html_url_encode(&b, "org/name é", "/"), PACER_OK);
    cr_assert_str_eq(b.data, "org/name%20%C3%A9");
    buf_free(&b);
}
