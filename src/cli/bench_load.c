/* bench_load.c - parsing of the load-sweep options of `pacer bench`; numbers are parsed as
 * what they are (seeds as 64-bit integers, counts as integers), lists split at commas. */
#include "cli/bench_load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Splits "1,4,16" into values; every one must parse whole and be finite. */
static int parse_levels(const char *list, load_options *lo) {
    char tmp[512];
    if (snprintf(tmp, sizeof tmp, "%s", list) >= (int)sizeof tmp) return -1;
    char *save = NULL;
    lo->n_levels = 0;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        double v = strtod(t, &end);
        if (end == t || *end || errno || !isfinite(v) || lo->n_levels >= LOAD_MAX_LEVELS) return -1;
        lo->levels[lo->n_levels++] = v;
    }
    return lo->n_levels > 0 ? 0 : -1;
}

int bench_load_option(bench_load_cli *lc, int code, const char *arg) {
    load_options *lo = &lc->lo;
    char *end;
    errno = 0;
    switch (code) {
    case BENCH_OPT_CONCURRENCY:
    case BENCH_OPT_RATE:
        if (lo->n_levels) { cli_error("give one of --concurrency and --rate, once"); return -1; }
        lo->kind = code == BENCH_OPT_RATE ? LOAD_RATE : LOAD_CONCURRENCY;
        if (parse_levels(arg, lo)) {
            cli_error("--%s: expected a list like %s (at most %d values)", code == BENCH_OPT_RATE ? "rate" : "concurrency",
                      code == BENCH_OPT_RATE ? "0.5,2,8" : "1,4,16,64,256", LOAD_MAX_LEVELS);
            return -1;
        }
        break;
    case BENCH_OPT_REQUESTS: {
        long long v = strtoll(arg, &end, 10);
        if (end == arg || *end || errno || v < 1 || v > LOAD_MAX_REQUESTS) {
            cli_error("--requests: expected 1..%d", LOAD_MAX_REQUESTS);
            return -1;
        }
        lo->requests = v;
        break;
    }
    case BENCH_OPT_DURATION:
        lo->duration_s = strtod(arg, &end);
        if (end == arg || *end || errno || !(lo->duration_s > 0) || lo->duration_s > 86400) {
            cli_error("--duration: expected seconds, more than 0 and at most 86400");
            return -1;
        }
        break;
    case BENCH_OPT_SEED: {
        unsigned long long v = strtoull(arg, &end, 10);
        if (end == arg || *end || errno || arg[0] == '-' || v > INT64_MAX) {
            cli_error("--seed: expected an integer 0..%" PRId64, INT64_MAX);
            return -1;
        }
        lo->seed = v;
        lc->seed_given = true;
        break;
    }
    case BENCH_OPT_SLO:
        if (load_slo_parse(arg, &lo->slo)) {
            cli_error("--slo: expected ttft=MS,itl=MS (either or both, milliseconds > 0)");
            return -1;
        }
        break;
    case BENCH_OPT_CALIBRATION:
        lo->calibration_ms = strtod(arg, &end);
        if (end == arg || *end || errno || !(lo->calibration_ms > 0) || lo->calibration_ms > 60000) {
            cli_error("--calibration-ms: expected milliseconds, more than 0 and at most 60000");
            return -1;
        }
        break;
    case BENCH_OPT_WORKLOAD:
        lc->workload = arg;
        break;
    case BENCH_OPT_REALTIME:
        lo->realtime = true;
        break;
    case BENCH_OPT_BUSY_POLL:
        lo->busy_poll = true;
        break;
    default:
        return 0;
    }
    lc->any = true;
    return 1;
}

int bench_load_finish(bench_load_cli *lc) {
    load_options *lo = &lc->lo;
    if (!lo->n_levels) {
        cli_error("--requests, --duration, --seed, --slo, --calibration-ms, --workload, --realtime and --busy-poll belong to a load sweep: "
                  "add --concurrency LIST or --rate LIST");
        return -1;
    }
    if (lc->seed_given && lo->kind != LOAD_RATE) {
        cli_error("--seed sets the arrival schedule of --rate levels");
        return -1;
    }
    char err[200];
    if (load_options_check(lo, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

void bench_load_progress(void *ctx, int level, int n_levels, double value, int64_t done, int64_t planned,
                         const attempt_sample *s) {
    const bench_load_cli *lc = ctx;
    char plan[32] = "";
    if (planned > 0) snprintf(plan, sizeof plan, "/%lld", (long long)planned);
    fprintf(stderr, "\r\033[K[level %d/%d: %s %g] %lld%s done  last: %s", level + 1, n_levels,
            lc->lo.kind == LOAD_RATE ? "rate" : "concurrency", value, (long long)done, plan, attempt_status_name(s->status));
    fflush(stderr);
}
