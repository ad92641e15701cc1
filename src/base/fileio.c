/* fileio.c - atomic file replacement and capped reads. */
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pacer_err write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return PACER_ERR_IO;
        p += w;
        n -= (size_t)w;
    }
    return PACER_OK;
}

pacer_err file_write_atomic(const char *path, const void *data, size_t n, mode_t mode) {
    char tmp[PATH_MAX];
    char dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) return PACER_ERR_ARG;
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return PACER_ERR_ARG;
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';

    pacer_err rc = PACER_OK;
    int fd = mkstemp(tmp);
    if (fd < 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    if (fchmod(fd, mode) != 0 || (rc = write_all(fd, data, n)) || fsync(fd) != 0) {
        if (!rc) rc = PACER_ERR_IO;
        close(fd);
        unlink(tmp);
        return rc;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return PACER_ERR_IO;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        if (fsync(dfd) != 0) rc = PACER_ERR_IO;
        close(dfd);
    }
    return rc;
}

pacer_err file_read_all(const char *path, buf *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    pacer_err rc = PACER_OK;
    char block[65536];
    for (;;) {
        ssize_t n = read(fd, block, sizeof block);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = PACER_ERR_IO;
            break;
        }
        if (n == 0) break;
        if ((rc = buf_append(out, block, (size_t)n))) break;
    }
    close(fd);
    return rc;
}

pacer_err dir_create_all(const char *path, mode_t mode) {
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return PACER_ERR_ARG;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, mode) != 0 && errno != EEXIST) return PACER_ERR_IO;
        *s = '/';
    }
    if (mkdir(p, mode) != 0 && errno != EEXIST) return PACER_ERR_IO;
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) return PACER_ERR_IO;
    return PACER_OK;
}

const char *path_home(void) {
    const char *h = getenv("HOME");
    if (h && *h) return h;
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_dir : NULL;
}
