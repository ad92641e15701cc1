/* cmd_generate.c - 'pacer generate'. */
#include "cli/cli.h"

int cmd_generate(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'generate' is not available in this build yet");
    return 1;
}
