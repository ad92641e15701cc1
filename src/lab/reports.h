/* reports.h - everything a lab run shows, regenerated from its saved files without
 * inference: report.json (canonical, byte for byte what the run wrote), summary.md, the
 * plots and gallery/index.html. README.md is left as it is. A directory whose samples fail
 * their own checks (answer hash, the id their fields make, a plan entry, the signature's
 * selections and caps) is refused and nothing is written. */
#ifndef PACER_LAB_REPORTS_H
#define PACER_LAB_REPORTS_H

#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

/* Reads run.json and every sample of its plan that has a record (the others are pending),
 * checks them and builds report.json (new reference in *report). PACER_ERR_FORMAT with the
 * sample named when one fails its checks. */
pacer_err lab_reports_load(const char *dir, json_t **report, char *err, size_t err_len);
/* lab_reports_load, then writes report.json, summary.md, plots/ and gallery/ atomically.
 * `report` (may be NULL) receives the report. */
pacer_err lab_reports_write(const char *dir, json_t **report, char *err, size_t err_len);

/* lab_reports_load, then writes README.md (readme.h) atomically, replacing any there. */
pacer_err lab_reports_write_readme(const char *dir, char *err, size_t err_len);

#endif
