/* request.c - parsing and validation of OpenAI request bodies (see request.h). */
#include "server/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "engine/logprob.h"

void serve_req_free(serve_req *r) {
    json_decref(r->root);
    buf_free(&r->prompt);
    free(r->tokens);
    for (int i = 0; i < r->n_prompts; i++) free(r->prompts[i].tokens);
    free(r->prompts);
}

/* Checks that `key`, when present and not null, has the wanted JSON type. */
static bool type_ok(const json_t *root, const char *key, int want, http_status *st) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) return true;
    bool ok = want == 'n' ? json_is_number(v) : want == 'i' ? json_is_integer(v) : want == 'b' ? json_is_boolean(v)
              : want == 's' ? json_is_string(v) : want == 'o' ? json_is_object(v) : true;
    if (!ok) {
        static const struct { int c; const char *name; } NAMES[] = {
            {'n', "a number"}, {'i', "an integer"}, {'b', "a boolean"}, {'s', "a string"}, {'o', "an object"}};
        const char *name = "valid";
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
            if (NAMES[i].c == want) name = NAMES[i].name;
        http_status_set(st, 400, "invalid_request_error", "'%s' must be %s", key, name);
    }
    return ok;
}

static const struct { const char *key; int type; } FIELD_TYPES[] = {
    {"model", 's'}, {"max_tokens", 'i'}, {"max_completion_tokens", 'i'}, {"temperature", 'n'}, {"top_k", 'i'},
    {"top_p", 'n'}, {"seed", 'i'}, {"stream", 'b'}, {"stream_options", 'o'}, {"cache_prompt", 'b'},
    {"echo", 'b'}, {"top_logprobs", 'i'},
};

/* Token ids of `a` into p; a 400 names the first bad position as where[i]. */
static bool prompt_ids(const serve_req_model *s, json_t *a, const char *where, serve_prompt *p, http_status *st) {
    size_t i, n = json_array_size(a);
    json_t *v;
    if (n == 0) { http_status_set(st, 400, "invalid_request_error", "%s is empty", where); return false; }
    p->tokens = malloc(n * sizeof *p->tokens);
    if (!p->tokens) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    json_array_foreach(a, i, v) {
        json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
        if (id < 0 || id >= s->n_vocab) {
            http_status_set(st, 400, "invalid_request_error", "%s[%zu] is not a token id of this model", where, i);
            return false;
        }
        p->tokens[p->n_tokens++] = (int32_t)id;
    }
    return true;
}

/* `prompt` of /v1/completions as OpenAI takes it: a string, an array of token ids, or an
 * array whose items are either (a batch, answered as choices in order). */
static bool req_parse_prompts(const serve_req_model *s, serve_req *r, json_t *p, http_status *st) {
    static const char *const shape = "'prompt' must be a string, an array of token ids, or an array of those";
    bool batch = json_is_array(p) && json_array_size(p) > 0 && !json_is_integer(json_array_get(p, 0));
    if (!json_is_string(p) && !json_is_array(p)) { http_status_set(st, 400, "invalid_request_error", "%s", shape); return false; }
    size_t n = batch ? json_array_size(p) : 1;
    r->prompts = calloc(n, sizeof *r->prompts);
    if (!r->prompts) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    r->n_prompts = (int)n;
    for (size_t i = 0; i < n; i++) {
        json_t *item = batch ? json_array_get(p, i) : p;
        char where[32] = "prompt";
        if (batch) snprintf(where, sizeof where, "prompt[%zu]", i);
        if (json_is_string(item)) {
            if (!s->chat->raw_text) {
                http_status_set(st, 400, "invalid_request_error",
                           "this model's chat format (%s) does not accept raw text: use /v1/chat/completions",
                           s->chat->name);
                return false;
            }
            r->prompts[i].text = json_string_value(item);
        } else if (json_is_array(item)) {
            if (!prompt_ids(s, item, where, &r->prompts[i], st)) return false;
        } else {
            http_status_set(st, 400, "invalid_request_error", "%s", shape);
            return false;
        }
    }
    return true;
}

/* logprobs (an integer for completions, a boolean with top_logprobs for chat) and echo. */
static bool req_parse_logprobs(serve_req *r, http_status *st) {
    json_t *lp = json_object_get(r->root, "logprobs"), *top = json_object_get(r->root, "top_logprobs");
    bool has_top = top && !json_is_null(top);
    r->logprobs = -1;
    if (r->chat) {
        if (lp && !json_is_null(lp) && !json_is_boolean(lp)) {
            http_status_set(st, 400, "invalid_request_error", "'logprobs' must be a boolean");
            return false;
        }
        if (has_top && !json_is_true(lp)) {
            http_status_set(st, 400, "invalid_request_error", "'top_logprobs' needs 'logprobs': true");
            return false;
        }
        if (json_is_true(lp)) r->logprobs = has_top ? (int)json_integer_value(top) : 0;
    } else if (lp && !json_is_null(lp)) {
        r->logprobs = json_is_integer(lp) ? (int)json_integer_value(lp) : -1;
        if (!json_is_integer(lp) || json_integer_value(lp) < 0 || json_integer_value(lp) > LOGPROB_MAX_TOP) {
            http_status_set(st, 400, "invalid_request_error", "'logprobs' must be an integer from 0 to 20");
            return false;
        }
    }
    if (r->chat && has_top && (r->logprobs < 0 || r->logprobs > LOGPROB_MAX_TOP)) {
        http_status_set(st, 400, "invalid_request_error", "'top_logprobs' must be from 0 to 20");
        return false;
    }
    r->echo = !r->chat && json_get_bool(r->root, "echo", false);
    /* the echoed prompt needs every row: a reused prefix has none, so it is evaluated again */
    if (r->echo && r->logprobs >= 0) r->cache_prompt = false;
    return true;
}

bool serve_req_parse(const serve_req_model *s, const char *body, size_t len, bool chat, serve_req *r, http_status *st) {
    memset(r, 0, sizeof *r);
    buf_init(&r->prompt, 1u << 22);
    r->chat = chat;
    json_error_t je;
    r->root = json_loadb(body, len, 0, &je);
    if (!r->root) { http_status_set(st, 400, "invalid_request_error", "malformed JSON: %s", je.text); return false; }
    if (!json_is_object(r->root)) {
        http_status_set(st, 400, "invalid_request_error", "the body must be a JSON object");
        return false;
    }
    for (size_t i = 0; i < sizeof FIELD_TYPES / sizeof FIELD_TYPES[0]; i++)
        if (!type_ok(r->root, FIELD_TYPES[i].key, FIELD_TYPES[i].type, st)) return false;
    r->model = json_get_str(r->root, "model", NULL);
    if (r->model && r->model[0] && strcmp(r->model, s->id) != 0) {
        http_status_set(st, 404, "not_found_error", "model '%s' does not exist", r->model);
        return false;
    }
    r->max_tokens = json_get_int(r->root, "max_tokens", json_get_int(r->root, "max_completion_tokens", chat ? -1 : 16));
    if (r->max_tokens < -1 || (json_object_get(r->root, "max_tokens") && r->max_tokens < 0)) {
        http_status_set(st, 400, "invalid_request_error", "'max_tokens' must be >= 0");
        return false;
    }
    r->sp.temperature = (float)json_get_num(r->root, "temperature", 1.0);
    r->sp.top_k = (int)json_get_int(r->root, "top_k", 0);
    r->sp.top_p = (float)json_get_num(r->root, "top_p", 1.0);
    if (r->sp.temperature < 0 || r->sp.top_p < 0 || r->sp.top_p > 1) {
        http_status_set(st, 400, "invalid_request_error", "'temperature' must be >= 0 and 'top_p' in [0, 1]");
        return false;
    }
    r->seed = (uint64_t)json_get_int(r->root, "seed", (int64_t)(clock_now_ns() & 0x7fffffff));
    r->stream = json_get_bool(r->root, "stream", false);
    r->include_usage = json_get_bool(json_object_get(r->root, "stream_options"), "include_usage", false);
    r->cache_prompt = json_get_bool(r->root, "cache_prompt", true) && s->prompt_cache;
    json_t *stop = json_object_get(r->root, "stop");
    if (json_is_string(stop)) r->stops[r->n_stops++] = json_string_value(stop);
    else if (json_is_array(stop)) {
        size_t i;
        json_t *v;
        json_array_foreach(stop, i, v) {
            if (!json_is_string(v) || i >= GEN_MAX_STOPS) {
                http_status_set(st, 400, "invalid_request_error", "'stop' must be a string or up to 4 strings");
                return false;
            }
            r->stops[r->n_stops++] = json_string_value(v);
        }
    } else if (stop && !json_is_null(stop)) {
        http_status_set(st, 400, "invalid_request_error", "'stop' must be a string or up to 4 strings");
        return false;
    }
    if (!req_parse_logprobs(r, st)) return false;
    char err[200] = "";
    if (chat) {
        if (chat_render(s->chat, json_object_get(r->root, "messages"), &r->prompt, err, sizeof err)) {
            http_status_set(st, 400, "invalid_request_error", "%s", err);
            return false;
        }
        return true;
    }
    return req_parse_prompts(s, r, json_object_get(r->root, "prompt"), st);
}
