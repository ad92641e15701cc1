/* redact.c - the allowlist of hardware facts that may leave the machine, the canary scan
 * for identifying text, and the path placeholders for reports. */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "probe/probe_internal.h"
#include "probe/redact.h"
#include "schema/hardware.h"

void redact_context_local(redact_context *ctx) {
    memset(ctx, 0, sizeof *ctx);
    if (gethostname(ctx->host, sizeof ctx->host - 1) != 0) ctx->host[0] = '\0';
    char *dot = strchr(ctx->host, '.');
    if (dot) *dot = '\0'; /* the short name is searched; it is inside the long one */
    const char *user = getenv("USER");
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_name) user = pw->pw_name;
    probe_copy(ctx->user, sizeof ctx->user, user ? user : "");
    const char *home = getenv("HOME");
    if (!home && pw) home = pw->pw_dir;
    /* "/" as a home directory would match every path */
    if (home && strcmp(home, "/") != 0) probe_copy(ctx->home, sizeof ctx->home, home);
}

static bool hex_run(const char *s, size_t n, size_t at, size_t len) {
    if (at + len > n) return false;
    for (size_t i = 0; i < len; i++)
        if (!isxdigit((unsigned char)s[at + i])) return false;
    return true;
}

static bool uuid_at(const char *s, size_t n, size_t i) {
    static const size_t groups[5] = {8, 4, 4, 4, 12};
    if (i > 0 && isxdigit((unsigned char)s[i - 1])) return false;
    for (int g = 0; g < 5; g++) {
        if (!hex_run(s, n, i, groups[g])) return false;
        i += groups[g];
        if (g < 4 && (i >= n || s[i++] != '-')) return false;
    }
    return true;
}

static bool mac_at(const char *s, size_t n, size_t i) {
    if (i > 0 && isxdigit((unsigned char)s[i - 1])) return false;
    if (i + 17 > n) return false;
    char sep = s[i + 2];
    if (sep != ':' && sep != '-') return false;
    for (int k = 0; k < 6; k++) {
        if (!hex_run(s, n, i + (size_t)k * 3, 2)) return false;
        if (k < 5 && s[i + (size_t)k * 3 + 2] != sep) return false;
    }
    return true;
}

static bool is_word_char(char c) {
    return isalnum((unsigned char)c) || c == '_';
}

static bool word_at(const char *s, size_t n, size_t i, const char *w) {
    size_t wl = strlen(w);
    if (wl < 2 || i + wl > n || strncasecmp(s + i, w, wl) != 0) return false;
    if (i > 0 && is_word_char(s[i - 1])) return false;
    return i + wl == n || !is_word_char(s[i + wl]);
}

bool redact_text_identifying(const char *s, size_t n, const redact_context *ctx, const char **what) {
    const char *found = NULL;
    size_t home_len = ctx ? strlen(ctx->home) : 0;
    for (size_t i = 0; i < n && !found; i++) {
        if (uuid_at(s, n, i)) found = "uuid";
        else if (mac_at(s, n, i)) found = "mac address";
        else if (ctx && word_at(s, n, i, ctx->host)) found = "host name";
        else if (ctx && word_at(s, n, i, ctx->user)) found = "user name";
        else if (home_len > 1 && i + home_len <= n && memcmp(s + i, ctx->home, home_len) == 0) found = "home path";
    }
    if (what) *what = found;
    return found != NULL;
}

/* A value's form as the hardware table's row says, device names also through the
 * probe's name allow-list. */
static bool kind_ok(hardware_kind kind, const json_t *v) {
    if (json_is_null(v)) return true;
    if (kind == HW_NAME) return json_is_string(v) && probe_name_allowed(json_string_value(v));
    return hardware_form_ok(kind, v);
}

static bool string_identifying(const json_t *v, const redact_context *ctx) {
    return json_is_string(v) && redact_text_identifying(json_string_value(v), json_string_length(v), ctx, NULL);
}

static size_t filter_object(json_t *obj, const char *prefix, const redact_context *ctx);

/* Checks one member value against its allowlist entry; returns removals/nulls made. */
static size_t filter_value(json_t *parent, const char *key, json_t *v, const char *path, const redact_context *ctx) {
    const hardware_field *row = hardware_field_find(path);
    if (!row || (row->flags & HW_LEGACY)) { /* legacy rows are read in old receipts, never written */
        json_object_del(parent, key);
        return 1;
    }
    hardware_kind kind = row->kind;
    if (json_is_null(v)) return 0;
    if (kind == HW_OBJECT) {
        if (json_is_object(v)) return filter_object(v, path, ctx);
    } else if (kind == HW_OBJECTS || kind == HW_TOKENS) {
        if (json_is_array(v)) {
            size_t changed = 0, i;
            char elem[310];
            probe_copy(elem, sizeof elem - 2, path);
            strcat(elem, "[]");
            for (i = 0; i < json_array_size(v);) {
                json_t *e = json_array_get(v, i);
                bool ok = kind == HW_OBJECTS ? json_is_object(e)
                                                 : kind_ok(HW_TOKEN, e) && !json_is_null(e) && !string_identifying(e, ctx);
                if (!ok) {
                    json_array_remove(v, i);
                    changed++;
                    continue;
                }
                if (kind == HW_OBJECTS) changed += filter_object(e, elem, ctx);
                i++;
            }
            return changed;
        }
    } else if (kind_ok(kind, v) && !string_identifying(v, ctx)) {
        return 0;
    }
    json_object_set_new(parent, key, json_null());
    return 1;
}

static size_t filter_object(json_t *obj, const char *prefix, const redact_context *ctx) {
    if (strlen(prefix) > 200) return 0;
    size_t changed = 0;
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, v) {
        char path[300];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        changed += filter_value(obj, key, v, path, ctx);
    }
    return changed;
}

size_t redact_hardware(json_t *hw, const redact_context *ctx) {
    return json_is_object(hw) ? filter_object(hw, "", ctx) : 0;
}

static bool path_end(char c) {
    return c == '\0' || c == '/' || c == ' ' || c == '"' || c == '\'' || c == '\t' || c == '\n';
}

char *redact_paths_apply(const redact_paths *p, const char *text) {
    struct {
        const char *path;
        const char *mark;
    } rules[4] = {{p->binary, "<binary>"}, {p->model, "<model>"}, {p->root, "<root>"}, {p->suite, "<suite>"}};
    /* longest first, so a model under the index root is <model>, not <root>/... */
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            size_t li = rules[i].path ? strlen(rules[i].path) : 0, lj = rules[j].path ? strlen(rules[j].path) : 0;
            if (lj > li) {
                __typeof__(rules[0]) t = rules[i];
                rules[i] = rules[j];
                rules[j] = t;
            }
        }
    buf out;
    buf_init(&out, (size_t)-1 / 2);
    pacer_err rc = PACER_OK;
    for (const char *s = text; *s && !rc;) {
        bool replaced = false;
        bool at_start = s == text || strchr(" \t\n\"'=:", s[-1]) != NULL;
        for (int r = 0; r < 4 && !replaced && at_start; r++) {
            const char *path = rules[r].path;
            size_t len = path ? strlen(path) : 0;
            while (len > 1 && path[len - 1] == '/') len--;
            if (len == 0 || strncmp(s, path, len) != 0 || !path_end(s[len])) continue;
            rc = buf_append_str(&out, rules[r].mark);
            s += len;
            replaced = true;
        }
        if (!replaced && !rc) rc = buf_append_char(&out, *s++);
    }
    if (rc) {
        buf_free(&out);
        return NULL;
    }
    return buf_detach(&out);
}
