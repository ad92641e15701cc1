/* test_board_intake.c - the board's pure parts: the intake's verdicts on a real receipt
 * (tests/data/board/receipt-v2.json, from 'pacer bench' against the fault server) and its
 * mutations, parameter counts from hub answers and configs, the metrics exposition, and the
 * client's board-URL rules and pre-upload refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "bench/credentials.h"
#include "bench/publish.h"
#include "board/intake.h"
#include "board/metrics.h"
#include "board/params.h"

static json_t *receipt(void) {
    json_error_t je;
    json_t *r = json_load_file("tests/data/board/receipt-v2.json", JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(r, "%s", je.text);
    return r;
}

/* Judges `r` (stolen) under the default configuration (or `cfg`). */
static intake_verdict judge(json_t *r, const intake_config *cfg) {
    intake_config def;
    intake_config_default(&def);
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    intake_verdict v;
    cr_assert_eq(intake_judge(cfg ? cfg : &def, text, strlen(text), &v), PACER_OK);
    free(text);
    return v;
}

static bool has_reason(const intake_verdict *v, const char *part) {
    size_t i;
    json_t *r;
    json_array_foreach(v->reasons, i, r) if (strstr(json_string_value(r), part)) return true;
    return false;
}

Test(intake, a_complete_standard_receipt_is_standard_with_its_facts) {
    intake_verdict v = judge(receipt(), NULL);
    cr_assert_eq(v.outcome, INTAKE_STANDARD, "%s", json_dumps(v.reasons, 0));
    cr_assert_eq(json_array_size(v.reasons), 0);
    cr_assert_str_eq(v.facts.suite_id, "community-v2");
    cr_assert_str_eq(v.facts.model_id, "org/m");
    cr_assert_str_eq(v.facts.gpu_name, "Test GPU 24GB");
    cr_assert_str_eq(v.facts.backend, "cuda");
    json_t *r = receipt();
    double want = json_number_value(json_object_get(
        json_object_get(json_object_get(json_array_get(json_object_get(r, "cells"), 3), "aggregates"), "stream_tok_s"), "median"));
    json_decref(r);
    cr_assert(v.facts.has_chat_greedy && v.facts.chat_greedy_tok_s == want, "the greedy chat median, unrounded");
    cr_assert_eq(strlen(v.canonical_hash), 64);
    intake_verdict w = judge(receipt(), NULL);
    cr_assert_str_eq(v.canonical_hash, w.canonical_hash, "the canonical hash does not depend on the text's layout");
    intake_verdict_free(&v);
    intake_verdict_free(&w);
}

Test(intake, limits_and_strict_json_come_first) {
    intake_config cfg;
    intake_config_default(&cfg);
    intake_verdict v;
    char *big = calloc(INTAKE_MAX_BYTES + 2, 1);
    memset(big, ' ', INTAKE_MAX_BYTES + 1);
    cr_assert_eq(intake_judge(&cfg, big, INTAKE_MAX_BYTES + 1, &v), PACER_OK);
    cr_assert_eq(v.http_status, 413);
    intake_verdict_free(&v);
    free(big);
    const char *cases[][2] = {
        {"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "nests deeper"},
        {"{\"a\":1,\"a\":2}", "duplicate"},
        {"{\"a\":\"\xff\"}", "not valid JSON"},
        {"{\"a\":1e999}", "not valid JSON"},
        {"{\"a\":123456789012345678901234567890}", "not valid JSON"},
        {"[1,2]", "not a JSON object"},
        {"{\"a\":1", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(intake_judge(&cfg, cases[i][0], strlen(cases[i][0]), &v), PACER_OK);
        cr_assert_eq(v.outcome, INTAKE_REJECTED);
        cr_assert_eq(v.http_status, 400, "case %zu", i);
        cr_assert(has_reason(&v, cases[i][1]), "case %zu: %s", i, json_dumps(v.reasons, 0));
        intake_verdict_free(&v);
    }
}

Test(intake, validator_failures_are_422_with_the_check_named) {
    json_t *r = receipt();
    json_object_set_new(json_object_get(r, "suite"), "digest", json_string("00"));
    intake_verdict v = judge(r, NULL);
    cr_assert_eq(v.outcome, INTAKE_REJECTED);
    cr_assert_eq(v.http_status, 422);
    cr_assert(has_reason(&v, "digest check failed"));
    cr_assert_str_eq(v.codes[0], "digest");
    intake_verdict_free(&v);
}

Test(intake, board_checks_list_every_reason) {
    json_t *r = receipt();
    json_object_set_new(json_object_get(r, "backend"), "name", json_string("rocm"));
    json_object_set_new(json_object_get(r, "model"), "publishable", json_false());
    intake_verdict v = judge(r, NULL);
    cr_assert_eq(v.outcome, INTAKE_REJECTED);
    cr_assert(has_reason(&v, "backend check failed") && has_reason(&v, "local model"), "both reasons listed");
    intake_verdict_free(&v);
    intake_config cfg;
    intake_config_default(&cfg);
    char list[] = "rocm,cuda";
    cr_assert(intake_parse_backends(&cfg, list));
    r = receipt();
    json_object_set_new(json_object_get(r, "backend"), "name", json_string("rocm"));
    v = judge(r, &cfg);
    cr_assert_eq(v.outcome, INTAKE_STANDARD, "ROCm where a board lists it");
    intake_verdict_free(&v);
    r = receipt();
    json_object_set_new(json_object_get(r, "model"), "id", json_string("../etc"));
    v = judge(r, NULL);
    cr_assert(has_reason(&v, "not a public checkpoint id"));
    intake_verdict_free(&v);
    cr_assert(intake_parse_accept(&cfg, "v1"));
    v = judge(receipt(), &cfg);
    cr_assert(has_reason(&v, "does not accept community-v2"));
    intake_verdict_free(&v);
    cr_assert_not(intake_parse_accept(&cfg, "v3"));
}

Test(intake, server_text_that_leaks_is_rejected_by_the_privacy_check) {
    json_t *r = receipt();
    json_object_set_new(json_object_get(r, "manifest"), "reason", json_string("loaded /home/alice/models/x.gguf on gpu-node-7.corp.example"));
    intake_verdict v = judge(r, NULL);
    cr_assert_eq(v.outcome, INTAKE_REJECTED);
    cr_assert_str_eq(v.codes[0], "privacy", "%s", json_dumps(v.reasons, 0));
    char *text = json_dumps(v.reasons, 0);
    cr_assert_null(strstr(text, "alice"), "the reason never repeats the text");
    free(text);
    intake_verdict_free(&v);
}

Test(intake, valid_but_not_complete_standard_goes_to_review) {
    json_t *r = receipt();
    json_object_set_new(json_object_get(r, "manifest"), "rank_count", json_integer(3));
    json_array_clear(json_object_get(json_object_get(r, "hardware"), "gpus"));
    intake_verdict v = judge(r, NULL);
    cr_assert_eq(v.outcome, INTAKE_REVIEW);
    cr_assert(has_reason(&v, "rank count") && has_reason(&v, "no GPU named"), "%s", json_dumps(v.reasons, 0));
    intake_verdict_free(&v);
    r = receipt();
    json_object_set_new(json_object_get(r, "backend"), "name", json_string("cpu"));
    json_array_clear(json_object_get(json_object_get(r, "hardware"), "gpus"));
    v = judge(r, NULL);
    cr_assert_eq(v.outcome, INTAKE_STANDARD, "a CPU run names no GPU");
    intake_verdict_free(&v);
    r = receipt();
    json_object_set_new(json_object_get(r, "model"), "revision", json_string("unknown"));
    json_array_clear(json_object_get(json_object_get(r, "model"), "checkpoint_hashes"));
    v = judge(r, NULL);
    cr_assert(v.outcome == INTAKE_REVIEW && has_reason(&v, "no checkpoint revision") && has_reason(&v, "no checkpoint digest"));
    intake_verdict_free(&v);
}

Test(params, dense_and_mixture_of_experts_from_config) {
    json_t *llama = json_loads("{\"hidden_size\":2048,\"intermediate_size\":8192,\"num_attention_heads\":32,"
                               "\"num_hidden_layers\":16,\"num_key_value_heads\":8,\"vocab_size\":128256,"
                               "\"tie_word_embeddings\":true}", 0, NULL);
    int64_t total, active;
    cr_assert(params_from_config(llama, &total, &active));
    cr_assert_eq(total, 1235814400, "Llama-3.2-1B: %lld", (long long)total);
    cr_assert_eq(active, total);
    json_t *mixtral = json_loads("{\"hidden_size\":4096,\"intermediate_size\":14336,\"num_attention_heads\":32,"
                                 "\"num_hidden_layers\":32,\"num_key_value_heads\":8,\"vocab_size\":32000,"
                                 "\"num_local_experts\":8,\"num_experts_per_tok\":2}", 0, NULL);
    cr_assert(params_from_config(mixtral, &total, &active));
    cr_assert_eq(total, 46702792704LL, "Mixtral-8x7B: %lld", (long long)total);
    cr_assert_eq(active, 12879925248LL, "%lld", (long long)active);
    json_t *info = json_loads("{\"safetensors\":{\"total\":46700000000}}", 0, NULL);
    param_counts p = params_from_hub(info, mixtral);
    cr_assert(p.has_total && p.total == 46700000000LL, "the hub's published total is preferred");
    cr_assert(p.has_active && p.active == 46700000000LL - (46702792704LL - 12879925248LL));
    p = params_from_hub(info, NULL);
    cr_assert(p.has_total && !p.has_active, "no config: active unknown");
    json_t *mla = json_loads("{\"hidden_size\":7168,\"num_hidden_layers\":61,\"vocab_size\":129280,"
                             "\"num_attention_heads\":128,\"kv_lora_rank\":512,\"intermediate_size\":18432}", 0, NULL);
    cr_assert_not(params_from_config(mla, &total, &active), "latent attention is not this layout: unknown");
    json_t *name_only = json_loads("{\"_name_or_path\":\"org/model-7B\"}", 0, NULL);
    p = params_from_hub(NULL, name_only);
    cr_assert(!p.has_total && !p.has_active, "a name is never a size");
    json_decref(llama);
    json_decref(mixtral);
    json_decref(info);
    json_decref(mla);
    json_decref(name_only);
}

Test(metrics, prometheus_text) {
    board_metrics *m = metrics_new();
    metrics_count(m, METRIC_UPLOADS, "public");
    metrics_count(m, METRIC_UPLOADS, "public");
    metrics_count(m, METRIC_VALIDATION_FAILURES, "digest");
    metrics_observe(m, "upload", 0.003);
    buf b;
    buf_init(&b, 1u << 20);
    cr_assert_eq(metrics_render(m, &b), PACER_OK);
    cr_assert(strstr(b.data, "pacer_board_uploads_total{outcome=\"public\"} 2\n"));
    cr_assert(strstr(b.data, "pacer_board_validation_failures_total{reason=\"digest\"} 1\n"));
    cr_assert(strstr(b.data, "pacer_board_checkpoint_lookup_retries_total 0\n"));
    cr_assert(strstr(b.data, "pacer_board_request_duration_seconds_bucket{route=\"upload\",le=\"0.0025\"} 0\n"));
    cr_assert(strstr(b.data, "pacer_board_request_duration_seconds_bucket{route=\"upload\",le=\"0.005\"} 1\n"));
    cr_assert(strstr(b.data, "# TYPE pacer_board_request_duration_seconds histogram\n"));
    buf_free(&b);
    metrics_free(m);
}

Test(publish, board_urls) {
    char norm[PUBLISH_URL_MAX], err[256];
    cr_assert_eq(publish_url_check("https://board.example/", norm, err, sizeof err), PACER_OK);
    cr_assert_str_eq(norm, "https://board.example");
    cr_assert_eq(publish_url_check("http://127.0.0.1:8088", norm, err, sizeof err), PACER_OK);
    cr_assert_eq(publish_url_check("http://[::1]:8088/x", norm, err, sizeof err), PACER_OK);
    cr_assert_eq(publish_url_check("http://localhost", norm, err, sizeof err), PACER_OK);
    const char *bad[] = {"http://board.example", "http://127.0.0.1.evil.example", "ftp://x", "https://u:p@h",
                         "https://h/?q=1", "https://h/#f", "https://", "http://10.0.0.1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(publish_url_check(bad[i], norm, err, sizeof err), PACER_ERR_ARG, "%s", bad[i]);
}

Test(publish, refusals_follow_the_capabilities) {
    json_t *caps = json_loads("{\"suites\":[{\"id\":\"community-v2\",\"digest\":\"34a6896eb576cd8e70a10676bc0a0f3b716a03740"
                              "c23ae1bfc26868210bc79c0\"}],\"backends\":[\"cuda\",\"cpu\"],\"separate_rankings\":true}",
                              0, NULL);
    char err[256];
    json_t *r = receipt();
    cr_assert_eq(publish_check_receipt(r, caps, err, sizeof err), PACER_OK, "%s", err);
    json_object_set_new(json_object_get(r, "backend"), "name", json_string("rocm"));
    cr_assert_eq(publish_check_receipt(r, caps, err, sizeof err), PACER_ERR_UNSUPPORTED);
    cr_assert(strstr(err, "rocm"));
    json_object_set_new(json_object_get(r, "backend"), "name", json_string("cuda"));
    json_object_set_new(caps, "separate_rankings", json_false());
    cr_assert_eq(publish_check_receipt(r, caps, err, sizeof err), PACER_ERR_UNSUPPORTED, "v2 needs separate rankings");
    json_object_set_new(json_object_get(r, "model"), "publishable", json_false());
    cr_assert_eq(publish_check_receipt(r, NULL, err, sizeof err), PACER_ERR_UNSUPPORTED, "local: refused with no board");
    json_t *notes = json_array();
    json_object_set_new(r, "mode", json_string("managed"));
    json_array_clear(json_object_get(json_object_get(r, "hardware"), "gpus"));
    json_object_set_new(json_object_get(r, "model"), "revision", json_string("unknown"));
    publish_notes(r, notes);
    cr_assert_eq(json_array_size(notes), 2, "no GPU, no revision");
    json_decref(notes);
    json_decref(r);
    json_decref(caps);
}

Test(publish, credentials_are_private_and_bound_to_one_url) {
    char home[] = "/tmp/pacer-cred-XXXXXX", token[CREDENTIALS_TOKEN_MAX], url[CREDENTIALS_URL_MAX], path[4200];
    cr_assert_not_null(mkdtemp(home));
    setenv("HOME", home, 1);
    cr_assert_eq(credentials_get("https://a.example", token), PACER_ERR_NOT_FOUND);
    cr_assert_eq(credentials_put("https://a.example", "tok-a"), PACER_OK);
    cr_assert_eq(credentials_put("https://b.example", "tok-b"), PACER_OK);
    cr_assert_eq(credentials_get("https://a.example", token), PACER_OK);
    cr_assert_str_eq(token, "tok-a");
    cr_assert_eq(credentials_get("https://a.example/api", token), PACER_ERR_NOT_FOUND, "another URL gets nothing");
    cr_assert_eq(credentials_default_url(url), PACER_OK);
    cr_assert_str_eq(url, "https://b.example");
    credentials_path(path, sizeof path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    chmod(path, 0644);
    cr_assert_eq(credentials_get("https://a.example", token), PACER_ERR_STATE, "readable by others: not used");
    chmod(path, 0600);
    bool removed;
    cr_assert_eq(credentials_remove("https://a.example", &removed), PACER_OK);
    cr_assert(removed);
    cr_assert_eq(credentials_get("https://a.example", token), PACER_ERR_NOT_FOUND);
    cr_assert_eq(credentials_get("https://b.example", token), PACER_OK);
    cr_assert_eq(credentials_remove(NULL, &removed), PACER_OK);
    cr_assert(removed && access(path, F_OK) != 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", home);
    cr_assert_eq(system(cmd), 0);
}
