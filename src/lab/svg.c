/* svg.c - extraction of an answer's SVG and its check with expat (namespace-aware, so
 * "svg:svg" and xlink:href are seen by their local names). The first problem found stops
 * the parser and becomes the reason. */
#include "lab/svg.h"

#include <ctype.h>
/* Debian's libexpat is built with DTD support; the header declares the amplification
 * limits only when told so. */
#define XML_DTD
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Entity expansion: expat stops a document whose expanded size passes this multiple of its
 * input once it has produced more than the threshold (its defaults are 100x and 8 MiB, far
 * above what a drawing needs). */
#define SVG_MAX_AMPLIFICATION 10.0f
#define SVG_AMPLIFICATION_THRESHOLD (64u << 10)
#define SVG_STYLE_MAX (256u << 10)

typedef struct svg_state {
    XML_Parser p;
    int depth;
    bool failed;
    char reason[LAB_SVG_REASON_MAX];
    int in_style;              /* depth of an open <style>, 0 when none */
    char style[SVG_STYLE_MAX]; /* text of the current <style> element (truncated) */
    size_t style_len;
} svg_state;

static void svg_fail(svg_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void svg_fail(svg_state *st, const char *fmt, ...) {
    if (st->failed) return;
    st->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->reason, sizeof st->reason, fmt, ap);
    va_end(ap);
    XML_StopParser(st->p, XML_FALSE);
}

/* The local part of a namespace-expanded name ("URI NAME" -> "NAME"). */
static const char *local_name(const char *name) {
    const char *sp = strrchr(name, ' ');
    return sp ? sp + 1 : name;
}

static const char *skip_space(const char *s) {
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* A reference that stays inside the document: a fragment, or a data: image other than SVG. */
static bool internal_ref(const char *v) {
    v = skip_space(v);
    if (*v == '#') return true;
    if (strncasecmp(v, "data:image/", 11) == 0) return strncasecmp(v + 11, "svg", 3) != 0;
    return false;
}

/* Checks every url(...) and @import in CSS text; returns the offending text or NULL. */
static const char *css_external(const char *css) {
    for (const char *p = css; (p = strcasestr(p, "url(")) != NULL; p += 4) {
        const char *v = skip_space(p + 4);
        if (*v == '"' || *v == '\'') v++;
        if (!internal_ref(v)) return p;
    }
    return strcasestr(css, "@import");
}

static void check_attr(svg_state *st, const char *elem, const char *name, const char *value) {
    const char *ln = local_name(name);
    if (strncasecmp(ln, "on", 2) == 0) {
        svg_fail(st, "script: event attribute %.40s on <%.40s>", ln, elem);
    } else if (strcasestr(value, "javascript:")) {
        svg_fail(st, "script: a javascript: URL in %.40s of <%.40s>", ln, elem);
    } else if ((strcmp(ln, "href") == 0 || strcmp(ln, "src") == 0) && !internal_ref(value)) {
        svg_fail(st, "external reference: %.40s=\"%.50s\" on <%.40s>", ln, value, elem);
    } else if (css_external(value)) {
        svg_fail(st, "external reference: url() or @import in %.40s of <%.40s>", ln, elem);
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
    svg_state *st = ud;
    const char *ln = local_name(name);
    if (st->depth == 0) {
        const char *sp = strrchr(name, ' ');
        bool svg_ns = !sp || (size_t)(sp - name) == strlen("http://www.w3.org/2000/svg");
        if (strcmp(ln, "svg") != 0 || !svg_ns) svg_fail(st, "the root element is <%.60s>, not <svg>", ln);
    }
    st->depth++;
    if (strcasecmp(ln, "script") == 0) svg_fail(st, "script: a <script> element");
    for (size_t i = 0; attrs[i] && attrs[i + 1] && !st->failed; i += 2) check_attr(st, ln, attrs[i], attrs[i + 1]);
    if (strcasecmp(ln, "style") == 0 && !st->in_style) {
        st->in_style = st->depth;
        st->style_len = 0;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
    svg_state *st = ud;
    (void)name;
    if (st->in_style == st->depth) {
        st->style[st->style_len] = '\0';
        if (css_external(st->style)) svg_fail(st, "external reference: url() or @import in <style>");
        st->in_style = 0;
    }
    st->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    svg_state *st = ud;
    if (!st->in_style || len <= 0) return;
    size_t room = sizeof st->style - 1 - st->style_len;
    size_t n = (size_t)len < room ? (size_t)len : room;
    memcpy(st->style + st->style_len, s, n);
    st->style_len += n;
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param, const XML_Char *value, int value_len,
                                   const XML_Char *base, const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation) {
    (void)is_param, (void)value, (void)value_len, (void)base, (void)public_id, (void)notation;
    if (system_id) svg_fail(ud, "external reference: entity %.40s names \"%.60s\"", name, system_id);
}

/* The span of the SVG in the answer; false when there is no "<svg". */
static bool svg_extract(const char *a, size_t n, size_t *start, size_t *len) {
    const char *svg = memmem(a, n, "<svg", 4);
    if (!svg) return false;
    size_t s = (size_t)(svg - a);
    /* an XML declaration or a DOCTYPE before it belongs to the document */
    const char *prolog[] = {"<?xml", "<!DOCTYPE"};
    for (size_t i = 0; i < 2; i++) {
        const char *p = memmem(a, s, prolog[i], strlen(prolog[i]));
        if (p && (size_t)(p - a) < s) s = (size_t)(p - a);
    }
    size_t end = n;
    for (const char *p = a + s; (p = memmem(p, n - (size_t)(p - a), "</svg>", 6)) != NULL; p += 6) end = (size_t)(p - a) + 6;
    *start = s;
    *len = end - s;
    return true;
}

void lab_svg_check(const char *answer, size_t n, lab_svg *out) {
    memset(out, 0, sizeof *out);
    if (n > LAB_SVG_MAX_BYTES) {
        snprintf(out->reason, sizeof out->reason, "the answer is larger than %u bytes", LAB_SVG_MAX_BYTES);
        return;
    }
    if (!svg_extract(answer, n, &out->start, &out->len)) {
        snprintf(out->reason, sizeof out->reason, "no <svg> element in the answer");
        return;
    }
    out->found = true;
    svg_state *st = calloc(1, sizeof *st);
    if (!st || !(st->p = XML_ParserCreateNS(NULL, ' '))) {
        free(st);
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return;
    }
    XML_SetUserData(st->p, st);
    XML_SetElementHandler(st->p, on_start, on_end);
    XML_SetCharacterDataHandler(st->p, on_text);
    XML_SetEntityDeclHandler(st->p, on_entity_decl);
    XML_SetParamEntityParsing(st->p, XML_PARAM_ENTITY_PARSING_NEVER);
    XML_SetBillionLaughsAttackProtectionMaximumAmplification(st->p, SVG_MAX_AMPLIFICATION);
    XML_SetBillionLaughsAttackProtectionActivationThreshold(st->p, SVG_AMPLIFICATION_THRESHOLD);
    enum XML_Status s = XML_Parse(st->p, answer + out->start, (int)out->len, XML_TRUE);
    if (!st->failed && s != XML_STATUS_OK) {
        enum XML_Error e = XML_GetErrorCode(st->p);
        snprintf(st->reason, sizeof st->reason, "not well-formed: %s at line %lu", XML_ErrorString(e),
                 (unsigned long)XML_GetCurrentLineNumber(st->p));
        st->failed = true;
    }
    XML_ParserFree(st->p);
    out->valid = !st->failed;
    snprintf(out->reason, sizeof out->reason, "%s", st->reason);
    free(st);
}
