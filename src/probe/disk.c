/* disk.c - the volume that holds the model (capacity, free space) and the uncached read
 * sample: the model file read with O_DIRECT, or after posix_fadvise(DONTNEED) where the
 * file system refuses O_DIRECT, so the figure is the device's and not the page cache's; where
 * the pages cannot be dropped (tmpfs) there is no figure, only the reason. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
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

/* Fraction (0..1) of the first `len` bytes of `fd` that sit in the page cache right now;
 * -1 when it cannot be told. */
static double cached_fraction(int fd, uint64_t len) {
    if (len == 0) return 0;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return -1;
    void *map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return -1;
    size_t pages = (size_t)((len + (uint64_t)page - 1) / (uint64_t)page);
    unsigned char *vec = malloc(pages);
    double frac = -1;
    if (vec && mincore(map, (size_t)len, vec) == 0) {
        size_t resident = 0;
        for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
        frac = (double)resident / (double)pages;
    }
    free(vec);
    munmap(map, (size_t)len);
    return frac;
}

/* The sample itself; *why (when not NULL) gets the reason token of a refusal or failure. */
static pacer_err read_sample_take(const char *path, uint64_t max_bytes, probe_read_sample *out, const char **why) {
    const char *unused;
    if (!why) why = &unused;
    *why = "cannot-read";
    pacer_err rc = PACER_OK;
    void *block = NULL;
    if (!path || !out) return PACER_ERR_ARG;
    if (max_bytes == 0) max_bytes = SAMPLE_DEFAULT_MAX;
    out->method = "o_direct";
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0 && errno == EINVAL) { /* tmpfs and some others: drop the cached pages instead */
        out->method = "fadvise";
        fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        if (errno == ENOENT) *why = "not-found";
        return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    }
    /* dirty pages are written back first: an O_DIRECT read would wait for them, and
     * posix_fadvise cannot drop them; neither belongs in the figure */
    fdatasync(fd);
    /* memory file systems take O_DIRECT (tmpfs since Linux 6.6) but have no device behind */
    struct statfs sf;
    if (fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)) {
        *why = "memory-file-system";
        rc = PACER_ERR_STATE;
        goto out;
    }
    if (out->method[0] == 'f') {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        struct stat st;
        uint64_t len = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
        if (len > max_bytes) len = max_bytes;
        /* pages that stayed would give a memory figure under a disk's name: no sample
         * rather than a cached one */
        if (cached_fraction(fd, len) > 0.01) {
            *why = "pages-stay-cached";
            rc = PACER_ERR_STATE;
            goto out;
        }
    }
    if (posix_memalign(&block, SAMPLE_ALIGN, SAMPLE_BLOCK) != 0) {
        *why = "no-memory";
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

pacer_err probe_read_sample_take(const char *path, uint64_t max_bytes, probe_read_sample *out) {
    return read_sample_take(path, max_bytes, out, NULL);
}

json_t *probe_read_sample_json(const char *path, uint64_t max_bytes) {
    probe_read_sample rs = {0};
    const char *why = NULL;
    pacer_err rc = read_sample_take(path, max_bytes, &rs, &why);
    if (rc == PACER_OK && (rs.bytes == 0 || rs.seconds <= 0)) {
        rc = PACER_ERR_STATE;
        why = rs.bytes == 0 ? "empty-file" : "too-fast-to-time";
    }
    if (rc) return json_pack("{s:n, s:n, s:n, s:s, s:s}", "bytes", "seconds", "gb_per_s", "method", "none", "skipped", why);
    return json_pack("{s:I, s:f, s:f, s:s}", "bytes", (json_int_t)rs.bytes, "seconds", rs.seconds, "gb_per_s",
                     (double)rs.bytes / rs.seconds / 1e9, "method", rs.method);
}
