/* summary.h - summary.md, the lab run for people: its first line repeats the hardware facts
 * (so runs from different machines sit side by side), then one table per metric (prefill
 * tok/s, decode tok/s, completion time, answer tokens) with the configurations as columns,
 * each cell the median with its range and the samples excluded from it counted by why, then
 * the SVG validity rates apart, and links to the plots and the gallery. Pure: report.json
 * (report.h) in, Markdown out. */
#ifndef PACER_LAB_SUMMARY_H
#define PACER_LAB_SUMMARY_H

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

#define LAB_SUMMARY_FILE "summary.md"
#define LAB_GALLERY_FILE "gallery/index.html"

/* obj[key] when it is a string, else "" (reading report.json, whose fields may be null). */
const char *lab_str(const json_t *obj, const char *key);
/* Appends `s` for Markdown text and table cells: the characters Markdown gives a meaning
 * (| \ ` * [ ] < > & ~ and an '_' that could open or close emphasis) escaped with a
 * backslash, line breaks as spaces. Names of configurations, workloads and models go
 * through it, so that a '|' never splits a cell and markup is shown as written. */
pacer_err lab_md_escape(buf *out, const char *s);
/* Appends parts[0..n): the even ones as they are (the page's own text), the odd ones
 * through lab_md_escape (names and facts from outside). */
pacer_err lab_md_parts(buf *out, const char *const *parts, size_t n);
/* The hardware facts of the run on one line (no newline): CPU, threads, memory, GPUs, OS,
 * kernel, power. */
pacer_err lab_summary_hardware(buf *out, const json_t *report);
/* The same line from a hardware detail object (provenance.h) and the power state name. */
pacer_err lab_summary_hardware_of(buf *out, const json_t *detail, const char *power);
/* One metric's table (`metric` a key of a report cell's "metrics"), headed `title`. */
pacer_err lab_summary_table(buf *out, const json_t *report, const char *metric, const char *title);
/* The whole of summary.md. */
pacer_err lab_summary_markdown(buf *out, const json_t *report);

#endif
