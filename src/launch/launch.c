/* launch.c - spawn, readiness, stop of a managed server process group. */
#include "launch/launch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"

pacer_err launch_free_port(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return PACER_ERR_IO;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    pacer_err rc = PACER_OK;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        rc = PACER_ERR_IO;
    else
        *port = ntohs(a.sin_port);
    close(fd);
    return rc;
}

pacer_err launch_server_start(char *const argv[], const char *log_path, launch_server *srv, char *err, size_t err_len) {
    int logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0) {
        snprintf(err, err_len, "cannot create the engine log %s: %s", log_path, strerror(errno));
        return PACER_ERR_IO;
    }
    /* a pipe tells the parent whether exec succeeded (it closes on exec) */
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0) {
        close(logfd);
        snprintf(err, err_len, "pipe: %s", strerror(errno));
        return PACER_ERR_IO;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(logfd);
        close(ep[0]);
        close(ep[1]);
        snprintf(err, err_len, "fork: %s", strerror(errno));
        return PACER_ERR_IO;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* pacer gone (e.g. a second Ctrl-C): no orphan */
        if (getppid() != parent) _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(ep[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid); /* also in the parent: no race with the first signal */
    close(ep[1]);
    close(logfd);
    int e = 0;
    ssize_t n;
    do n = read(ep[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(ep[0]);
    srv->pid = pid;
    srv->exited = false;
    srv->wait_status = 0;
    if (n == (ssize_t)sizeof e) {
        waitpid(pid, &srv->wait_status, 0);
        srv->exited = true;
        srv->pid = 0;
        snprintf(err, err_len, "cannot run %s: %s", argv[0], strerror(e));
        return e == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    }
    return PACER_OK;
}

bool launch_server_alive(launch_server *srv) {
    if (srv->pid <= 0 || srv->exited) return false;
    pid_t r = waitpid(srv->pid, &srv->wait_status, WNOHANG);
    if (r == srv->pid) {
        srv->exited = true;
        return false;
    }
    return true;
}

static size_t discard_cb(char *p, size_t s, size_t n, void *u) {
    (void)p;
    (void)u;
    return s * n;
}

launch_ready launch_server_wait_ready(launch_server *srv, const char *path, double timeout_s,
                                      const volatile sig_atomic_t *cancel) {
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", srv->port, path);
    int64_t deadline = clock_now_ns() + (int64_t)(timeout_s * 1e9);
    CURL *c = curl_easy_init();
    launch_ready result = LAUNCH_TIMEOUT;
    for (;;) {
        if (cancel && *cancel) {
            result = LAUNCH_CANCELLED;
            break;
        }
        if (!launch_server_alive(srv)) {
            result = LAUNCH_DIED;
            break;
        }
        if (c) {
            curl_easy_reset(c);
            curl_easy_setopt(c, CURLOPT_URL, url);
            curl_easy_setopt(c, CURLOPT_PROXY, "");
            curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
            curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_cb);
            long code = 0;
            if (curl_easy_perform(c) == CURLE_OK && curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
                code == 200) {
                result = LAUNCH_READY;
                break;
            }
        }
        if (clock_now_ns() >= deadline) break;
        clock_sleep_ns(100000000);
    }
    if (c) curl_easy_cleanup(c);
    return result;
}

/* Reads the state and process group of /proc/PID/stat; false when it cannot. */
static bool proc_state(const char *pid, char *state, pid_t *pgrp) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0) return false;
    line[n] = '\0';
    const char *p = strrchr(line, ')'); /* the command name may hold anything but ends at the last ')' */
    int pg = 0;
    if (!p || sscanf(p + 1, " %c %*d %d", state, &pg) != 2) return false;
    *pgrp = (pid_t)pg;
    return true;
}

bool launch_group_exists(pid_t pgid) {
    if (pgid <= 0) return false;
    if (kill(-pgid, 0) != 0 && errno != EPERM) return false;
    /* the group answers: is a live member left, or only zombies that init has not reaped yet? */
    DIR *d = opendir("/proc");
    if (!d) return true;
    bool live = false;
    struct dirent *e;
    while (!live && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char state = 0;
        pid_t pg = 0;
        if (proc_state(e->d_name, &state, &pg) && pg == pgid && state != 'Z' && state != 'X') live = true;
    }
    closedir(d);
    return live;
}

void launch_server_stop(launch_server *srv, double grace_s) {
    if (srv->pid <= 0) return;
    pid_t pgid = srv->pid;
    kill(-pgid, grace_s > 0 ? SIGTERM : SIGKILL);
    int64_t deadline = clock_now_ns() + (int64_t)(grace_s * 1e9);
    for (;;) {
        launch_server_alive(srv);
        if (srv->exited && !launch_group_exists(pgid)) break;
        if (clock_now_ns() >= deadline) {
            kill(-pgid, SIGKILL);
            if (!srv->exited) {
                waitpid(pgid, &srv->wait_status, 0);
                srv->exited = true;
            }
            /* children of the leader are reparented; wait for the kill to land */
            for (int i = 0; i < 200 && launch_group_exists(pgid); i++) clock_sleep_ns(10000000);
            break;
        }
        clock_sleep_ns(20000000);
    }
    srv->pid = 0;
}

pacer_err launch_log_tail(const char *path, int lines, buf *out) {
    /* the last 64 KB hold the last lines of any log worth showing, however long the log */
    enum { TAIL_MAX = 64 * 1024 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    char *data = malloc(TAIL_MAX);
    pacer_err rc = data ? PACER_OK : PACER_ERR_NOMEM;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > TAIL_MAX ? size - TAIL_MAX : 0;
    ssize_t got = 0;
    while (!rc && from + got < size) {
        ssize_t n = pread(fd, data + got, (size_t)(size - from - got), from + got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += n;
    }
    close(fd);
    if (rc) return rc;
    size_t end = (size_t)got;
    while (end > 0 && data[end - 1] == '\n') end--;
    size_t start = end;
    int seen = 0;
    while (start > 0) {
        if (data[start - 1] == '\n' && ++seen == lines) break;
        start--;
    }
    rc = buf_append(out, data + start, end - start);
    free(data);
    return rc;
}

double launch_startup_timeout_s(uint64_t weight_bytes) {
    double gb = (double)weight_bytes / 1e9;
    double t = 600.0 + (gb > 20.0 ? (gb - 20.0) * 6.0 : 0.0);
    return t > 3600.0 ? 3600.0 : t;
}
