/* record.c - the sample record's field table: one table drives the writer and the reader,
 * which checks each field's type, so the two cannot drift apart. */
#include "lab/record.h"

#include <stdio.h>
#include <string.h>

#define NO_FLAG SIZE_MAX
#define F(name, kind, member, has) {name, kind, offsetof(lab_record, member), has, sizeof(((lab_record *)0)->member)}
#define HAS(member) offsetof(lab_record, member)

const lab_field lab_record_fields[] = {
    F("id", LAB_FIELD_STR, id, NO_FLAG),
    F("index", LAB_FIELD_I64, index, NO_FLAG),
    F("round", LAB_FIELD_I64, round, NO_FLAG),
    F("workload", LAB_FIELD_STR, workload, NO_FLAG),
    F("config", LAB_FIELD_STR, config, NO_FLAG),
    F("kind", LAB_FIELD_STR, kind, NO_FLAG),
    F("cap", LAB_FIELD_I64, cap, NO_FLAG),
    F("attempt", LAB_FIELD_I64, attempt, NO_FLAG),
    F("started_utc", LAB_FIELD_STR, started_utc, NO_FLAG),
    F("ended_utc", LAB_FIELD_STR, ended_utc, NO_FLAG),
    F("finish", LAB_FIELD_FINISH, finish, NO_FLAG),
    F("capped_by", LAB_FIELD_STR, capped_by, NO_FLAG),
    F("validity", LAB_FIELD_VALIDITY, validity, NO_FLAG),
    F("validity_reason", LAB_FIELD_STR, validity_reason, NO_FLAG),
    F("error", LAB_FIELD_STR, error, NO_FLAG),
    F("load_ns", LAB_FIELD_I64, load_ns, HAS(has_load_ns)),
    F("peak_rss_bytes", LAB_FIELD_I64, peak_rss_bytes, HAS(has_peak_rss)),
    F("memory_limit_bytes", LAB_FIELD_I64, memory_limit_bytes, HAS(has_memory_limit)),
    F("http_status", LAB_FIELD_I64, http_status, HAS(has_http_status)),
    F("server_finish_reason", LAB_FIELD_STR, server_finish_reason, NO_FLAG),
    F("prefill_tokens", LAB_FIELD_I64, prefill_tokens, HAS(has_usage)),
    F("decode_tokens", LAB_FIELD_I64, decode_tokens, HAS(has_usage)),
    F("first_text_ns", LAB_FIELD_I64, first_text_ns, HAS(has_first_text)),
    F("completion_ns", LAB_FIELD_I64, completion_ns, NO_FLAG),
    F("delivery_span_ns", LAB_FIELD_I64, delivery_span_ns, HAS(has_first_text)),
    F("deliveries", LAB_FIELD_I64, deliveries, NO_FLAG),
    F("prefill_tok_s", LAB_FIELD_F64, prefill_tok_s, HAS(has_prefill_tok_s)),
    F("decode_tok_s", LAB_FIELD_F64, decode_tok_s, HAS(has_decode_tok_s)),
    F("server_prefill_tok_s", LAB_FIELD_F64, server_prefill_tok_s, HAS(has_server_prefill_tok_s)),
    F("server_decode_tok_s", LAB_FIELD_F64, server_decode_tok_s, HAS(has_server_decode_tok_s)),
    F("answer_file", LAB_FIELD_STR, answer_file, NO_FLAG),
    F("answer_bytes", LAB_FIELD_I64, answer_bytes, NO_FLAG),
    F("answer_sha256", LAB_FIELD_STR, answer_sha256, NO_FLAG),
};
const size_t lab_record_field_count = sizeof lab_record_fields / sizeof lab_record_fields[0];

/* Nested members: JSON type each must have when not null. */
static const struct {
    const char *name;
    size_t offset;
    json_type type;
    bool nullable;
} lab_record_parts[] = {
    {"power", offsetof(lab_record, power), JSON_OBJECT, false},
    {"cycle", offsetof(lab_record, cycle), JSON_OBJECT, true},
    {"svg", offsetof(lab_record, svg), JSON_OBJECT, true},
    {"earlier", offsetof(lab_record, earlier), JSON_ARRAY, false},
};
#define LAB_RECORD_PARTS (sizeof lab_record_parts / sizeof lab_record_parts[0])

static const char *const finish_names[] = {"eos", "capped", "cycle", "error"};
static const char *const validity_names[] = {"valid", "content-invalid", "invalidated"};

const char *lab_finish_name(lab_finish f) { return (unsigned)f < 4 ? finish_names[f] : "unknown"; }
const char *lab_validity_name(lab_validity v) { return (unsigned)v < 3 ? validity_names[v] : "unknown"; }

static int name_index(const char *const *names, int n, const char *s) {
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

void lab_record_free(lab_record *r) {
    json_decref(r->power);
    json_decref(r->cycle);
    json_decref(r->svg);
    json_decref(r->earlier);
    r->power = r->cycle = r->svg = r->earlier = NULL;
}

static json_t *field_to_json(const lab_record *r, const lab_field *f) {
    const char *base = (const char *)r;
    if (f->has != NO_FLAG && !*(const bool *)(base + f->has)) return json_null();
    switch (f->kind) {
    case LAB_FIELD_I64: return json_integer(*(const int64_t *)(base + f->offset));
    case LAB_FIELD_F64: return json_real(*(const double *)(base + f->offset));
    case LAB_FIELD_STR: {
        const char *s = base + f->offset;
        return s[0] ? json_string(s) : json_null();
    }
    case LAB_FIELD_FINISH: return json_string(lab_finish_name(*(const lab_finish *)(base + f->offset)));
    case LAB_FIELD_VALIDITY: return json_string(lab_validity_name(*(const lab_validity *)(base + f->offset)));
    }
    return NULL;
}

json_t *lab_record_to_json(const lab_record *r) {
    json_t *o = json_object();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < lab_record_field_count; i++)
        ok = json_object_set_new(o, lab_record_fields[i].name, field_to_json(r, &lab_record_fields[i])) == 0;
    for (size_t i = 0; ok && i < LAB_RECORD_PARTS; i++) {
        json_t *v = *(json_t *const *)((const char *)r + lab_record_parts[i].offset);
        json_t *val = v ? json_incref(v) : lab_record_parts[i].type == JSON_ARRAY ? json_array() : json_null();
        ok = json_object_set_new(o, lab_record_parts[i].name, val) == 0;
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static pacer_err field_from_json(const json_t *v, lab_record *r, const lab_field *f) {
    char *base = (char *)r;
    if (json_is_null(v) && (f->has != NO_FLAG || f->kind == LAB_FIELD_STR)) return PACER_OK; /* zeroed: absent */
    if (f->has != NO_FLAG) *(bool *)(base + f->has) = true;
    switch (f->kind) {
    case LAB_FIELD_I64:
        if (!json_is_integer(v)) return PACER_ERR_FORMAT;
        *(int64_t *)(base + f->offset) = json_integer_value(v);
        return PACER_OK;
    case LAB_FIELD_F64:
        if (!json_is_number(v)) return PACER_ERR_FORMAT;
        *(double *)(base + f->offset) = json_number_value(v);
        return PACER_OK;
    case LAB_FIELD_STR:
        if (!json_is_string(v) || json_string_length(v) >= f->size) return PACER_ERR_FORMAT;
        memcpy(base + f->offset, json_string_value(v), json_string_length(v) + 1);
        return PACER_OK;
    case LAB_FIELD_FINISH: {
        int i = name_index(finish_names, 4, json_string_value(v));
        if (i < 0) return PACER_ERR_FORMAT;
        *(lab_finish *)(base + f->offset) = (lab_finish)i;
        return PACER_OK;
    }
    case LAB_FIELD_VALIDITY: {
        int i = name_index(validity_names, 3, json_string_value(v));
        if (i < 0) return PACER_ERR_FORMAT;
        *(lab_validity *)(base + f->offset) = (lab_validity)i;
        return PACER_OK;
    }
    }
    return PACER_ERR_FORMAT;
}

pacer_err lab_record_from_json(const json_t *j, lab_record *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(j)) {
        snprintf(err, err_len, "a sample record must be an object");
        return PACER_ERR_FORMAT;
    }
    for (size_t i = 0; i < lab_record_field_count; i++) {
        const json_t *v = json_object_get(j, lab_record_fields[i].name);
        if (!v || field_from_json(v, out, &lab_record_fields[i])) {
            snprintf(err, err_len, "sample record field '%s' is %s", lab_record_fields[i].name, v ? "of the wrong type" : "missing");
            lab_record_free(out);
            return PACER_ERR_FORMAT;
        }
    }
    for (size_t i = 0; i < LAB_RECORD_PARTS; i++) {
        json_t *v = json_object_get(j, lab_record_parts[i].name);
        bool ok = v && (json_typeof(v) == lab_record_parts[i].type || (lab_record_parts[i].nullable && json_is_null(v)));
        if (!ok) {
            snprintf(err, err_len, "sample record field '%s' is %s", lab_record_parts[i].name, v ? "of the wrong type" : "missing");
            lab_record_free(out);
            return PACER_ERR_FORMAT;
        }
        *(json_t **)((char *)out + lab_record_parts[i].offset) = json_is_null(v) ? NULL : json_incref(v);
    }
    return PACER_OK;
}

bool lab_record_in_median(const lab_record *r) { return r->finish == LAB_FINISH_EOS && r->validity == LAB_VALID; }

bool lab_record_needs_rerun(const lab_record *r, int64_t cap_now) {
    if (r->finish == LAB_FINISH_ERROR || r->validity == LAB_INVALIDATED) return true;
    return r->finish == LAB_FINISH_CAPPED && cap_now > r->cap;
}
