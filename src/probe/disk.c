/* disk.c - the volume that holds the model (capacity, free space) and the uncached read
 * sample: the model file read with O_DIRECT, or after posix_fadvise(DONTNEED) where the
 * file system refuses O_DIRECT, so the figure is the device's and not the page cache's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/clock.h"
#include "probe/probe_internal.h"

enum { SAMPLE_BLOCK = 4 << 20, SAMPLE_ALIGN = 4096 };
#define SAMPLE_DEFAULT_MAX (2000ull * 1000 * 1000) /* 2 GB */

pacer_err probe_volume_read(const char *path, uint64_t *capacity, uint64_t *free_bytes) {
    struct statvfs st;
    if (!path) return PACER_ERR_ARG;
    if (statvfs(path, &st) != 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    *capacity = (uint64_t)st.f_blocks * st.f_frsize;
    *free_bytes = (uint64_t)st.f_bavail * st.f_frsize;
    return PACER_OK;
}

pacer_err probe_read_sample_take(const char *path, uint64_t max_bytes, probe_read_sample *out) {
    pacer_err rc = PACER_OK;
    void *block = NULL;
    if (!path || !out) return PACER_ERR_ARG;
    if (max_bytes == 0) max_bytes = SAMPLE_DEFAULT_MAX;
    out->method = "o_direct";
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0 && errno == EINVAL) { /* tmpfs and some others: drop the cached pages instead */
        out->method = "fadvise";
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    if (fd < 0) return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    if (posix_memalign(&block, SAMPLE_ALIGN, SAMPLE_BLOCK) != 0) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    uint64_t total = 0;
    int64_t t0 = clock_now_ns();
    while (total < max_bytes) {
        ssize_t n = read(fd, block, SAMPLE_BLOCK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = PACER_ERR_IO;
            goto out;
        }
        if (n == 0) break;
        total += (uint64_t)n;
    }
    out->seconds = (double)(clock_now_ns() - t0) / 1e9;
    out->bytes = total < max_bytes ? total : max_bytes;
    /* leave nothing cached behind for the next reader either */
    if (out->method[0] == 'f') posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
out:
    free(block);
    close(fd);
    return rc;
}
