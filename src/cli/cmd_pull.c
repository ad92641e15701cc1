/* cmd_pull.c - 'pacer pull'. */
#include "cli/cli.h"

int cmd_pull(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'pull' is not available in this build yet");
    return 1;
}
