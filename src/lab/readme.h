/* readme.h - README.md of a lab run: what was run (suite, model, engine, configurations,
 * workloads and caps, rounds), where (the hardware facts), the headline table (decode
 * tok/s per workload and configuration), the notes kept verbatim, and how to reproduce it
 * (the recorded command line, its paths as placeholders). Pure: report.json in, Markdown
 * out. */
#ifndef PACER_LAB_README_H
#define PACER_LAB_README_H

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

#define LAB_README_FILE "README.md"

pacer_err lab_readme_markdown(buf *out, const json_t *report);

#endif
