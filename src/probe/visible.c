/* visible.c - the *_VISIBLE_DEVICES rules that decide which GPUs a run can see: plain
 * indices or GPU- UUID prefixes, the list ending at the first invalid entry, repeats
 * skipped, one pair of quotes dropped. Pure: values in, positions out. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

/* A plain index: digits only, no sign, no blank, no leading zero ("0" itself is fine). */
static bool entry_index(const char *e, size_t len, size_t *idx) {
    if (len == 0 || len > 9) return false;
    if (e[0] == '0' && len > 1) return false;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)e[i])) return false;
        v = v * 10 + (size_t)(e[i] - '0');
    }
    *idx = v;
    return true;
}

size_t probe_visible_apply(const char *value, const char *const *uuids, size_t n, size_t *kept,
                           bool *partial) {
    size_t count = 0;
    *partial = false;
    if (!value) {
        for (size_t i = 0; i < n; i++) kept[count++] = i;
        return count;
    }
    size_t len = strlen(value);
    if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
        value++;
        len -= 2;
    }
    bool uuid_missing = false; /* some GPU has no printed Uuid: a GPU- entry may name it */
    for (size_t i = 0; i < n; i++) uuid_missing |= !uuids[i] || !uuids[i][0];
    for (size_t pos = 0; pos < len;) {
        size_t end = pos;
        while (end < len && value[end] != ',') end++;
        const char *e = value + pos;
        size_t elen = end - pos;
        size_t idx = n;
        if (entry_index(e, elen, &idx)) {
            if (idx >= n) break; /* one past the last GPU ends the list */
        } else if (elen > 4 && strncmp(e, "GPU-", 4) == 0) {
            for (size_t i = 0; i < n && idx == n; i++)
                if (uuids[i] && strlen(uuids[i]) >= elen && strncmp(uuids[i], e, elen) == 0) idx = i;
            if (idx == n) {
                if (uuid_missing) *partial = true; /* cannot tell which GPU it named */
                break;
            }
        } else {
            break; /* the first invalid entry ends the list */
        }
        bool repeated = false;
        for (size_t k = 0; k < count; k++) repeated |= kept[k] == idx;
        if (!repeated) kept[count++] = idx;
        pos = end + 1;
    }
    return count;
}

const char *probe_rocm_visible_value(const char *hip, const char *cuda) {
    if (hip && strcmp(hip, "\"\"") != 0) return hip;
    return cuda;
}
