/* bench_client.c - client CPU cost per streamed delivery: the fault server sends 100k SSE
 * deliveries as fast as the socket takes them, and attempt_run() in this process measures
 * them; cost = this process's user+sys CPU time (base/clock.h clock_cpu_s) / deliveries. Prints figures. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "bench/attempt.h"

#define BENCH_DELIVERIES 100000

int main(void) {
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char server[512], dir[] = "/tmp/pacer-bench-XXXXXX", script[600], port_file[600], url[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(server, sizeof server, "%s/tools/fault_server", build);
    snprintf(script, sizeof script, "%s/stream.script", dir);
    snprintf(port_file, sizeof port_file, "%s/port", dir);
    FILE *f = fopen(script, "w");
    if (!f) return 1;
    fprintf(f, "status 200 OK\nheader Content-Type: text/event-stream\n"
               "repeat %d 0 data: {\"id\":\"cmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
               "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok{i}\"},\"finish_reason\":null}]}\\n\\n\n"
               "chunk 0 data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\\n\\n\n"
               "chunk 0 data: [DONE]\\n\\n\nend close\n", BENCH_DELIVERIES, BENCH_DELIVERIES);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        execl(server, server, "--port-file", port_file, "--script", script, "--pace-us", "0", (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 200 && !port; i++) {
        FILE *pf = fopen(port_file, "r");
        if (pf) {
            if (fscanf(pf, "%d", &port) != 1) port = 0;
            fclose(pf);
        }
        if (!port) clock_sleep_ns(25000000);
    }
    int rc = 0;
    if (!port) {
        fprintf(stderr, "bench_client: %s did not start\n", server);
        rc = 1;
        goto out;
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    attempt_request req = {.server_url = url, .prompt = "x", .max_tokens = BENCH_DELIVERIES, .route = ATTEMPT_ROUTE_CHAT};
    for (int rep = 0; rep < 3; rep++) {
        attempt_sample s;
        double c0 = clock_cpu_s();
        int64_t t0 = clock_now_ns();
        attempt_run(&req, &s);
        double cpu = clock_cpu_s() - c0;
        double wall = (double)(clock_now_ns() - t0) / 1e9;
        printf("client %lld deliveries (%s): %.3f us CPU/delivery, %.0f deliveries/s per CPU second, wall %.3f s\n",
               (long long)s.deliveries, attempt_status_name(s.status),
               s.deliveries ? cpu * 1e6 / (double)s.deliveries : 0.0, s.deliveries ? (double)s.deliveries / cpu : 0.0,
               wall);
        if (s.status != ATTEMPT_OK) printf("  reason: %s\n", s.reason);
    }
out:
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    unlink(script);
    unlink(port_file);
    rmdir(dir);
    return rc;
}
