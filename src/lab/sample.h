/* sample.h - one lab sample: a fresh engine process, one request to EOS under its cap,
 * checks during the answer (cycle, power source, memory; every check_every_s seconds and
 * once at the end), stop, then the record. No file is written here. */
#ifndef PACER_LAB_SAMPLE_H
#define PACER_LAB_SAMPLE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "lab/engine.h"
#include "lab/plan.h"
#include "lab/record.h"
#include "lab/suite.h"
#include "lab/svg.h"
#include "probe/probe.h"

#define LAB_ANSWER_MAX (64u << 20) /* an answer longer than this ends the sample as an error */

typedef struct lab_sample_job {
    const lab_suite *suite;
    const lab_slot *slot;
    int cap;                        /* max_tokens sent */
    lab_engine *engine;             /* the configuration's, prepared; started here */
    const char *store_path;         /* its store, watched for a rebuild during the sample */
    power_watch *power;             /* the run's watch, started before the first sample */
    bool has_memory_limit;
    int64_t memory_limit_bytes;     /* physical memory */
    const volatile sig_atomic_t *cancel;
} lab_sample_job;

typedef struct lab_sample_result {
    lab_record rec;                 /* answer_file and answer_sha256 are left to the writer */
    buf answer;                     /* the answer text as delivered */
    lab_svg svg;                    /* for svg workloads: the extracted span of `answer` */
    bool stop_suite;                /* an engine error, a memory overrun or a power change */
    bool cancelled;                 /* the user stopped the run during this sample: no record */
} lab_sample_result;

/* Runs the sample; `out` is always initialized (free with lab_sample_result_free). */
void lab_sample_run(const lab_sample_job *job, lab_sample_result *out);
void lab_sample_result_free(lab_sample_result *r);

#endif
