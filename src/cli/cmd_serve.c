/* cmd_serve.c - 'pacer serve'. */
#include "cli/cli.h"

int cmd_serve(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'serve' is not available in this build yet");
    return 1;
}
