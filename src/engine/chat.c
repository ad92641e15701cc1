/* chat.c - the chat formats table and the renderer. Mistral and llama2 wrap user turns in
 * [INST] ... [/INST] (llama2 puts the system message in <<SYS>>); the others are
 * role-header formats. BOS is left to the tokenizer (its add_bos flag). */
#include "engine/chat.h"

#include <stdio.h>
#include <string.h>

static const chat_format FORMATS[] = {
    {"llama3", true, "<|start_header_id|>", "<|start_header_id|>%s<|end_header_id|>\n\n", "", "<|eot_id|>",
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"chatml", true, "<|im_start|>", "<|im_start|>%s\n", "", "<|im_end|>\n", "<|im_start|>assistant\n"},
    {"llama2", true, "<<SYS>>", NULL, NULL, NULL, NULL},
    {"mistral", true, "[INST]", NULL, NULL, NULL, NULL},
    {"plain", true, NULL, "%s: ", "", "\n", "assistant:"},
};
#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])

const chat_format *chat_format_by_name(const char *name) {
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(FORMATS[i].name, name) == 0) return &FORMATS[i];
    return NULL;
}

const chat_format *chat_format_detect(const char *tmpl, chat_has_token_fn has_token, void *ctx) {
    for (size_t i = 0; i < N_FORMATS; i++) {
        const chat_format *f = &FORMATS[i];
        if (!f->marker) continue;
        if (tmpl && strstr(tmpl, f->marker)) return f;
    }
    for (size_t i = 0; has_token && i < N_FORMATS; i++) {
        const chat_format *f = &FORMATS[i];
        if (f->marker && !tmpl && has_token(ctx, f->marker)) return f;
    }
    return chat_format_by_name("plain");
}

/* [INST] formats: system text goes before (mistral) or inside <<SYS>> (llama2) the first user turn. */
static pacer_err render_inst(const chat_format *f, const json_t *messages, buf *out) {
    bool llama2 = strcmp(f->name, "llama2") == 0;
    const char *system = NULL;
    pacer_err rc = PACER_OK;
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if (strcmp(role, "system") == 0) { system = content; continue; }
        if (strcmp(role, "assistant") == 0) {
            rc = buf_appendf(out, " %s</s>", content);
        } else if (system) {
            rc = llama2 ? buf_appendf(out, "[INST] <<SYS>>\n%s\n<</SYS>>\n\n%s [/INST]", system, content)
                        : buf_appendf(out, "[INST] %s\n\n%s [/INST]", system, content);
            system = NULL;
        } else {
            rc = buf_appendf(out, "[INST] %s [/INST]", content);
        }
        if (rc) return rc;
    }
    return rc;
}

pacer_err chat_render(const chat_format *f, const json_t *messages, buf *out, char *err, size_t err_len) {
    if (!json_is_array(messages) || json_array_size(messages) == 0) {
        snprintf(err, err_len, "'messages' must be a non-empty array");
        return PACER_ERR_FORMAT;
    }
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        if (!json_is_object(m) || !json_is_string(json_object_get(m, "role")) ||
            !json_is_string(json_object_get(m, "content"))) {
            snprintf(err, err_len, "messages[%zu] must have string 'role' and 'content'", i);
            return PACER_ERR_FORMAT;
        }
    }
    if (!f->role_prefix) return render_inst(f, messages, out);
    pacer_err rc = PACER_OK;
    json_array_foreach(messages, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if ((rc = buf_appendf(out, f->role_prefix, role)) || (rc = buf_append_str(out, f->role_suffix)) ||
            (rc = buf_append_str(out, content)) || (rc = buf_append_str(out, f->msg_suffix)))
            return rc;
    }
    return buf_append_str(out, f->gen_prompt);
}
