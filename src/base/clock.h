/* clock.h - the one clock pacer measures with: CLOCK_MONOTONIC in nanoseconds (and in
 * seconds); the process's CPU time; UTC stamps. */
#ifndef PACER_CLOCK_H
#define PACER_CLOCK_H

#include <stdint.h>

/* Nanoseconds since an arbitrary fixed point; never goes backwards. */
int64_t clock_now_ns(void);
/* The same clock in seconds, for figures people read (benchmark programs, progress). */
double clock_now_s(void);
/* CPU time this process has used (user + system, all threads), in seconds. */
double clock_cpu_s(void);
/* Wall-clock UTC time as "YYYY-MM-DDTHH:MM:SSZ" (21 bytes with NUL). */
void clock_utc_iso8601(char out[21]);
/* Sleeps for `ns` nanoseconds, resuming after signals. */
void clock_sleep_ns(int64_t ns);

#endif
