/* provenance.c - placeholders for paths on the command line, and the hardware detail. */
#include "lab/provenance.h"

#include <stdbool.h>
#include <string.h>

static const lab_placeholder *flag_of(const lab_placeholder *flags, const char *arg, const char **inline_value) {
    *inline_value = NULL;
    for (const lab_placeholder *f = flags; f->flag; f++) {
        size_t n = strlen(f->flag);
        if (strcmp(arg, f->flag) == 0) return f;
        if (strncmp(arg, f->flag, n) == 0 && arg[n] == '=') {
            *inline_value = arg + n + 1;
            return f;
        }
    }
    return NULL;
}

static bool takes_value(const char *const *valued, const char *arg) {
    for (const char *const *v = valued; *v; v++)
        if (strcmp(*v, arg) == 0) return true;
    return false;
}

json_t *lab_provenance_command(int argc, char *const *argv, int keep, const lab_placeholder *flags,
                               const char *const *valued, const char *positional) {
    json_t *cmd = json_array();
    json_array_append_new(cmd, json_string("pacer"));
    for (int i = 1; i < argc; i++) {
        const char *inl;
        const lab_placeholder *f = flag_of(flags, argv[i], &inl);
        if (f && inl) {
            json_array_append_new(cmd, json_sprintf("%s=%s", f->flag, f->placeholder));
        } else if (f) {
            json_array_append_new(cmd, json_string(argv[i]));
            if (i + 1 < argc) json_array_append_new(cmd, json_string(f->placeholder)), i++;
        } else if (takes_value(valued, argv[i]) && i + 1 < argc) {
            json_array_append_new(cmd, json_string(argv[i]));
            json_array_append_new(cmd, json_string(argv[++i]));
        } else {
            json_array_append_new(cmd, json_string(argv[i][0] == '-' || i <= keep ? argv[i] : positional));
        }
    }
    return cmd;
}

/* A copy of obj[key] or null. */
static json_t *get(const json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return v ? json_deep_copy(v) : json_null();
}

json_t *lab_provenance_detail(const json_t *hw) {
    const json_t *cpu = json_object_get(hw, "cpu"), *os = json_object_get(hw, "os"), *vol = json_object_get(hw, "volume");
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "kernel", get(os, "kernel"), "os_name", get(os, "name"),
                     "os_version", get(os, "version"), "memory_bytes", get(hw, "memory_bytes"),
                     "cpu_model", get(cpu, "model"), "cpu_threads", get(cpu, "threads"), "volume_capacity_bytes",
                     get(vol, "capacity_bytes"), "volume_free_bytes", get(vol, "free_bytes"), "read_sample",
                     get(vol, "read_sample"), "gpus", get(hw, "gpus"));
}
