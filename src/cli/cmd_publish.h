/* cmd_publish.h - 'pacer bench publish | login | logout', and the two halves of
 * 'pacer bench ... --publish' (the refusals before the run, the upload after it). */
#ifndef PACER_CLI_CMD_PUBLISH_H
#define PACER_CLI_CMD_PUBLISH_H

#include <stdbool.h>

#include <jansson.h>

#include "bench/publish.h"
#include "bench/suite.h"

/* argv[0] is "publish", "login" or "logout". */
int bench_publish(int argc, char **argv);
int bench_login(int argc, char **argv);
int bench_logout(int argc, char **argv);

/* What 'bench --publish' settled before the run. */
typedef struct cli_publish {
    char url[PUBLISH_URL_MAX];
    json_t *caps;
    bool yes;
} cli_publish;

/* Before any run: the board URL (`upload_url` or the one logged into), its capabilities,
 * and the refusals that can be known already (a local model, the suite, a declared
 * backend), then that a token exists. Returns 0, or 1 after saying why. */
int cli_publish_before_run(cli_publish *p, const char *upload_url, const suite *s, const char *backend,
                           const char *model_spec, bool managed, bool yes);
/* After the receipt at `path` was saved: publishes it. Returns 0 when the board took it. */
int cli_publish_after_run(cli_publish *p, const char *path, const json_t *receipt);
void cli_publish_free(cli_publish *p);

#endif
