/* bench_load.c - the load client's figures, next to a plain client from the same library
 * (one thread per stream, each an attempt over http_perform) in the same run:
 *   - client CPU per delivery and deliveries per CPU second at 1, 64 and 256 streams,
 *     against the fault server sending as fast as the sockets take it;
 *   - timing fidelity at 256 streams each paced at 200 tok/s: every measured gap against
 *     the nominal interval and against the gap the server's send log shows; then the same
 *     with the clients at real-time priority (the load client's --realtime), and with the
 *     load client busy-polling (--busy-poll; the paced server spins too, --spin 1).
 * The client runs on the last CPU, the server on the one before (CPU 0, which takes most
 * interrupts, is left alone) when there are 4 or more; on 2 or 3, CPU 0 and 1; --cpus picks
 * others. Each figure is taken --reps times (default 3); min, median and max are printed.
 * Prints figures; asserts nothing. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json.h"
#include "bench/attempt.h"
#include "bench/load.h"
#include "bench/stats.h"

#define BENCH_REPS_MAX 9
#define BENCH_DELIVERIES 256000 /* per figure, spread over the streams */
#define FIDELITY_TOKENS 200
#define FIDELITY_INTERVAL_US 5000
#define SEED_BASE 1000

static const char *server_path; /* $FAULT_SERVER, else $BUILD/tools/fault_server */
static int bench_reps = 3;
static int cpu_client = -1, cpu_server = -1; /* --cpus */
static int fid_streams = 256;
static bool fid_together; /* every stream's events due at the same moments (no staggered phases) */
static char fid_scheduling[32]; /* the load client's scheduling in the last fidelity run, as its receipt says */
static bool realtime; /* the fidelity run's clients at SCHED_FIFO 1 (the load client: --realtime) */
static bool busy_poll; /* the fidelity run's load client busy-polls (--busy-poll); the server spins (--spin 1)
                        * unless at real-time priority (spinning, the kernel's real-time throttling would
                        * stop it for ~50 ms whenever another process waits for its core) */
static char tmp_dir[] = "/tmp/pacer-bench-load-XXXXXX";

static void pin_to(int cpu) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Starts the fault server with `args` (NULL-terminated) on its CPU; *port gets its port. */
static pid_t server_start(const char *const *args, int *port) {
    char port_file[600];
    const char *server = server_path;
    snprintf(port_file, sizeof port_file, "%s/port", tmp_dir);
    unlink(port_file);
    const char *argv[16] = {server, "--port-file", port_file};
    int n = 3;
    for (int i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        pin_to(cpu_server);
        execv(server, (char *const *)argv);
        _exit(127);
    }
    *port = 0;
    for (int i = 0; i < 400 && !*port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", port) != 1) *port = 0;
            fclose(f);
        }
        if (!*port) clock_sleep_ns(10000000);
    }
    return pid;
}

static void server_stop(pid_t pid) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* A script of `n` chat token events sent back to back, then usage and [DONE]. */
static void write_script(const char *path, int n) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "status 200 OK\nheader Content-Type: text/event-stream\n"
               "repeat %d 0 data: {\"id\":\"cmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
               "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok{i}\"},\"finish_reason\":null}]}\\n\\n\n"
               "chunk 0 data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
               "\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\\n\\n\n"
               "chunk 0 data: [DONE]\\n\\n\nend close\n", n, n);
    fclose(f);
}

static attempt_request bench_request(const char *url, int tokens) {
    return (attempt_request){.server_url = url, .model_id = "m", .route = ATTEMPT_ROUTE_CHAT, .prompt = "x",
                             .max_tokens = tokens, .temperature = 0.7};
}

/* One level of the load client: its receipt section (new reference) and calibration. */
static json_t *run_load(const char *url, int streams, int tokens, json_t **cal) {
    load_options o = {.kind = LOAD_CONCURRENCY, .n_levels = 1, .levels = {streams}, .requests = streams, .realtime = realtime,
                      .busy_poll = busy_poll,
                      .request = bench_request(url, tokens), .seed_base = SEED_BASE,
                      .rules = {2, tokens, false, 1}, .workload = "bench", .setting = "sampled"};
    load_result r;
    char err[256];
    if (load_run(&o, &r, err, sizeof err)) {
        fprintf(stderr, "bench_load: %s\n", err);
        return NULL;
    }
    *cal = r.calibration;
    return r.section;
}

typedef struct plain_stream {
    attempt_request req;
    attempt_sample s;
    int64_t *gaps;
    size_t n_gaps;
} plain_stream;

static void *plain_main(void *arg) {
    plain_stream *p = arg;
    struct sched_param sp = {.sched_priority = 1};
    if (realtime) pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    attempt_stream *st = NULL;
    http_response resp;
    http_response_init(&resp);
    if (attempt_stream_begin(&p->req, &p->s, (size_t)p->req.max_tokens + 64, &st) == PACER_OK) {
        pacer_err rc = http_perform(attempt_stream_http(st), &resp);
        attempt_stream_end(st, rc, &resp);
        size_t n;
        const int64_t *t = attempt_stream_times(st, &n);
        p->gaps = malloc((n ? n : 1) * sizeof *p->gaps);
        for (size_t i = 1; p->gaps && i < n; i++) p->gaps[p->n_gaps++] = t[i] - t[i - 1];
    }
    attempt_stream_free(st);
    http_response_free(&resp);
    return NULL;
}

/* The plain client: one thread per stream. Returns process CPU seconds; fills streams. */
static double run_plain(const char *url, int n, int tokens, plain_stream *ps) {
    pthread_t *th = calloc((size_t)n, sizeof *th);
    double c0 = clock_cpu_s();
    for (int i = 0; i < n; i++) {
        memset(&ps[i], 0, sizeof ps[i]);
        ps[i].req = bench_request(url, tokens);
        ps[i].req.has_seed = true;
        ps[i].req.seed = SEED_BASE + i + 1;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 256 * 1024);
        pthread_create(&th[i], &at, plain_main, &ps[i]);
        pthread_attr_destroy(&at);
    }
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    free(th);
    return clock_cpu_s() - c0;
}

static void print_range(const char *what, const double *v, int n, const char *unit) {
    stats_summary s;
    if (!stats_summarize(v, (size_t)n, &s)) return;
    printf("  %-44s median %10.3f  range %.3f - %.3f %s\n", what, s.median, s.min, s.max, unit);
}

static void print_load(void) {
    double la[3];
    if (getloadavg(la, 3) == 3) printf("  (load average now %.2f %.2f %.2f)\n", la[0], la[1], la[2]);
}

/* Client cost against the as-fast-as-possible server at `streams` streams. */
static void bench_cost(int streams) {
    char script[600];
    int per = BENCH_DELIVERIES / streams;
    snprintf(script, sizeof script, "%s/fast-%d.script", tmp_dir, per);
    write_script(script, per);
    const char *args[] = {"--script", script, "--pace-us", "0", NULL};
    int port;
    pid_t pid = server_start(args, &port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    double cost[BENCH_REPS_MAX], rate[BENCH_REPS_MAX], cal_cost[BENCH_REPS_MAX], cal_rate[BENCH_REPS_MAX],
        pcost[BENCH_REPS_MAX], prate[BENCH_REPS_MAX];
    int n = 0;
    plain_stream *ps = calloc((size_t)streams, sizeof *ps);
    for (int rep = 0; rep < bench_reps && port; rep++) {
        json_t *cal = NULL, *sec = run_load(url, streams, per, &cal);
        json_t *lv = json_array_get(json_object_get(sec, "levels"), 0), *c0 = json_array_get(json_object_get(cal, "levels"), 0);
        double deliveries = 0;
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(lv, "attempts"), i, a) deliveries += (double)json_get_int(a, "deliveries", 0);
        double cpu = (double)json_get_int(lv, "client_cpu_ns", 0) / 1e9;
        double pcpu = run_plain(url, streams, per, ps);
        double pdel = 0;
        for (int k = 0; k < streams; k++) pdel += (double)ps[k].s.deliveries, free(ps[k].gaps);
        if (deliveries > 0 && cpu > 0 && pdel > 0) {
            cost[n] = cpu * 1e6 / deliveries, rate[n] = deliveries / cpu;
            cal_cost[n] = json_get_num(c0, "cpu_ns_per_delivery", 0) / 1e3;
            cal_rate[n] = json_get_num(c0, "max_deliveries_per_s", 0);
            pcost[n] = pcpu * 1e6 / pdel, prate[n] = pdel / pcpu;
            n++;
        }
        json_decref(sec);
        json_decref(cal);
    }
    server_stop(pid);
    free(ps);
    printf("%d stream%s, %d deliveries each, server as fast as it can:\n", streams, streams == 1 ? "" : "s", per);
    print_range("pacer load client: CPU per delivery", cost, n, "us");
    print_range("pacer load client: deliveries per CPU second", rate, n, "/s");
    print_range("  calibration (loopback emitter): CPU/delivery", cal_cost, n, "us");
    print_range("  calibration: max deliveries per second", cal_rate, n, "/s");
    print_range("plain client, thread per stream: CPU/delivery", pcost, n, "us");
    print_range("plain client: deliveries per CPU second", prate, n, "/s");
    double ratio[BENCH_REPS_MAX];
    for (int k = 0; k < n; k++) ratio[k] = pcost[k] / cost[k];
    print_range("plain client CPU / pacer load client CPU", ratio, n, "x");
    print_load();
}

/* The server's send times by seed, from its send log: sent[seed - SEED_BASE - 1]. */
static int64_t **read_send_log(const char *path, int streams, size_t *count) {
    int64_t **sent = calloc((size_t)streams, sizeof *sent);
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        char *p = line, *end;
        long seed = strtol(p, &end, 10);
        int k = (int)(seed - SEED_BASE - 1);
        if (k < 0 || k >= streams || sent[k]) continue;
        sent[k] = calloc(FIDELITY_TOKENS + 1, sizeof **sent);
        size_t n = 0;
        for (p = end; n < FIDELITY_TOKENS; p = end) {
            long long v = strtoll(p, &end, 10);
            if (end == p) break;
            sent[k][n++] = v;
        }
        count[k] = n;
    }
    free(line);
    if (f) fclose(f);
    return sent;
}

/* |gap - nominal| and |gap - sent gap| of stream k's measured gaps, appended (us). */
static void add_errors(const int64_t *gaps, size_t n_gaps, const int64_t *sent, size_t n_sent, double *nom, double *act,
                       size_t *n) {
    for (size_t i = 0; i < n_gaps && i + 1 < n_sent; i++) {
        nom[*n] = fabs((double)(gaps[i] - FIDELITY_INTERVAL_US * 1000LL)) / 1e3;
        act[*n] = fabs((double)(gaps[i] - (sent[i + 1] - sent[i]))) / 1e3;
        ++*n;
    }
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double p99(double *v, size_t n) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_d);
    return stats_quantile_sorted(v, n, 0.99);
}

/* Timing fidelity: fid_streams streams, each 200 events 5 ms apart (staggered evenly over
 * the interval unless fid_together). Returns p99s (us) in out[5]: load client vs nominal, vs
 * sent; plain client vs nominal, vs sent; the server's own |gap sent - interval|. */
static bool bench_fidelity_once(double out[5]) {
    char log[600], tokens[16], interval[16], phases[16];
    snprintf(log, sizeof log, "%s/send.log", tmp_dir);
    snprintf(tokens, sizeof tokens, "%d", FIDELITY_TOKENS);
    snprintf(interval, sizeof interval, "%d", FIDELITY_INTERVAL_US);
    snprintf(phases, sizeof phases, "%d", fid_together ? 0 : fid_streams);
    size_t total = (size_t)fid_streams * FIDELITY_TOKENS;
    double *nom = malloc(total * sizeof *nom), *act = malloc(total * sizeof *act), *srv = malloc(total * sizeof *srv);
    size_t *counts = calloc((size_t)fid_streams, sizeof *counts);
    bool ok = nom && act && srv && counts;
    for (int client = 0; client < (busy_poll ? 1 : 2) && ok; client++) { /* busy-polling: the load client only */
        unlink(log);
        const char *args[] = {"--paced", tokens, "--interval-us", interval, "--send-log", log, "--phases", phases,
                              "--realtime", realtime ? "1" : "0", "--spin", busy_poll && !realtime ? "1" : "0", NULL};
        int port;
        pid_t pid = server_start(args, &port);
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
        plain_stream *ps = calloc((size_t)fid_streams, sizeof *ps);
        json_t *cal = NULL, *sec = NULL;
        if (client == 0) {
            sec = run_load(url, fid_streams, FIDELITY_TOKENS, &cal);
            snprintf(fid_scheduling, sizeof fid_scheduling, "%s",
                     json_get_str(json_array_get(json_object_get(sec, "levels"), 0), "client_scheduling", "?"));
        }
        else run_plain(url, fid_streams, FIDELITY_TOKENS, ps);
        server_stop(pid); /* the log is complete: every stream wrote its line as it ended */
        memset(counts, 0, (size_t)fid_streams * sizeof *counts);
        size_t n = 0, ns = 0;
        int64_t **sent = read_send_log(log, fid_streams, counts);
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(json_array_get(json_object_get(sec, "levels"), 0), "attempts"), i, a) {
            int k = (int)(json_get_int(a, "seed", 0) - SEED_BASE - 1);
            int64_t *d = NULL;
            size_t nd = 0;
            if (k >= 0 && k < fid_streams && sent[k] &&
                load_deltas_decode(json_get_str(a, "delivery_ns", ""), &d, &nd) == PACER_OK && nd > 1)
                add_errors(d + 1, nd - 1, sent[k], counts[k], nom, act, &n);
            free(d);
        }
        for (int k = 0; k < fid_streams; k++) {
            if (client == 1 && sent[k]) add_errors(ps[k].gaps, ps[k].n_gaps, sent[k], counts[k], nom, act, &n);
            for (size_t j = 1; client == 0 && sent[k] && j < counts[k]; j++)
                srv[ns++] = fabs((double)(sent[k][j] - sent[k][j - 1] - FIDELITY_INTERVAL_US * 1000LL)) / 1e3;
        }
        ok = n > total / 2; /* most gaps were matched to the server's log */
        out[client * 2] = p99(nom, n);
        out[client * 2 + 1] = p99(act, n);
        if (client == 0) out[4] = p99(srv, ns);
        for (int k = 0; k < fid_streams; k++) free(sent[k]), free(ps[k].gaps);
        free(sent);
        free(ps);
        json_decref(sec);
        json_decref(cal);
    }
    if (busy_poll) out[2] = out[3] = NAN;
    free(nom), free(act), free(srv), free(counts);
    return ok;
}

static void bench_fidelity(void) {
    double v[5][BENCH_REPS_MAX], out[5], ratio[BENCH_REPS_MAX];
    int n = 0;
    for (int rep = 0; rep < bench_reps; rep++)
        if (bench_fidelity_once(out)) {
            for (int k = 0; k < 5; k++) v[k][n] = out[k];
            ratio[n] = out[2] / out[0];
            n++;
        }
    printf("timing fidelity, %d streams x %d tokens every %d us (%.0f tok/s each, %s), p99 of |error| per gap%s%s:\n",
           fid_streams, FIDELITY_TOKENS, FIDELITY_INTERVAL_US, 1e6 / FIDELITY_INTERVAL_US,
           fid_together ? "all due together" : "phases staggered evenly over the interval",
           realtime ? ", clients and server at real-time priority (--realtime)" : "",
           !busy_poll ? "" : realtime ? ", load client busy-polling (--busy-poll)"
                                      : ", load client busy-polling (--busy-poll), server spinning (--spin 1)");
    print_range("pacer load client: |gap - interval|", v[0], n, "us");
    print_range("pacer load client: |gap - gap the server sent|", v[1], n, "us");
    if (!busy_poll) {
        print_range("plain client, thread per stream: |gap - interval|", v[2], n, "us");
        print_range("plain client: |gap - gap the server sent|", v[3], n, "us");
    }
    print_range("server: |gap sent - interval|", v[4], n, "us");
    if (!busy_poll) print_range("plain client error / pacer load client error", ratio, n, "x");
    printf("  (the load client's scheduling, as its receipt records it: %s)\n", fid_scheduling);
    print_load();
}

static int usage(void) {
    fprintf(stderr, "usage: bench_load [--streams N,N,...] [--reps N] [--only cost|fidelity]\n"
                    "                  [--fidelity-streams N] [--together 1] [--modes LIST] [--cpus C,S]\n"
                    "  (default: --streams 1,64,256 --reps 3 --fidelity-streams 256, both parts, phases\n"
                    "   staggered; the fault server is $FAULT_SERVER, else $BUILD/tools/fault_server)\n"
                    "  --cpus: the client's and the server's CPU (default: the last two with 4 or more\n"
                    "   CPUs, CPU 0 taking most interrupts; else 0,1)\n"
                    "  --modes: fidelity blocks, of normal, realtime, busy-poll, realtime+busy-poll\n"
                    "   (default: all four; busy-poll: the load client only, and the paced server\n"
                    "   spins unless at real-time priority; realtime: clients and server at SCHED_FIFO 1)\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *build_dir = getenv("BUILD") ? getenv("BUILD") : "build";
    static char server_buf[600];
    snprintf(server_buf, sizeof server_buf, "%s/tools/fault_server", build_dir);
    server_path = getenv("FAULT_SERVER") ? getenv("FAULT_SERVER") : server_buf;
    int levels[16] = {1, 64, 256}, n_levels = 3;
    static const char *const mode_names[] = {"normal", "realtime", "busy-poll", "realtime+busy-poll"};
    const char *modes[4];
    int n_modes = 4;
    memcpy(modes, mode_names, sizeof modes);
    bool cost = true, fidelity = true;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        if (strcmp(argv[i], "--streams") == 0) {
            n_levels = 0;
            for (char *p = (char *)v, *end; *p && n_levels < 16; p = end + (*end == ',')) {
                long k = strtol(p, &end, 10);
                if (end == p || k < 1 || k > 65536) return usage();
                levels[n_levels++] = (int)k;
            }
        } else if (strcmp(argv[i], "--reps") == 0) {
            bench_reps = atoi(v);
            if (bench_reps < 1 || bench_reps > BENCH_REPS_MAX) return usage();
        } else if (strcmp(argv[i], "--fidelity-streams") == 0) {
            fid_streams = atoi(v);
            if (fid_streams < 1 || fid_streams > 65536) return usage();
        } else if (strcmp(argv[i], "--modes") == 0) {
            n_modes = 0;
            for (const char *p = v; *p && n_modes < 4; p += strcspn(p, ","), p += *p == ',') {
                size_t len = strcspn(p, ",");
                int k = 0;
                while (k < 4 && (strlen(mode_names[k]) != len || strncmp(p, mode_names[k], len))) k++;
                if (k == 4) return usage();
                modes[n_modes++] = mode_names[k];
            }
            if (!n_modes) return usage();
        } else if (strcmp(argv[i], "--cpus") == 0) {
            long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
            if (sscanf(v, "%d,%d", &cpu_client, &cpu_server) != 2 || cpu_client < 0 || cpu_server < 0 ||
                cpu_client >= ncpu || cpu_server >= ncpu)
                return usage();
        } else if (strcmp(argv[i], "--together") == 0) {
            fid_together = strcmp(v, "1") == 0;
        } else if (strcmp(argv[i], "--only") == 0) {
            cost = strcmp(v, "cost") == 0, fidelity = strcmp(v, "fidelity") == 0;
            if (!cost && !fidelity) return usage();
        } else {
            return usage();
        }
        i++;
    }
    if (!mkdtemp(tmp_dir)) return 1;
    signal(SIGPIPE, SIG_IGN);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpu_client < 0) cpu_client = ncpu >= 4 ? (int)ncpu - 1 : 0, cpu_server = ncpu >= 4 ? (int)ncpu - 2 : 1;
    pin_to(cpu_client);
    printf("load client benchmark (%d repetitions of each figure; client on CPU %d, server on CPU %d)\n", bench_reps,
           cpu_client, cpu_server);
    for (int i = 0; cost && i < n_levels; i++) bench_cost(levels[i]);
    for (int k = 0; fidelity && k < n_modes; k++) {
        realtime = strstr(modes[k], "realtime") != NULL; /* the scheduler out of the way where allowed */
        busy_poll = strstr(modes[k], "busy-poll") != NULL; /* no wake-up between arrival and time stamp */
        bench_fidelity();
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    return system(cmd) == 0 ? 0 : 1;
}
