/* need.h - for unit tests that read reference data (../shared, the npm Llama-3 tokenizer):
 * where the data is absent the test is skipped visibly, except when CI=true, where it must
 * be present and its absence fails the test. Included by one test file each (static). */
#ifndef PACER_TEST_NEED_H
#define PACER_TEST_NEED_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool need_ci(void) {
    const char *ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}

/* Skips (or, with CI=true, fails) the calling test unless `path` is readable. */
#define NEED_FILE(path, what)                                                                 \
    do {                                                                                      \
        if (access((path), R_OK) != 0) {                                                      \
            if (need_ci()) cr_assert_fail("%s (%s) is absent, and CI=true needs it", (what), (path)); \
            cr_skip_test("%s is absent", (what));                                             \
        }                                                                                     \
    } while (0)

#endif
