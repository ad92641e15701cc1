/* svg.h - the SVG of an answer: extracted from the text, then checked with expat. Valid
 * means well-formed XML with an <svg> root element, no script (no <script> element, no
 * on* event attribute, no javascript: URL) and no external reference (every href, src and
 * url(...) points inside the document, or is a data: image that is not SVG; no external
 * entity). Entity expansion is bounded by expat's amplification limits. Pure. */
#ifndef PACER_LAB_SVG_H
#define PACER_LAB_SVG_H

#include <stdbool.h>
#include <stddef.h>

#define LAB_SVG_MAX_BYTES (4u << 20) /* larger answers are refused unread */
#define LAB_SVG_REASON_MAX 160

typedef struct lab_svg {
    bool found;       /* the answer holds "<svg" */
    size_t start, len;/* the extracted span: from an XML declaration or DOCTYPE just before
                       * the first <svg (when there is one) to the end of the last </svg>, or
                       * to the end of the text when no </svg> follows */
    bool valid;
    char reason[LAB_SVG_REASON_MAX]; /* why not valid; "" when valid */
} lab_svg;

/* Extracts and checks the SVG of answer[0..n). Always fills `out`. */
void lab_svg_check(const char *answer, size_t n, lab_svg *out);

#endif
