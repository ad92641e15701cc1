/* json.c - canonical JSON encoding and typed getters. */
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"

static int json_buf_cb(const char *data, size_t n, void *ctx) {
    return buf_append(ctx, data, n) == PACER_OK ? 0 : -1;
}

pacer_err json_canonical_append(const json_t *v, buf *out) {
    if (!v) return PACER_ERR_ARG;
    size_t before = out->len;
    if (json_dump_callback(v, json_buf_cb, out, JSON_CANONICAL_FLAGS | JSON_ENCODE_ANY) != 0) {
        out->len = before;
        if (out->data) out->data[before] = '\0';
        return PACER_ERR_TOO_BIG;
    }
    return PACER_OK;
}

char *json_canonical_dump(const json_t *v) {
    return v ? json_dumps(v, JSON_CANONICAL_FLAGS | JSON_ENCODE_ANY) : NULL;
}

pacer_err json_canonical_sha256(const json_t *v, char out[65]) {
    char *s = json_canonical_dump(v);
    if (!s) return PACER_ERR_NOMEM;
    pacer_err rc = sha256_hex(s, strlen(s), out);
    free(s);
    return rc;
}

const char *json_get_str(const json_t *obj, const char *key, const char *def) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

int64_t json_get_int(const json_t *obj, const char *key, int64_t def) {
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

double json_get_num(const json_t *obj, const char *key, double def) {
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

bool json_get_bool(const json_t *obj, const char *key, bool def) {
    json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}
