/* cmd_request.c - 'pacer request': one measured streamed request against a running server,
 * printed as the sample's JSON on stdout. The debugging tool for everything built on attempts. */
#include <getopt.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "bench/attempt.h"
#include "bench/receipt.h"
#include "cli/cli.h"

static volatile sig_atomic_t request_cancel;
static void request_on_signal(int sig) { request_cancel = 1; }

static const char request_help[] =
    "usage: pacer request --server URL [options]\n"
    "\n"
    "Sends one streamed OpenAI-compatible request and prints the measured sample as JSON.\n"
    "\n"
    "  --server URL            base URL of the server (a trailing /v1 is accepted)\n"
    "  --route chat|completions  API route (default completions: /v1/completions)\n"
    "  --prompt TEXT           prompt text (default \"Hello\")\n"
    "  --prompt-file FILE      read the prompt from FILE\n"
    "  --tokens N              max_tokens (default 64)\n"
    "  --temperature T         default 0 (greedy)\n"
    "  --top-k K, --top-p P    sent only when > 0\n"
    "  --seed S                sampling seed, a 64-bit integer\n"
    "  --model-id M            the request's \"model\" field\n"
    "  --api-key KEY           sent as a Bearer token\n"
    "  --no-thinking           ask the server to turn reasoning off\n"
    "  --no-prompt-cache       ask the server not to reuse a cached prompt\n"
    "  --connect-timeout MS, --first-byte-timeout MS, --idle-timeout MS, --total-timeout MS\n"
    "\n"
    "Exit status: 0 ok, 2 incomplete, 3 failed, 130 cancelled (Ctrl-C), 1 usage error.\n";

/* Reads the prompt file into *text (replacing an earlier one); false after a message. */
static bool request_prompt_file(const char *path, char **text) {
    buf b;
    buf_init(&b, 64 << 20);
    pacer_err e = file_read_all(path, &b);
    if (e) {
        cli_error("cannot read %s: %s", path, pacer_strerror(e));
        buf_free(&b);
        return false;
    }
    free(*text);
    *text = buf_detach(&b);
    return true;
}

/* Parses the options into *req; 0 to go on, -1 for --help (printed), 1 after a message.
 * *prompt_text owns the prompt file's text. */
static int request_parse(int argc, char **argv, attempt_request *req, char **prompt_text) {
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'},           {"no-thinking", no_argument, 0, 'N'},
        {"no-prompt-cache", no_argument, 0, 'C'}, {"server", required_argument, 0, 'u'},
        {"route", required_argument, 0, 'r'},     {"prompt", required_argument, 0, 'p'},
        {"prompt-file", required_argument, 0, 'f'}, {"model-id", required_argument, 0, 'm'},
        {"api-key", required_argument, 0, 'K'},   {"tokens", required_argument, 0, 'n'},
        {"temperature", required_argument, 0, 't'}, {"top-k", required_argument, 0, 'k'},
        {"top-p", required_argument, 0, 'P'},     {"seed", required_argument, 0, 's'},
        {"connect-timeout", required_argument, 0, '1'}, {"first-byte-timeout", required_argument, 0, '2'},
        {"idle-timeout", required_argument, 0, '3'}, {"total-timeout", required_argument, 0, '4'},
        {0, 0, 0, 0}};
    int c, at;
    optind = 1;
    opterr = 0;
    while ((at = optind, c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'h': fputs(request_help, stdout); return -1;
        case 'N': req->disable_thinking = true; break;
        case 'C': req->disable_prompt_cache = true; break;
        case 'u': req->server_url = optarg; break;
        case 'r':
            if (strcmp(optarg, "chat") == 0) req->route = ATTEMPT_ROUTE_CHAT;
            else if (strcmp(optarg, "completions") == 0) req->route = ATTEMPT_ROUTE_COMPLETIONS;
            else {
                cli_error("--route: '%s' is not chat or completions", optarg);
                return 1;
            }
            break;
        case 'p': req->prompt = optarg; break;
        case 'f':
            if (!request_prompt_file(optarg, prompt_text)) return 1;
            req->prompt = *prompt_text;
            break;
        case 'm': req->model_id = optarg; break;
        case 'K': req->api_key = optarg; break;
        case 'n': ok = parse_int(optarg, 1, INT32_MAX, &req->max_tokens); break;
        case 't': ok = parse_double(optarg, 0, 1e6, &req->temperature); break;
        case 'k': ok = parse_int(optarg, 0, INT32_MAX, &req->top_k); break;
        case 'P': ok = parse_double(optarg, 0, 1e6, &req->top_p); break;
        case 's': ok = req->has_seed = parse_i64(optarg, INT64_MIN, INT64_MAX, &req->seed); break;
        case '1': ok = parse_i64(optarg, 1, INT64_MAX / 1000000, &req->connect_timeout_ms); break;
        case '2': ok = parse_i64(optarg, 1, INT64_MAX / 1000000, &req->first_byte_timeout_ms); break;
        case '3': ok = parse_i64(optarg, 1, INT64_MAX / 1000000, &req->idle_timeout_ms); break;
        case '4': ok = parse_i64(optarg, 1, INT64_MAX / 1000000, &req->total_timeout_ms); break;
        case ':': cli_error("%s needs a value (see 'pacer request --help')", argv[at]); return 1;
        default: cli_error("unknown option '%s' (see 'pacer request --help')", argv[at]); return 1;
        }
        if (!ok) {
            cli_error("%s: '%s' is not a valid number", argv[at], optarg);
            return 1;
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s' (see 'pacer request --help')", argv[optind]);
        return 1;
    }
    return 0;
}

int cmd_request(int argc, char **argv) {
    attempt_request req = {.route = ATTEMPT_ROUTE_COMPLETIONS, .prompt = "Hello", .max_tokens = 64};
    char *prompt_file_text = NULL;
    int rc = request_parse(argc, argv, &req, &prompt_file_text);
    if (rc) {
        rc = rc < 0 ? 0 : 1;
        goto out;
    }
    rc = 1;
    if (!req.server_url) {
        cli_error("--server URL is required (see 'pacer request --help')");
        goto out;
    }
    struct sigaction sa = {.sa_handler = request_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    req.cancel_flag = &request_cancel;
    attempt_sample s;
    if (attempt_run(&req, &s)) {
        cli_error("%s", s.reason);
        goto out;
    }
    /* the receipt's own attempt fields (index 0, not a warm-up), with the drafting counts
     * a receipt keeps in its drafts file */
    json_t *j = receipt_attempt_to_json(&s, 0, false, req.has_seed, req.seed);
    if (j) json_object_set_new(j, "drafts", receipt_drafts_counts(&s));
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    if (text) printf("%s\n", text);
    free(text);
    json_decref(j);
    static const int exit_codes[] = {0, 2, 3, 130};
    rc = exit_codes[s.status];
    if (s.status != ATTEMPT_OK)
        cli_error("%s: %s%s%s", attempt_status_name(s.status), s.reason, s.server_message[0] ? ": " : "", s.server_message);
out:
    free(prompt_file_text);
    return rc;
}
