/* gallery.h - gallery/index.html: a local preview of a lab run, every answer and every SVG
 * grouped by workload and configuration, each with its sample's figures. One
 * self-contained page (its own style, no script, no network: a Content-Security-Policy
 * allows images from the results directory only); drawings and plots are shown through
 * <img src> from their files, never inlined, so a drawing cannot run script; every answer
 * and name is HTML-escaped. */
#ifndef PACER_LAB_GALLERY_H
#define PACER_LAB_GALLERY_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

/* Appends the page for report.json `report` of the results directory `dir` (answers and
 * drawings are read from there; each drawing is checked again with lab_svg_check and shown
 * as invalid, with the reason, when its record or the check says so). */
pacer_err lab_gallery_html(buf *out, const char *dir, const json_t *report, char *err, size_t err_len);

#endif
