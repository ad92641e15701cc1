/* main.c - pacer's entry point: dispatches to a subcommand from the table below. */
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command cli_commands[] = {
    {"bench", cmd_bench, "run a benchmark suite (no MODEL: the demo)"},
    {"serve", cmd_serve, "serve a GGUF model with the embedded engine (OpenAI API)"},
    {"generate", cmd_generate, "one local generation with the embedded engine"},
    {"model", cmd_model, "model tools: synth, info, quantize"},
    {"pull", cmd_pull, "download a checkpoint into the Hugging Face cache"},
    {"probe", cmd_probe, "show the hardware facts a receipt records"},
    {"request", cmd_request, "send one measured streamed request, print the sample"},
};

void cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("pacer: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void usage(FILE *f) {
    fprintf(f, "pacer %s - honest, reproducible LLM generation-speed benchmarks\n\n"
               "usage: pacer COMMAND [ARGS]\n\n", PACER_VERSION);
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++)
        fprintf(f, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fprintf(f, "\n'pacer COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv) {
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are always printed with a '.' */
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("pacer %s\n", PACER_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++)
        if (strcmp(argv[1], cli_commands[i].name) == 0) return cli_commands[i].run(argc - 1, argv + 1);
    cli_error("unknown command '%s' (see 'pacer --help')", argv[1]);
    return 1;
}
