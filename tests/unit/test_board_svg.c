/* test_board_svg.c - board/svg: ticks, a scatter whose points are links (hostile labels
 * stay text, the output is well-formed XML checked with expat, undrawable points left out),
 * bar charts and progress bars. */
#include <criterion/criterion.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "board/svg.h"

typedef struct tally {
    int links, circles, scripts, images, titles;
    char last_href[128];
    char last_title[256];
    bool in_title;
} tally;

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    tally *t = ud;
    if (!t->in_title) return;
    size_t have = strlen(t->last_title);
    snprintf(t->last_title + have, sizeof t->last_title - have, "%.*s", len, s);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
    tally *t = ud;
    if (!strcmp(name, "a")) {
        t->links++;
        for (int i = 0; attrs[i]; i += 2) {
            if (!strcmp(attrs[i], "href")) snprintf(t->last_href, sizeof t->last_href, "%s", attrs[i + 1]);
        }
    }
    if (!strcmp(name, "circle")) t->circles++;
    if (!strcmp(name, "script")) t->scripts++;
    if (!strcmp(name, "img") || !strcmp(name, "image")) t->images++;
    if (!strcmp(name, "title")) {
        t->titles++;
        t->in_title = true;
        t->last_title[0] = '\0';
    }
}
static void XMLCALL on_end(void *ud, const XML_Char *name) {
    tally *t = ud;
    if (!strcmp(name, "title")) t->in_title = false;
}

/* Parses `text` as XML; fails the test when it is not well formed. */
static tally parse(const char *text) {
    tally t = {0};
    XML_Parser p = XML_ParserCreate("UTF-8");
    XML_SetUserData(p, &t);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    enum XML_Status st = XML_Parse(p, text, (int)strlen(text), 1);
    cr_assert_eq(st, XML_STATUS_OK, "not well-formed: %s at line %lu col %lu\n%s", XML_ErrorString(XML_GetErrorCode(p)),
                 (unsigned long)XML_GetCurrentLineNumber(p), (unsigned long)XML_GetCurrentColumnNumber(p), text);
    XML_ParserFree(p);
    return t;
}

Test(svg, linear_and_log_ticks) {
    double t[16];
    size_t n = svg_ticks(0, 100, false, t, 16);
    cr_assert_eq(n, 6);
    cr_assert_eq(t[0], 0);
    cr_assert_eq(t[5], 100);
    n = svg_ticks(0, 7, false, t, 16);
    cr_assert_eq(n, 4, "step 2 over 0..7: 0 2 4 6");
    cr_assert_eq(t[3], 6);
    n = svg_ticks(1, 1000, true, t, 16);
    double want[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
    cr_assert_eq(n, 10);
    for (size_t i = 0; i < n; i++) cr_assert_float_eq(t[i], want[i], 1e-9);
    n = svg_ticks(0.1, 100000, true, t, 16);
    cr_assert_eq(n, 7, "many decades: powers of ten only");
    cr_assert_eq(svg_ticks(0, 10, true, t, 16), 0, "no log axis from 0");
    cr_assert_eq(svg_ticks(5, 5, false, t, 16), 0);
}

Test(svg, scatter_points_are_labelled_links_and_hostile_text_stays_text) {
    svg_point pts[] = {
        {120, 35.5, "/r/s-1", "<script>alert(1)</script> on GPU \"A\"", 0},
        {NAN, 10, "/r/nan", "nan", 0},
        {0, 10, "/r/zero", "zero latency cannot be drawn on a log axis", 0},
        {400, 12, NULL, "not a link", 2},
        {80, 90, "/r/s-2?a=1&b=2", "\"><img src=x onerror=alert(1)>", 1},
    };
    const char *series[] = {"cuda", "<b>rocm</b>", "cpu"};
    svg_scatter s = {.id = "map", .title = "Performance map <&>", .x = {"first text (ms)", true},
                     .y = {"stream tok/s", false}, .points = pts, .n = 5, .series = series, .n_series = 3};
    buf b;
    buf_init(&b, 1 << 20);
    size_t drawn = 0;
    cr_assert_eq(svg_scatter_append(&b, &s, &drawn), PACER_OK);
    cr_assert_eq(drawn, 3);
    tally t = parse(b.data);
    cr_assert_eq(t.links, 2);
    cr_assert_eq(t.circles, 3 + 3, "three points and three legend marks");
    cr_assert_eq(t.scripts, 0);
    cr_assert_eq(t.images, 0);
    cr_assert_str_eq(t.last_href, "/r/s-2?a=1&b=2", "the attribute decodes back to the URL");
    cr_assert_str_eq(t.last_title, "\"><img src=x onerror=alert(1)>", "the name decodes back to the text");
    cr_assert_eq(t.titles, 1 + 3, "the figure's title and one per point");
    cr_assert_null(strstr(b.data, "<script"));
    cr_assert_null(strstr(b.data, "<img"));
    cr_assert_null(strstr(b.data, "/r/zero"));
    cr_assert_not_null(strstr(b.data, "(log scale)"));
    buf_free(&b);
}

Test(svg, empty_scatter_says_so) {
    svg_scatter s = {.id = "e", .title = "Nothing", .x = {"x", true}, .y = {"y", true}};
    buf b;
    buf_init(&b, 1 << 16);
    size_t drawn = 7;
    cr_assert_eq(svg_scatter_append(&b, &s, &drawn), PACER_OK);
    cr_assert_eq(drawn, 0);
    parse(b.data);
    cr_assert_not_null(strstr(b.data, "No results"));
    buf_free(&b);
}

Test(svg, points_land_inside_the_frame) {
    svg_point pts[] = {{1, 1, NULL, "a", 0}, {1000, 500, NULL, "b", 0}, {31.6, 250, NULL, "c", 0}};
    svg_scatter s = {.id = "f", .title = "t", .width = 600, .height = 400, .x = {"x", true}, .y = {"y", false},
                     .points = pts, .n = 3};
    buf b;
    buf_init(&b, 1 << 16);
    cr_assert_eq(svg_scatter_append(&b, &s, NULL), PACER_OK);
    parse(b.data);
    for (const char *p = b.data; (p = strstr(p, "<circle")); p++) {
        double cx, cy;
        const char *c = strstr(p, "cx=\"");
        cr_assert(c && sscanf(c, "cx=\"%lf\" cy=\"%lf\"", &cx, &cy) == 2);
        cr_assert(cx >= 70 && cx <= 580 && cy >= 20 && cy <= 350, "(%f, %f) outside", cx, cy);
    }
    buf_free(&b);
}

Test(svg, bars_and_progress) {
    svg_bar bars[] = {{"code / greedy", 120.5, NULL}, {"chat <sampled>", 60, "60.0 tok/s"}, {"none", NAN, NULL}};
    buf b;
    buf_init(&b, 1 << 16);
    cr_assert_eq(svg_bars_append(&b, "cells", "Medians & more", bars, 3), PACER_OK);
    parse(b.data);
    cr_assert_not_null(strstr(b.data, "chat &lt;sampled&gt;"));
    cr_assert_not_null(strstr(b.data, "no value"));
    buf_reset(&b);
    cr_assert_eq(svg_progress_append(&b, 1.7, "6 of 10 runs <to gold>"), PACER_OK);
    parse(b.data);
    cr_assert_not_null(strstr(b.data, "class=\"fill\" width=\"200.0\""), "clamped to full");
    buf_reset(&b);
    cr_assert_eq(svg_progress_append(&b, 0.25, "quarter"), PACER_OK);
    cr_assert_not_null(strstr(b.data, "class=\"fill\" width=\"50.0\""));
    buf_free(&b);
}
