/* schema/hardware.c - the hardware object's rows, its builder for attested facts and its
 * validator. */
#include "schema/hardware.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const hardware_field hardware_fields[] = {
    {"source", HW_TOKEN, 0},
    {"cpu", HW_OBJECT, HW_ATTESTED},
    {"cpu.model", HW_NAME, HW_ATTESTED},
    {"cpu.cores", HW_INT, HW_ATTESTED},
    {"cpu.threads", HW_INT, 0},
    {"cpu.features", HW_TOKENS, 0},
    {"cpu.source", HW_TOKEN, 0},
    {"memory_bytes", HW_INT, HW_ATTESTED},
    {"gpus", HW_OBJECTS, HW_ATTESTED},
    {"gpus[].name", HW_NAME, HW_ATTESTED},
    {"gpus[].memory_bytes", HW_INT, HW_ATTESTED},
    {"gpus[].cores", HW_INT, HW_ATTESTED},
    {"gpus[].vendor", HW_TOKEN, 0},
    {"gpus[].memory", HW_TOKEN, 0},
    {"gpus[].driver_version", HW_VERSION, 0},
    {"gpus[].compute_capability", HW_VERSION, 0},
    {"gpus[].power_limit_w", HW_NUM, 0},
    {"gpus[].max_sm_clock_mhz", HW_INT, 0},
    {"gpus[].max_memory_clock_mhz", HW_INT, 0},
    {"gpu_count", HW_INT, HW_ATTESTED},
    {"gpus_source", HW_TOKEN, 0},
    {"os", HW_OBJECT, 0},
    {"os.name", HW_NAME, 0},
    {"os.version", HW_VERSION, 0},
    {"os.kernel", HW_VERSION, 0},
    {"os.source", HW_TOKEN, 0},
    {"power", HW_OBJECT, 0},
    {"power.state", HW_TOKEN, 0},
    {"power.source", HW_TOKEN, 0},
    {"volume", HW_OBJECT, 0},
    {"volume.capacity_bytes", HW_INT, 0},
    {"volume.free_bytes", HW_INT, 0},
    {"volume.source", HW_TOKEN, 0},
    {"volume.read_sample", HW_OBJECT, 0},
    {"volume.read_sample.bytes", HW_INT, 0},
    {"volume.read_sample.seconds", HW_NUM, 0},
    {"volume.read_sample.gb_per_s", HW_NUM, 0},
    {"volume.read_sample.method", HW_TOKEN, 0},
    {"volume.read_sample.skipped", HW_TOKEN, 0},
    {"memory", HW_OBJECT, HW_LEGACY},
    {"memory.total_bytes", HW_INT, HW_LEGACY},
    {"memory.source", HW_TOKEN, HW_LEGACY},
    {"gpus[].compute_units", HW_INT, HW_LEGACY},
};
const size_t hardware_field_count = sizeof hardware_fields / sizeof hardware_fields[0];

const hardware_field *hardware_field_find(const char *path) {
    for (size_t i = 0; i < hardware_field_count; i++)
        if (strcmp(hardware_fields[i].path, path) == 0) return &hardware_fields[i];
    return NULL;
}

static bool chars_ok(const char *s, size_t max, const char *extra, bool upper) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!islower(c) && !isdigit(c) && !(upper && isupper(c)) && !strchr(extra, c)) return false;
    }
    return true;
}

bool hardware_form_ok(hardware_kind kind, const json_t *v) {
    const char *s = json_string_value(v);
    switch (kind) {
    case HW_OBJECT: return json_is_object(v);
    case HW_OBJECTS:
    case HW_TOKENS: return json_is_array(v);
    case HW_INT: return json_is_integer(v) && json_integer_value(v) >= 0;
    case HW_NUM: return json_is_number(v);
    case HW_NAME:
        if (!s || !*s || strlen(s) > 127) return false;
        for (; *s; s++)
            if ((unsigned char)*s < 0x20 || *s == 0x7f) return false;
        return true;
    case HW_TOKEN: return chars_ok(s, 32, "_-", false);
    case HW_VERSION: return chars_ok(s, 64, "._+~-", true);
    }
    return false;
}

json_t *hardware_unknown(void) {
    return json_pack("{s:s,s:n,s:n,s:[],s:n}", "source", "unknown", "cpu", "memory_bytes", "gpus", "gpu_count");
}

/* A member of `obj` that must be null/absent or an integer in lo..hi:
 * *out is -1 when absent or null. */
static bool attested_int(const json_t *obj, const char *key, json_int_t lo, json_int_t hi, json_int_t *out) {
    const json_t *v = json_object_get(obj, key);
    *out = -1;
    if (!v || json_is_null(v)) return true;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) return false;
    *out = json_integer_value(v);
    return true;
}

static json_t *int_or_null(json_int_t v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *cpu_copy(const json_t *cpu, bool *whole, char *why, size_t why_len) {
    if (!cpu || json_is_null(cpu)) {
        *whole = false;
        return json_null();
    }
    const json_t *model = json_object_get(cpu, "model");
    json_int_t cores;
    if (!json_is_object(cpu) || (model && !json_is_null(model) && !hardware_form_ok(HW_NAME, model)) ||
        !attested_int(cpu, "cores", 1, 1 << 24, &cores)) {
        snprintf(why, why_len, ".cpu is invalid");
        return NULL;
    }
    bool named = json_is_string(model);
    *whole = *whole && named && cores > 0;
    return json_pack("{s:o,s:o}", "model", named ? json_string(json_string_value(model)) : json_null(), "cores",
                     int_or_null(cores));
}

static json_t *gpus_copy(const json_t *gpus, bool *whole, char *why, size_t why_len) {
    json_t *out = json_array();
    size_t i;
    const json_t *g;
    json_array_foreach(gpus, i, g) {
        const json_t *name = json_object_get(g, "name");
        json_int_t mem, cores;
        if (!hardware_form_ok(HW_NAME, name) || strstr(json_string_value(name), "GPU-") ||
            !attested_int(g, "memory_bytes", 0, INT64_MAX, &mem) || !attested_int(g, "cores", 0, 1 << 24, &cores)) {
            snprintf(why, why_len, ".gpus[%zu] is invalid", i);
            json_decref(out);
            return NULL;
        }
        *whole = *whole && mem >= 0 && cores >= 0;
        json_array_append_new(out, json_pack("{s:s,s:o,s:o}", "name", json_string_value(name), "memory_bytes",
                                             int_or_null(mem), "cores", int_or_null(cores)));
    }
    return out;
}

json_t *hardware_copy_attested(const json_t *in, const char *whole_source, char *why, size_t why_len) {
    if (!json_is_object(in)) {
        snprintf(why, why_len, " is not an object");
        return NULL;
    }
    bool whole = true;
    json_t *cpu = cpu_copy(json_object_get(in, "cpu"), &whole, why, why_len);
    if (!cpu) return NULL;
    json_int_t mem, count;
    const json_t *gpus = json_object_get(in, "gpus");
    if (!attested_int(in, "memory_bytes", 1, INT64_MAX, &mem) ||
        !attested_int(in, "gpu_count", 0, 1 << 16, &count) ||
        (gpus && !json_is_array(gpus))) {
        json_decref(cpu);
        snprintf(why, why_len, ".memory_bytes, .gpus or .gpu_count is invalid");
        return NULL;
    }
    if (gpus && count >= 0 && (size_t)count != json_array_size(gpus)) {
        json_decref(cpu);
        snprintf(why, why_len, ".gpus and .gpu_count disagree");
        return NULL;
    }
    whole = whole && mem > 0 && (gpus || count == 0);
    json_t *gpus_out = gpus_copy(gpus, &whole, why, why_len);
    if (!gpus_out) {
        json_decref(cpu);
        return NULL;
    }
    json_int_t n_gpus = gpus ? (json_int_t)json_array_size(gpus) : count;
    return json_pack("{s:s,s:o,s:o,s:o,s:o}", "source", whole ? whole_source : "partial", "cpu", cpu, "memory_bytes",
                     int_or_null(mem), "gpus", gpus_out, "gpu_count", int_or_null(n_gpus));
}

static bool validate_object(const json_t *obj, const char *prefix, char *why, size_t why_len);

/* One member at table path `path`. */
static bool validate_value(const json_t *v, const char *path, char *why, size_t why_len) {
    const hardware_field *f = hardware_field_find(path);
    if (!f) {
        snprintf(why, why_len, "hardware.%s is not a hardware field", path);
        return false;
    }
    if (json_is_null(v)) return true;
    if (!hardware_form_ok(f->kind, v)) {
        snprintf(why, why_len, "hardware.%s is malformed", path);
        return false;
    }
    if (f->kind == HW_OBJECT) return validate_object(v, path, why, why_len);
    if (f->kind != HW_OBJECTS && f->kind != HW_TOKENS) return true;
    size_t i;
    const json_t *e;
    char elem[168];
    snprintf(elem, sizeof elem, "%s[]", path);
    json_array_foreach(v, i, e) {
        if (f->kind == HW_OBJECTS && json_is_object(e)) {
            if (!validate_object(e, elem, why, why_len)) return false;
        } else if (f->kind == HW_OBJECTS || !hardware_form_ok(HW_TOKEN, e)) {
            snprintf(why, why_len, "hardware.%s[%zu] is malformed", path, i);
            return false;
        }
    }
    return true;
}

static bool validate_object(const json_t *obj, const char *prefix, char *why, size_t why_len) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        char row[160];
        if (snprintf(row, sizeof row, "%s%s%s", prefix, prefix[0] ? "." : "", key) >= (int)sizeof row) {
            snprintf(why, why_len, "hardware member name too long");
            return false;
        }
        if (!validate_value(v, row, why, why_len)) return false;
    }
    return true;
}

bool hardware_validate(const json_t *hw, char *why, size_t why_len) {
    static const char *const sources[] = {"probed", "partial", "attested", "unknown"};
    if (!json_is_object(hw)) {
        snprintf(why, why_len, "hardware is not an object");
        return false;
    }
    const char *src = json_string_value(json_object_get(hw, "source"));
    bool known = false;
    for (size_t i = 0; src && i < sizeof sources / sizeof sources[0]; i++) known = known || strcmp(src, sources[i]) == 0;
    if (!known) {
        snprintf(why, why_len, "hardware.source is missing or unknown");
        return false;
    }
    if (!validate_object(hw, "", why, why_len)) return false;
    const json_t *count = json_object_get(hw, "gpu_count"), *gpus = json_object_get(hw, "gpus");
    /* gpus may be empty while gpu_count is not: a manifest may count GPUs it does not name */
    if (json_is_integer(count) && json_array_size(gpus) && (size_t)json_integer_value(count) != json_array_size(gpus)) {
        snprintf(why, why_len, "hardware.gpus and hardware.gpu_count disagree");
        return false;
    }
    return true;
}
