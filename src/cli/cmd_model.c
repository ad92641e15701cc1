/* cmd_model.c - 'pacer model'. */
#include "cli/cli.h"

int cmd_model(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'model' is not available in this build yet");
    return 1;
}
