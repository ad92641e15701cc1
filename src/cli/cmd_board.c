/* cmd_board.c - 'pacer board': the results board's receiver, and its administration on the
 * board's own machine (upload tokens, review, approve, reject, withdraw), all over the same
 * store (--db FILE, SQLite, or --pg CONNINFO, PostgreSQL). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "base/log.h"
#include "board/board.h"
#include "cli/cli.h"

static const char board_usage[] =
    "usage: pacer board [--db FILE | --pg CONNINFO] [--listen ADDR:PORT] [--hub URL] [--accept v1,v2]\n"
    "                   [--accept-backends cuda,mlx,cpu,...] [--quota N] [--hub-retry S] [--public-url URL]\n"
    "                   [--threads N] [--port-file FILE]\n"
    "       pacer board token create NAME [--db FILE | --pg CONNINFO]\n"
    "       pacer board review [ID] [--db FILE | --pg CONNINFO]\n"
    "       pacer board approve|reject|withdraw ID [--reason TEXT] [--db FILE | --pg CONNINFO]\n\n"
    "The receiver of 'pacer bench publish': validates every upload (schema, suite digest, the rules of\n"
    "its own version, every aggregate recomputed), publishes complete standard runs of public\n"
    "checkpoints and keeps the rest for review. Defaults: --db board.db, --listen 127.0.0.1:8088,\n"
    "--hub " BOARD_DEFAULT_HUB ", --accept v1,v2 (ranked apart), --accept-backends cuda,mlx,cpu\n"
    "(ROCm only when listed), --quota 20 uploads a day per profile, --hub-retry 30 (seconds before\n"
    "the first retry of an unavailable hub; doubling up to an hour).\n"
    "'token create' prints a new upload token once (only its SHA-256 is stored).\n";

typedef struct board_args {
    store_config store;
    const char *listen, *hub, *public_url, *port_file, *reason;
    char *accept, *backends;
    int quota, threads;
    int64_t hub_retry_s;
} board_args;

static volatile sig_atomic_t board_stop = 0;
static void board_on_signal(int sig) { board_stop = sig; }

/* Parses the options every form shares; the positional words are left at argv[optind..]. */
static int board_parse(int argc, char **argv, board_args *a) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},       {"pg", required_argument, 0, 'p'},
        {"listen", required_argument, 0, 'l'},   {"hub", required_argument, 0, 'H'},
        {"accept", required_argument, 0, 'a'},   {"accept-backends", required_argument, 0, 'b'},
        {"quota", required_argument, 0, 'q'},    {"hub-retry", required_argument, 0, 'r'},
        {"public-url", required_argument, 0, 'u'}, {"threads", required_argument, 0, 't'},
        {"port-file", required_argument, 0, 'P'}, {"reason", required_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->store = (store_config){STORE_SQLITE, "board.db", 0};
    a->listen = "127.0.0.1:8088";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': a->store.kind = STORE_SQLITE; a->store.target = optarg; break;
        case 'p': a->store.kind = STORE_POSTGRES; a->store.target = optarg; break;
        case 'l': a->listen = optarg; break;
        case 'H': a->hub = optarg; break;
        case 'a': a->accept = optarg; break;
        case 'b': a->backends = optarg; break;
        case 'q': if (!parse_int(optarg, 1, 1000000, &a->quota)) { cli_error("--quota: 1..1000000"); return -1; } break;
        case 'r': if (!parse_i64(optarg, 1, 86400, &a->hub_retry_s)) { cli_error("--hub-retry: seconds, 1..86400"); return -1; } break;
        case 'u': a->public_url = optarg; break;
        case 't': if (!parse_int(optarg, 1, 256, &a->threads)) { cli_error("--threads: 1..256"); return -1; } break;
        case 'P': a->port_file = optarg; break;
        case 'R': a->reason = optarg; break;
        case 'h': fputs(board_usage, stdout); return 1;
        default: fputs(board_usage, stderr); return -1;
        }
    }
    return 0;
}

static board_store *board_open_store(const board_args *a) {
    board_store *st = NULL;
    char err[512];
    if (store_open(&a->store, &st, err, sizeof err)) {
        cli_error("%s", err);
        return NULL;
    }
    return st;
}

/* ADDR:PORT with an IPv4 address. */
static int parse_listen(const char *s, char *host, size_t n, int *port) {
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= n || colon == s || !parse_int(colon + 1, 0, 65535, port)) return -1;
    snprintf(host, n, "%.*s", (int)(colon - s), s);
    return 0;
}

static int board_serve(board_args *a) {
    char host[64], err[512];
    int port;
    if (parse_listen(a->listen, host, sizeof host, &port)) { cli_error("--listen: expected ADDR:PORT, e.g. 127.0.0.1:8088"); return 1; }
    board_config cfg = {.hub = a->hub, .quota = a->quota, .hub_retry_s = a->hub_retry_s, .public_url = a->public_url};
    intake_config_default(&cfg.intake);
    if (a->accept && !intake_parse_accept(&cfg.intake, a->accept)) { cli_error("--accept: a list of v1, v2"); return 1; }
    if (a->backends && !intake_parse_backends(&cfg.intake, a->backends)) { cli_error("--accept-backends: a list like cuda,mlx,cpu"); return 1; }
    if (cfg.hub && strncmp(cfg.hub, "http://", 7) != 0 && strncmp(cfg.hub, "https://", 8) != 0) { cli_error("--hub: an http(s) URL"); return 1; }
    if (!getenv("PACER_LOG")) log_set_level(LOG_LEVEL_INFO);
    board_store *st = board_open_store(a);
    if (!st) return 1;
    cfg.store = st;
    board *b = NULL;
    int status = 1;
    if (board_new(&cfg, &b)) { cli_error("out of memory"); goto out; }
    signal(SIGINT, board_on_signal);
    signal(SIGTERM, board_on_signal);
    signal(SIGPIPE, SIG_IGN);
    if (board_listen(b, host, port, a->threads, err, sizeof err)) { cli_error("%s", err); goto out; }
    char portbuf[16];
    int n = snprintf(portbuf, sizeof portbuf, "%d", board_port(b));
    if (a->port_file && file_write_atomic(a->port_file, portbuf, (size_t)n, 0644)) {
        cli_error("cannot write %s", a->port_file);
        goto out;
    }
    fprintf(stderr, "pacer board: listening on http://%s:%d (%s store, schema %d, hub %s)\n", host, board_port(b),
            a->store.kind == STORE_POSTGRES ? "PostgreSQL" : "SQLite", store_schema_version(st), board_get_config(b)->hub);
    while (!board_stop) pause();
    fprintf(stderr, "pacer board: stopping\n");
    status = 0;
out:
    board_free(b);
    store_close(st);
    return status;
}

static int board_token(board_args *a, int argc, char **argv) {
    if (optind + 2 != argc || strcmp(argv[optind], "create") != 0) { cli_error("usage: pacer board token create NAME"); return 1; }
    const char *name = argv[optind + 1];
    if (!name[0] || strlen(name) >= STORE_NAME_MAX) { cli_error("token name: 1..%d bytes", STORE_NAME_MAX - 1); return 1; }
    board_store *st = board_open_store(a);
    if (!st) return 1;
    char token[BOARD_TOKEN_MAX];
    store_profile p;
    pacer_err rc = board_token_create(st, name, (int64_t)time(NULL), token, &p);
    if (rc == PACER_ERR_STATE) cli_error("a token named '%s' exists already", name);
    else if (rc) cli_error("cannot create the token: %s", pacer_strerror(rc));
    else {
        printf("%s\n", token);
        fprintf(stderr, "pacer board: token '%s' for profile %s; it is shown only now\n", name, p.id);
    }
    memset(token, 0, sizeof token);
    store_close(st);
    return rc ? 1 : 0;
}

static void print_submission(const store_submission *s) {
    printf("%s  %-18s %s  %s@%.12s  %s  %s\n", s->id, board_state_name(s->state), s->suite_id, s->model_id, s->revision,
           s->backend, s->display_name);
}

static int board_review(board_args *a, int argc, char **argv) {
    board_store *st = board_open_store(a);
    if (!st) return 1;
    int status = 0;
    if (optind < argc) {
        store_submission s;
        pacer_err rc = store_submission_get(st, argv[optind], false, &s);
        if (rc) { cli_error("%s: %s", argv[optind], rc == PACER_ERR_NOT_FOUND ? "no such submission" : pacer_strerror(rc)); status = 1; }
        else {
            print_submission(&s);
            printf("  hash %s\n  hardware %s x%d, cpu %s\n  reasons %s\n", s.canonical_hash, s.gpu_name[0] ? s.gpu_name : "-",
                   s.gpu_count, s.cpu_model[0] ? s.cpu_model : "-", s.reasons);
        }
        store_submission_clear(&s);
    } else {
        store_submission_list q;
        unsigned pending = 1u << BOARD_STATE_PENDING_REVIEW | 1u << BOARD_STATE_PENDING_CHECKPOINT;
        if (store_queue(st, pending, 1000, &q)) { cli_error("cannot read the review queue"); status = 1; }
        else {
            for (size_t i = 0; i < q.n; i++) print_submission(&q.items[i]);
            if (q.n == 0) printf("nothing waits for review\n");
            if (q.more) printf("(the first %zu shown)\n", q.n);
        }
        store_submission_list_free(&q);
    }
    store_close(st);
    return status;
}

/* approve, reject, withdraw: one row each of the states a submission may come from. */
static const struct {
    const char *verb;
    board_state to;
    unsigned from;
} board_decisions[] = {
    {"approve", BOARD_STATE_PUBLIC, 1u << BOARD_STATE_PENDING_REVIEW | 1u << BOARD_STATE_PENDING_CHECKPOINT},
    {"reject", BOARD_STATE_REJECTED,
     1u << BOARD_STATE_PENDING_REVIEW | 1u << BOARD_STATE_PENDING_CHECKPOINT | 1u << BOARD_STATE_PUBLIC},
    {"withdraw", BOARD_STATE_WITHDRAWN,
     1u << BOARD_STATE_PENDING_REVIEW | 1u << BOARD_STATE_PENDING_CHECKPOINT | 1u << BOARD_STATE_PUBLIC},
};

static int board_decide(board_args *a, const char *verb, int argc, char **argv) {
    size_t k = 0;
    while (strcmp(board_decisions[k].verb, verb) != 0) k++;
    if (optind + 1 != argc) { cli_error("usage: pacer board %s ID", verb); return 1; }
    const char *id = argv[optind];
    board_store *st = board_open_store(a);
    if (!st) return 1;
    char *reasons = NULL;
    if (a->reason) {
        json_t *r = json_pack("[s]", a->reason);
        reasons = r ? json_dumps(r, JSON_COMPACT) : NULL;
        json_decref(r);
    }
    pacer_err rc = store_submission_set_state(st, id, board_decisions[k].from, board_decisions[k].to, NULL, reasons,
                                              (int64_t)time(NULL));
    free(reasons);
    store_submission s;
    if (rc == PACER_ERR_NOT_FOUND) cli_error("%s: no such submission", id);
    else if (rc == PACER_ERR_STATE && store_submission_get(st, id, false, &s) == PACER_OK)
        cli_error("%s is %s: it cannot be %s", id, board_state_name(s.state),
                  board_decisions[k].to == BOARD_STATE_PUBLIC ? "approved" : board_decisions[k].to == BOARD_STATE_REJECTED ? "rejected" : "withdrawn");
    else if (rc) cli_error("%s: %s", id, pacer_strerror(rc));
    else printf("%s is %s\n", id, board_state_name(board_decisions[k].to));
    store_close(st);
    return rc ? 1 : 0;
}

int cmd_board(int argc, char **argv) {
    board_args a;
    int p = board_parse(argc, argv, &a);
    if (p) return p > 0 ? 0 : 1;
    if (optind >= argc) return board_serve(&a);
    const char *verb = argv[optind++];
    if (strcmp(verb, "token") == 0) return board_token(&a, argc, argv);
    if (strcmp(verb, "review") == 0) return board_review(&a, argc, argv);
    for (size_t k = 0; k < sizeof board_decisions / sizeof board_decisions[0]; k++)
        if (strcmp(verb, board_decisions[k].verb) == 0) return board_decide(&a, verb, argc, argv);
    cli_error("board: unknown command '%s'\n%s", verb, board_usage);
    return 1;
}
