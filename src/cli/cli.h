/* cli.h - the subcommands of the pacer tool. Each lives in its own cmd_*.c file, parses its
 * own arguments, prints for people and returns the process exit status. */
#ifndef PACER_CLI_H
#define PACER_CLI_H

#include "base/version.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
} cli_command;

int cmd_bench(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_request(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_board(int argc, char **argv);

/* Routes SIGINT, SIGTERM and SIGHUP to `handler` (a command that cancels and saves). */
void cli_stop_signals(void (*handler)(int));

/* Prints "pacer: MESSAGE" on stderr (printf format). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
