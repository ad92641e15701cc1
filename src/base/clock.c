/* clock.c - monotonic time in nanoseconds, and UTC timestamps for receipts. */
#include "base/clock.h"

#include <errno.h>
#include <time.h>

int64_t clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double clock_now_s(void) { return (double)clock_now_ns() / 1e9; }

double clock_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void clock_utc_iso8601(char out[21]) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void clock_sleep_ns(int64_t ns) {
    if (ns <= 0) return;
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
    while (nanosleep(&req, &req) != 0 && errno == EINTR) {
    }
}
