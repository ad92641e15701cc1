/* schema/manifest.c - the manifest's field table and the two functions both sides use. */
#include "schema/manifest.h"

#include <stdio.h>

const manifest_field manifest_fields[MF_COUNT] = {
    [MF_VERSION] = {"manifest_version", MFT_INT, true, false},
    [MF_BACKEND] = {"backend", MFT_STRING, false, true},
    [MF_PLATFORM] = {"platform", MFT_STRING, false, true},
    [MF_REVISION] = {"revision", MFT_STRING, false, true},
    [MF_PYTHON_VERSION] = {"python_version", MFT_STRING, false, true},
    [MF_RANK_COUNT] = {"rank_count", MFT_INT, false, true},
    [MF_RANKS] = {"ranks", MFT_ARRAY, false, true},
    [MF_HARDWARE] = {"hardware", MFT_OBJECT, false, true},
    [MF_CHECKPOINT] = {"checkpoint", MFT_OBJECT, false, true},
    [MF_ENGINE] = {"engine", MFT_STRING, false, false},
    [MF_ENGINE_VERSION] = {"version", MFT_STRING, false, false},
    [MF_MODEL] = {"model", MFT_STRING, false, false},
    [MF_FILE] = {"file", MFT_STRING, false, false},
    [MF_CHAT_FORMAT] = {"chat_format", MFT_STRING, false, false},
    [MF_RAW_TEXT] = {"raw_text", MFT_BOOL, false, false},
    [MF_PROMPT_CACHE] = {"prompt_cache", MFT_BOOL, false, false},
    [MF_DRAFTING] = {"drafting", MFT_STRING, false, false},
    [MF_DRAFTER] = {"drafter", MFT_OBJECT, false, false},
};

const char *manifest_type_name(manifest_type t) {
    switch (t) {
    case MFT_INT: return "an integer";
    case MFT_STRING: return "a string";
    case MFT_BOOL: return "true or false";
    case MFT_OBJECT: return "an object";
    case MFT_ARRAY: return "an array";
    }
    return "?";
}

static bool of_type(const json_t *v, manifest_type t) {
    switch (t) {
    case MFT_INT: return json_is_integer(v);
    case MFT_STRING: return json_is_string(v);
    case MFT_BOOL: return json_is_boolean(v);
    case MFT_OBJECT: return json_is_object(v);
    case MFT_ARRAY: return json_is_array(v);
    }
    return false;
}

pacer_err manifest_put(json_t *doc, manifest_field_id id, json_t *value) {
    if (!json_is_object(doc) || (unsigned)id >= MF_COUNT || !value || !of_type(value, manifest_fields[id].type)) {
        json_decref(value);
        return PACER_ERR_ARG;
    }
    return json_object_set_new(doc, manifest_fields[id].name, value) ? PACER_ERR_NOMEM : PACER_OK;
}

bool manifest_fields_check(const json_t *doc, char *why, size_t why_len) {
    if (!json_is_object(doc)) {
        snprintf(why, why_len, "manifest is not a JSON object");
        return false;
    }
    for (size_t i = 0; i < MF_COUNT; i++) {
        const manifest_field *f = &manifest_fields[i];
        const json_t *v = json_object_get(doc, f->name);
        if (!v && f->required) {
            snprintf(why, why_len, "%s is missing", f->name);
            return false;
        }
        if (v && !of_type(v, f->type)) {
            snprintf(why, why_len, "%s is not %s", f->name, manifest_type_name(f->type));
            return false;
        }
    }
    return true;
}
