/* cmd_request.c - 'pacer request'. */
#include "cli/cli.h"

int cmd_request(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'request' is not available in this build yet");
    return 1;
}
