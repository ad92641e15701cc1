/* rules.c - the completion rules of community-v1 and community-v2. The order of the checks
 * fixes which reason is reported when several apply: empty output first, then missing
 * usage, then the delivery interval, then the length rule. */
#include "bench/rules.h"

#include <stdio.h>
#include <string.h>

attempt_status rules_judge(const rules_context *ctx, const attempt_sample *s, char *reason, size_t reason_n) {
    attempt_status st = ATTEMPT_OK;
    reason[0] = '\0';
    if (s->status != ATTEMPT_OK) {
        snprintf(reason, reason_n, "%s", s->reason[0] ? s->reason : attempt_status_name(s->status));
        return s->status;
    }
    if (s->output_bytes == 0 || !s->has_first_text || (s->has_usage && s->completion_tokens == 0)) {
        snprintf(reason, reason_n, "empty output");
        return ATTEMPT_FAILED;
    }
    if (!s->has_usage) {
        snprintf(reason, reason_n, "no usage reported: token count unknown");
        return ATTEMPT_INCOMPLETE;
    }
    if (!s->has_stream_tok_s) {
        snprintf(reason, reason_n, "no delivery interval (one delivery or zero span)");
        return ATTEMPT_INCOMPLETE;
    }
    int64_t n = s->completion_tokens;
    if (n >= ctx->max_tokens) return ATTEMPT_OK;
    bool natural = strcmp(s->finish_reason, "stop") == 0;
    bool length_stop = strcmp(s->finish_reason, "length") == 0;
    if (ctx->rule_version >= 2 && !ctx->greedy && natural && n >= ctx->natural_stop_min_tokens)
        return ATTEMPT_OK;
    st = ATTEMPT_INCOMPLETE;
    if (length_stop)
        snprintf(reason, reason_n, "premature length stop: %lld of %d tokens", (long long)n, ctx->max_tokens);
    else if (ctx->rule_version >= 2 && !ctx->greedy && natural)
        snprintf(reason, reason_n, "short reply: stopped after %lld tokens (needs %d)", (long long)n,
                 ctx->natural_stop_min_tokens < ctx->max_tokens ? ctx->natural_stop_min_tokens : ctx->max_tokens);
    else
        snprintf(reason, reason_n, "short reply: %lld of %d tokens%s", (long long)n, ctx->max_tokens,
                 ctx->greedy || ctx->rule_version < 2 ? " (the full budget is required)" : "");
    return st;
}
