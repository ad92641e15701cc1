/* log.h - leveled diagnostics on stderr. Diagnostics only: output meant for people
 * (tables, summaries, prompts) is printed by src/cli/. */
#ifndef PACER_LOG_H
#define PACER_LOG_H

typedef enum log_level { LOG_LEVEL_DEBUG = 0, LOG_LEVEL_INFO = 1, LOG_LEVEL_WARN = 2, LOG_LEVEL_ERROR = 3, LOG_LEVEL_OFF = 4 } log_level;

/* Sets the lowest level that is written. The initial level is WARN, or the value of
 * PACER_LOG (debug, info, warn, error, off) read on the first message. */
void log_set_level(log_level level);
log_level log_get_level(void);
/* Parses a level name; returns -1 when unknown. */
int log_level_parse(const char *name);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
