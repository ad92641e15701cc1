/* runlog.c - the run's local directory and its append-only server log. */
#include "bench/runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/fileio.h"

pacer_err runlog_dir(const char *run_id, char *out, size_t out_n) {
    if (!run_id || !*run_id || run_id[0] == '.' || strchr(run_id, '/')) return PACER_ERR_ARG;
    const char *home = path_home();
    if (!home) return PACER_ERR_NOT_FOUND;
    return snprintf(out, out_n, "%s/" RUNLOG_ROOT "/%s", home, run_id) < (int)out_n ? PACER_OK : PACER_ERR_ARG;
}

pacer_err runlog_server_path(const char *run_id, char *out, size_t out_n) {
    pacer_err rc = runlog_dir(run_id, out, out_n);
    size_t n = strlen(out);
    if (!rc && snprintf(out + n, out_n - n, "/" RUNLOG_SERVER_FILE) >= (int)(out_n - n)) rc = PACER_ERR_ARG;
    return rc;
}

pacer_err runlog_append(const char *path, const char *header, const char *text, size_t n) {
    char dir[PATH_MAX];
    if (!path || snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return PACER_ERR_ARG;
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (dir_create_all(dir, 0700)) return PACER_ERR_IO;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return PACER_ERR_IO;
    /* one write per entry: entries of concurrent writers do not interleave */
    struct iovec iov[5] = {{"== ", 3}, {(void *)header, strlen(header)}, {"\n", 1}, {(void *)text, n}, {"\n", 1}};
    size_t want = 0;
    for (int i = 0; i < 5; i++) want += iov[i].iov_len;
    ssize_t w;
    do w = writev(fd, iov, 5);
    while (w < 0 && errno == EINTR);
    pacer_err rc = w == (ssize_t)want ? PACER_OK : PACER_ERR_IO;
    if (close(fd) != 0) rc = PACER_ERR_IO;
    return rc;
}
