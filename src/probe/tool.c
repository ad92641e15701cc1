/* tool.c - the thin readers' I/O: running a system tool (nvidia-smi, rocminfo, sysctl)
 * with a deadline and a capped output, and reading files under a test root. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "probe/probe_internal.h"

/* The runner of both: stderr to /dev/null, or into the same pipe as stdout. */
static pacer_err tool_run(const char *const *argv, int timeout_ms, bool merge_stderr, buf *out) {
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return PACER_ERR_IO;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return PACER_ERR_IO;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 2);
        }
        dup2(pipefd[1], 1);
        if (merge_stderr) dup2(pipefd[1], 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    pacer_err rc = PACER_OK;
    int64_t deadline = clock_now_ns() + (int64_t)timeout_ms * 1000000;
    char block[16384];
    for (;;) {
        int64_t left_ms = (deadline - clock_now_ns()) / 1000000;
        if (left_ms <= 0) {
            rc = PACER_ERR_TIMEOUT;
            break;
        }
        struct pollfd pfd = {.fd = pipefd[0], .events = POLLIN};
        int pr = poll(&pfd, 1, (int)left_ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue; /* the deadline check above ends it */
        ssize_t n = read(pipefd[0], block, sizeof block);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if ((rc = buf_append(out, block, (size_t)n))) break;
    }
    close(pipefd[0]);
    if (rc) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) rc = PACER_ERR_NOT_FOUND;
    return rc;
}

pacer_err probe_tool_run(const char *const *argv, int timeout_ms, buf *out) { return tool_run(argv, timeout_ms, false, out); }

pacer_err probe_command_run(const char *const *argv, int timeout_ms, bool merge_stderr, buf *out) {
    return tool_run(argv, timeout_ms, merge_stderr, out);
}

pacer_err probe_file_read(const char *sys_root, const char *path, buf *out) {
    char full[4096];
    if (snprintf(full, sizeof full, "%s%s", sys_root ? sys_root : "", path) >= (int)sizeof full) return PACER_ERR_ARG;
    return file_read_all(full, out);
}
