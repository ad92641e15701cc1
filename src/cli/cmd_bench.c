/* cmd_bench.c - 'pacer bench'. */
#include "cli/cli.h"

int cmd_bench(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'bench' is not available in this build yet");
    return 1;
}
