/* test_board_pages.c - board/pages: every page escapes what users wrote (display names,
 * model ids, reasons, receipt fields), carries no inline script, style or event handler and
 * loads nothing from elsewhere; the dashboard's filters, map pages and podium switch; the
 * profile's trophies, milestone and history pages; the receipt page shows every attempt
 * field; upload answers. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bench/receipt.h"
#include "board/pages.h"

#define V2 "community-v2"
#define D2 "34a6896eb576cd8e70a10676bc0a0f3b716a03740c23ae1bfc26868210bc79c0"
#define V1 "community-v1"
#define D1 "7f899b8ece92e46e3912a89f256aa5e7933dc82f45a0982cfc309fe4591f9c29"

static const pages_suite SUITES[] = {{V2, D2}, {V1, D1}};
static const pages_site SITE = {SUITES, 2, "https://hub.example"};

static const char *EVIL_NAME = "<script>alert('n')</script>";
static const char *EVIL_IMG = "\"><img src=x onerror=alert(1)>";

#define NROWS 450
static rank_row ROWS[NROWS];
static char IDS[NROWS][32], PIDS[NROWS][32];

/* 450 published v2 rows, newest first: three contributors (two with hostile names), two
 * models, two GPUs; row 0 is a v1 row of a fourth contributor. */
static void seed(void) {
    const char *names[] = {"alice", EVIL_NAME, EVIL_IMG};
    const char *models[] = {"org/small-1B", "org/<b>big</b>-30B"};
    for (int i = 0; i < NROWS; i++) {
        snprintf(IDS[i], sizeof IDS[i], "s-%016x", i);
        snprintf(PIDS[i], sizeof PIDS[i], "c-%016x", i % 3);
        ROWS[i] = (rank_row){.id = IDS[i], .profile_id = PIDS[i], .display_name = names[i % 3], .suite_id = V2,
                             .suite_digest = D2, .published = true, .complete = true, .model_id = models[i % 2],
                             .hardware = i % 4 < 2 ? "GPU A" : "GPU \"B\"", .platform = "linux", .backend = "cuda",
                             .has_chat_greedy = true, .chat_greedy_tok_s = 10 + i % 50, .chat_greedy_first_ms = 20 + i,
                             .has_best_tok_s = true, .best_tok_s = 20 + i % 50, .has_params_total = true,
                             .params_total = i % 2 ? 30000000000 : 1000000000, .created_s = 1767000000 - i * 60};
    }
    ROWS[1].has_params_total = false; /* one run of unknown size */
    ROWS[0].suite_id = V1;
    ROWS[0].suite_digest = D1;
    ROWS[0].display_name = "v1-only";
    snprintf(PIDS[0], sizeof PIDS[0], "c-v1");
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static bool matches(const char *text, const char *pattern) {
    regex_t re;
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB), 0);
    bool m = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

/* Walks every tag's attributes (names, and quoted values skipped whole, so escaped text in
 * a value is never taken for an attribute); fails on an event handler or a style attribute. */
static void assert_no_handler_attributes(const char *html) {
    for (const char *p = html; (p = strchr(p, '<'));) {
        p++;
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) continue;
        p += strcspn(p, " \t\n>");
        while (*p && *p != '>') {
            p += strspn(p, " \t\n/");
            size_t n = strcspn(p, " \t\n=>/");
            cr_assert(!(n > 2 && (p[0] == 'o' || p[0] == 'O') && (p[1] == 'n' || p[1] == 'N')),
                      "an event handler attribute: %.40s", p);
            cr_assert(!(n == 5 && strncasecmp(p, "style", 5) == 0), "an inline style: %.40s", p);
            p += n;
            if (*p == '=') {
                p++;
                cr_assert(*p == '"', "an unquoted attribute value: %.40s", p);
                const char *end = strchr(p + 1, '"');
                cr_assert_not_null(end, "an unterminated attribute value");
                cr_assert_null(memchr(p + 1, '<', (size_t)(end - p - 1)), "a '<' inside an attribute value");
                p = end + 1;
            }
        }
    }
}

/* What every page must hold to: hostile strings inert, no inline script or style, no event
 * handler attribute, no resource from another origin. */
static void assert_safe(const char *html) {
    cr_assert_null(strstr(html, "<script>"), "an inline script");
    cr_assert_null(strstr(html, "<img"), "an injected element");
    cr_assert_null(strstr(html, "<b>"), "an injected element");
    assert_no_handler_attributes(html);
    cr_assert(!matches(html, "<style"), "a style element");
    cr_assert(!matches(html, "(src|srcset)=\"(https?:)?//"), "a resource from elsewhere");
    cr_assert(!matches(html, "<link[^>]*href=\"(https?:)?//"), "a style sheet from elsewhere");
    cr_assert_eq(count(html, "<script"), 1, "one script element: the board's own file");
    cr_assert_not_null(strstr(html, "<script src=\"" PAGES_JS_PATH "\" defer></script>"));
}

static buf B;
static void setup(void) {
    seed();
    buf_init(&B, 16u << 20);
}
static void teardown(void) { buf_free(&B); }

TestSuite(pages, .init = setup, .fini = teardown);

Test(pages, dashboard_escapes_and_ranks_one_suite) {
    pages_query q = {0};
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_OK);
    assert_safe(B.data);
    cr_assert_not_null(strstr(B.data, "&lt;script&gt;alert(&#39;n&#39;)&lt;/script&gt;"));
    cr_assert_not_null(strstr(B.data, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
    cr_assert_not_null(strstr(B.data, "org/&lt;b&gt;big&lt;/b&gt;-30B"));
    cr_assert_null(strstr(B.data, "v1-only"), "a v1 row never shows in the v2 view");
    cr_assert_not_null(strstr(B.data, "data-count=\"runs\">449<"));
    cr_assert_not_null(strstr(B.data, "data-count=\"contributors\">3<"));
    cr_assert_not_null(strstr(B.data, "200 results on this page"));
    cr_assert_not_null(strstr(B.data, "id=\"load-more\""));
    const char *map = strstr(B.data, "id=\"map-chart\""), *end = map ? strstr(map, "</svg>") : NULL;
    cr_assert(map && end);
    size_t points = 0;
    for (const char *p = map; (p = strstr(p, "<a href=\"/r/s-")) && p < end; p++) points++;
    cr_assert_eq(points, 200, "one page of the map: %zu points", points);
    cr_assert_not_null(strstr(B.data, "1 run with an unknown parameter count is not ranked"));
    cr_assert_not_null(strstr(B.data, "href=\"https://hub.example/org/%3Cb%3Ebig%3C/b%3E-30B\""),
                       "the publisher link: encoded, then escaped");
    cr_assert_not_null(strstr(B.data, "href=\"/?size=active\""), "the podium switch keeps the view");
}

Test(pages, map_pages_and_filters) {
    pages_query q = {.map_pages = 2};
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_OK);
    cr_assert_not_null(strstr(B.data, "400 results on this page"));
    cr_assert_not_null(strstr(B.data, "href=\"/?more=3\""));
    buf_reset(&B);
    q = (pages_query){.map_pages = 3};
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_OK);
    cr_assert_not_null(strstr(B.data, "449 results on this page"));
    cr_assert_null(strstr(B.data, "id=\"load-more\""), "nothing older to load");
    buf_reset(&B);
    q = (pages_query){.hardware = "GPU \"B\"", .model = "org/small-1B"};
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_OK);
    assert_safe(B.data);
    cr_assert_not_null(strstr(B.data, "data-count=\"runs\">112<"), "rows 2,6,10,...: GPU B and the small model");
    cr_assert_not_null(strstr(B.data, "<option selected>GPU &quot;B&quot;</option>"));
    cr_assert_not_null(strstr(B.data, "112 results on this page"));
    cr_assert_not_null(strstr(B.data, "href=\"/?model=org%2Fsmall-1B&amp;hardware=GPU%20%22B%22&amp;size=active\""));
}

Test(pages, other_suite_tab) {
    pages_query q = {.suite = 1};
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_OK);
    cr_assert_not_null(strstr(B.data, "data-count=\"runs\">1<"));
    cr_assert_not_null(strstr(B.data, "v1-only"));
    cr_assert_not_null(strstr(B.data, "<a href=\"/c/c-v1?suite=community-v1\">v1-only</a>"));
    cr_assert_not_null(strstr(B.data, "<input type=\"hidden\" name=\"suite\" value=\"community-v1\">"));
    q.suite = 2;
    cr_assert_eq(pages_dashboard(&B, &SITE, &q, ROWS, NROWS), PACER_ERR_ARG);
}

Test(pages, profile_trophies_milestone_history) {
    pages_profile_view p = {PIDS[1], EVIL_NAME, 1760000000};
    pages_query q = {0};
    cr_assert_eq(pages_profile(&B, &SITE, &q, &p, ROWS, NROWS), PACER_OK);
    assert_safe(B.data);
    /* rows 1, 4, 7, ... of v2: 150 published runs */
    cr_assert_not_null(strstr(B.data, "data-count=\"runs\">150<"));
    cr_assert_not_null(strstr(B.data, "class=\"platinum earned\""));
    cr_assert_not_null(strstr(B.data, "Every milestone reached."));
    cr_assert_not_null(strstr(B.data, "id=\"honour-top\""), "150 is the most (shared with the others: 150 each)");
    cr_assert_not_null(strstr(B.data, "page 1 of 6"));
    cr_assert_eq(count(B.data, "<tr><td>"), PAGES_HISTORY_PAGE);
    cr_assert_not_null(strstr(B.data, "href=\"/c/c-0000000000000001?page=1\" rel=\"next\""));
    buf_reset(&B);
    q.page = 5;
    cr_assert_eq(pages_profile(&B, &SITE, &q, &p, ROWS, NROWS), PACER_OK);
    cr_assert_not_null(strstr(B.data, "page 6 of 6"));
    cr_assert_null(strstr(B.data, "rel=\"next\""));
    cr_assert_not_null(strstr(B.data, "rel=\"prev\""));
    buf_reset(&B);
    pages_profile_view newcomer = {"c-new", "newcomer", 1767000000};
    q.page = 0;
    cr_assert_eq(pages_profile(&B, &SITE, &q, &newcomer, ROWS, NROWS), PACER_OK);
    cr_assert_not_null(strstr(B.data, "0 of 1 published results to Bronze"));
    cr_assert_null(strstr(B.data, "class=\"honour\""), "no run, no honour");
    cr_assert_null(strstr(B.data, " earned\""));
}

Test(pages, receipt_page_shows_every_attempt_field_escaped) {
    json_t *doc = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:i,s:i,s:s,s:b},s:{s:s,s:s},s:{s:s},s:{s:s,s:[{s:s}]},"
                            "s:{s:i},s:b,s:[s],s:[{s:s,s:s,s:s,s:f,s:i,s:f,s:i,s:n,s:[],s:[{s:i,s:b,s:n,s:s,s:s,"
                            "s:s,s:i,s:s,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:n,s:n,s:s}]}]}",
                            "run_id", "20260101T000000Z-00000000", "mode", "managed", "model", "id", EVIL_IMG,
                            "revision", "abc", "suite", "id", V2, "version", 2, "rule_version", 2, "digest", D2,
                            "standard", 1, "backend", "name", "cuda", "source", "attested", "platform", "name",
                            "linux", "hardware", "source", "probed", "gpus", "name", EVIL_NAME, "settings",
                            "repetitions", 5, "ranked", 1, "unranked_reasons", "none", "cells", "workload", "chat",
                            "setting", "greedy", "route", "chat", "temperature", 0.0, "top_k", 0, "top_p", 0.0,
                            "max_tokens", 256, "aggregates", "reasons", "attempts", "index", 1, "warmup", 0, "seed",
                            "route", "chat", "status", "ok", "reason", "", "http_status", 200, "finish_reason",
                            "<length>", "has_usage", 1, "prompt_tokens", 8, "completion_tokens", 256,
                            "first_text_ns", 1000000, "duration_ns", 9000000, "delivery_span_ns", 8000000,
                            "deliveries", 255, "output_bytes", 1000, "stream_tok_s", 31.875, "server_prompt_ms",
                            "server_tok_s", "token_hash", "");
    cr_assert_not_null(doc);
    json_t *reasons = json_pack("[s]", EVIL_IMG);
    pages_receipt_view v = {&ROWS[3], "pending-review", reasons, doc, true, "tok-1"};
    cr_assert_eq(pages_receipt(&B, &SITE, &v), PACER_OK);
    assert_safe(B.data);
    for (size_t f = 0; f < receipt_attempt_field_count; f++) {
        char th[160];
        snprintf(th, sizeof th, ">%s</th>", receipt_attempt_fields[f].name);
        cr_assert_not_null(strstr(B.data, th), "column %s", receipt_attempt_fields[f].name);
    }
    cr_assert_not_null(strstr(B.data, "&lt;length&gt;"));
    cr_assert_not_null(strstr(B.data, "<span class=\"state pending-review\">pending-review</span>"));
    cr_assert_not_null(strstr(B.data, "action=\"/r/s-0000000000000003/withdraw\""));
    cr_assert_not_null(strstr(B.data, "name=\"csrf\" value=\"tok-1\""));
    cr_assert_not_null(strstr(B.data, "30.0B total, dense"));
    buf_reset(&B);
    v.own = false;
    cr_assert_eq(pages_receipt(&B, &SITE, &v), PACER_OK);
    cr_assert_null(strstr(B.data, "/withdraw"), "only its contributor may withdraw");
    json_decref(reasons);
    json_decref(doc);
}

Test(pages, upload_form_and_answers) {
    pages_upload_view u = {"csrf\"<x>", EVIL_IMG, "c-0000000000000002", 1u << 20};
    cr_assert_eq(pages_upload(&B, &SITE, &u), PACER_OK);
    assert_safe(B.data);
    cr_assert_not_null(strstr(B.data, "enctype=\"multipart/form-data\""));
    cr_assert_not_null(strstr(B.data, "name=\"csrf\" value=\"csrf&quot;&lt;x&gt;\""));
    cr_assert_not_null(strstr(B.data, "data-max-bytes=\"1048576\""));
    cr_assert_not_null(strstr(B.data, "name=\"consent\" required"), "without the script, an explicit consent");
    buf_reset(&B);
    json_t *ok = json_pack("{s:s,s:s,s:s,s:[],s:b,s:i,s:i,s:s}", "id", "s-1", "state", "public", "url", "/r/s-1",
                           "reasons", "duplicate", 0, "uploads_today", 1, "quota", 5, "profile", "c-2");
    cr_assert_eq(pages_upload_result(&B, &SITE, 201, ok), PACER_OK);
    assert_safe(B.data);
    cr_assert_not_null(strstr(B.data, "id=\"result-url\" href=\"/r/s-1\""));
    cr_assert_not_null(strstr(B.data, "Uploads today: 1 of 5."));
    buf_reset(&B);
    json_t *bad = json_pack("{s:{s:s,s:s},s:[s]}", "error", "message", "receipt rejected: <bad>", "type",
                            "invalid_receipt", "reasons", EVIL_NAME);
    cr_assert_eq(pages_upload_result(&B, &SITE, 422, bad), PACER_OK);
    assert_safe(B.data);
    cr_assert_not_null(strstr(B.data, "Upload refused"));
    cr_assert_not_null(strstr(B.data, "receipt rejected: &lt;bad&gt;"));
    json_decref(ok);
    json_decref(bad);
    buf_reset(&B);
    cr_assert_eq(pages_error(&B, &SITE, 404, "Not found", EVIL_IMG), PACER_OK);
    assert_safe(B.data);
}

Test(pages, formatting) {
    char t[32];
    pages_format_number(123.456, t, sizeof t);
    cr_assert_str_eq(t, "123");
    pages_format_number(12.345, t, sizeof t);
    cr_assert_str_eq(t, "12.3");
    pages_format_number(0.0123, t, sizeof t);
    cr_assert_str_eq(t, "0.012");
    pages_format_number(12345, t, sizeof t);
    cr_assert_str_eq(t, "12.3k");
    pages_format_params(8030000000, t, sizeof t);
    cr_assert_str_eq(t, "8.03B");
    pages_format_params(494000000, t, sizeof t);
    cr_assert_str_eq(t, "494M");
    pages_format_params(671000000000, t, sizeof t);
    cr_assert_str_eq(t, "671B");
    pages_format_time(0, t, sizeof t);
    cr_assert_str_eq(t, "1970-01-01 00:00 UTC");
}
