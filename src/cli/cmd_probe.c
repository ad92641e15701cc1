/* cmd_probe.c - 'pacer probe'. */
#include "cli/cli.h"

int cmd_probe(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_error("'probe' is not available in this build yet");
    return 1;
}
