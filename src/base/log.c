/* log.c - leveled diagnostics on stderr, one line per message, written with one write(). */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_level_current = -1;

static const char *const log_level_names[] = {"debug", "info", "warn", "error", "off"};

int log_level_parse(const char *name) {
    for (int i = 0; i <= LOG_LEVEL_OFF; i++)
        if (name && strcmp(name, log_level_names[i]) == 0) return i;
    return -1;
}

void log_set_level(log_level level) { log_level_current = (int)level; }

log_level log_get_level(void) {
    if (log_level_current < 0) {
        int l = log_level_parse(getenv("PACER_LOG"));
        log_level_current = l < 0 ? LOG_LEVEL_WARN : l;
    }
    return (log_level)log_level_current;
}

void log_msg(log_level level, const char *fmt, ...) {
    if (level < log_get_level() || level >= LOG_LEVEL_OFF) return;
    char line[2048];
    int n = snprintf(line, sizeof line, "pacer: %s: ", log_level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
