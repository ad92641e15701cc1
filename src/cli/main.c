/* main.c - pacer's entry point: dispatches to a subcommand from the table below. */
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/kernels.h"

static const cli_command cli_commands[] = {
    {"bench", cmd_bench, "run a benchmark suite (no MODEL: the demo)"},
    {"serve", cmd_serve, "serve a GGUF model with the embedded engine (OpenAI API)"},
    {"generate", cmd_generate, "one local generation with the embedded engine"},
    {"model", cmd_model, "model tools: synth, info, quantize"},
    {"pull", cmd_pull, "download a checkpoint into the Hugging Face cache"},
    {"probe", cmd_probe, "show the hardware facts a receipt records"},
    {"board", cmd_board, "the results board: receiver of published receipts, and its administration"},
    {"request", cmd_request, "send one measured streamed request, print the sample"},
    {"lab", cmd_lab, "lab suites for engine authors: fresh process per sample (lab run)"},
};

void cli_stop_signals(void (*handler)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

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

/* PACER_KERNELS=scalar|avx2|avxvnni|avx512|avx512vnni|amx runs the embedded engine at a lower kernel level than
 * this CPU's best (every level must give a working engine); a level the CPU lacks, or an
 * unknown name, is an error. Applies to every command, and so to the engine a managed run
 * starts (it inherits the environment). */
static int kernels_from_env(void) {
    const char *want = getenv("PACER_KERNELS");
    if (!want || !*want) return 0;
    int l = kern_level_by_name(want);
    if (l < 0) {
        cli_error("PACER_KERNELS=%s: expected scalar, avx2 or avx512 (or avxvnni, avx512vnni, amx)", want);
        return 1;
    }
    if (!kern_level_supported((kern_level)l)) {
        cli_error("PACER_KERNELS=%s: this CPU has no %s (its best is %s)", want, want, kern_level_name(kern_detect()));
        return 1;
    }
    kern_set_level((kern_level)l);
    return 0;
}

/* PACER_PREFETCH=l1|l2: where the engine's decode kernels prefetch the weights (kernels.h;
 * by default L2 on AMD CPUs, L1 elsewhere), to measure the other choice; anything else is an
 * error. Applies as PACER_KERNELS does. */
static int prefetch_from_env(void) {
    const char *want = getenv("PACER_PREFETCH");
    if (!want || !*want) return 0;
    int p = kern_prefetch_by_name(want);
    if (p < 0) {
        cli_error("PACER_PREFETCH=%s: expected l1 or l2", want);
        return 1;
    }
    kern_set_prefetch((kern_prefetch)p);
    return 0;
}

int main(int argc, char **argv) {
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are always printed with a '.' */
    if (kernels_from_env() || prefetch_from_env()) return 1;
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
