/* launch.h - the lifecycle of a server pacer starts itself: a free loopback port, a child
 * in its own process group with its output in a log file, readiness polling, and a stop
 * that reaches every process of that group and only that group. */
#ifndef PACER_LAUNCH_H
#define PACER_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"

typedef struct launch_server {
    pid_t pid;      /* also the process group id; 0 when not running */
    int port;
    bool exited;    /* reaped */
    int wait_status;
} launch_server;

/* Picks a TCP port that is free on 127.0.0.1 right now (bind to port 0). */
pacer_err launch_free_port(int *port);

/* Starts argv[0] (searched in PATH) with argv, in a new process group, stdin from
 * /dev/null, stdout and stderr appended to `log_path`. The child is killed if pacer
 * dies (PR_SET_PDEATHSIG, SIGKILL). `srv->port` is left for the caller to set. */
pacer_err launch_server_start(char *const argv[], const char *log_path, launch_server *srv, char *err, size_t err_len);

typedef enum launch_ready {
    LAUNCH_READY = 0,
    LAUNCH_DIED = 1,     /* the process exited before it was ready */
    LAUNCH_TIMEOUT = 2,
    LAUNCH_CANCELLED = 3,
} launch_ready;

/* Polls GET http://127.0.0.1:PORT/PATH every 100 ms until it answers 200, the process
 * exits, `timeout_s` passes or *cancel becomes non-zero. */
launch_ready launch_server_wait_ready(launch_server *srv, const char *path, double timeout_s,
                                      const volatile sig_atomic_t *cancel);

/* True while the process has not exited (reaps it when it has). */
bool launch_server_alive(launch_server *srv);

/* Stops the server's whole process group: SIGTERM, then SIGKILL after `grace_s` seconds
 * (0: SIGKILL at once). Returns when the leader is reaped and the group is empty. */
void launch_server_stop(launch_server *srv, double grace_s);

/* True while a live process of process group `pgid` exists (zombies waiting for init to
 * reap them do not count: they hold nothing and run nothing). */
bool launch_group_exists(pid_t pgid);

/* Appends the last `lines` lines of the file at `path` to `out`. */
pacer_err launch_log_tail(const char *path, int lines, buf *out);

/* Default start-up timeout: 600 s plus 6 s per GB of weights past 20 GB, at most 3600 s. */
double launch_startup_timeout_s(uint64_t weight_bytes);

#endif
