/* fault_server.c - a scripted HTTP/1.1 server on 127.0.0.1 for tests and benchmarks. The
 * k-th request gets the k-th --script (the last one repeats): a status, headers, timed
 * chunks of bytes, then an end (close, reset, hang, cut). Format: tests/data/fault/README.md.
 * Paced mode (--paced N --interval-us US) serves every request N token events on a fixed
 * schedule from one thread, and can log when each event was actually sent, so that the
 * error of every gap a client measures can be computed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/clock.h"

typedef enum step_kind { STEP_CHUNK, STEP_REPEAT, STEP_PAD } step_kind;
typedef enum end_kind { END_CLOSE, END_RESET, END_HANG, END_CUT } end_kind;
typedef enum framing { FRAMING_CHUNKED, FRAMING_LENGTH, FRAMING_NONE } framing;

typedef struct step {
    step_kind kind;
    double delay_ms;
    long count;   /* repeat: times; pad: bytes */
    char *text;   /* decoded bytes (repeat: may hold {i} and {n}) */
    size_t len;
    char pad_char;
} step;

typedef struct script {
    const char *path;
    int status;
    char status_text[64];
    buf headers;
    framing framing;
    end_kind end;
    step *steps;
    size_t nsteps;
} script;

static script *scripts;
static size_t nscripts;
static atomic_long request_count;
static long pace_us = -1; /* >= 0: overrides every delay */
static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "fault_server: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

/* Decodes \n \r \t \s \\ \xHH escapes in place; returns the new length. */
static size_t unescape(char *s) {
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 's': *o++ = ' '; break;
        case '\\': *o++ = '\\'; break;
        case 'x': {
            char hex[3] = {p[1], p[1] ? p[2] : 0, 0};
            *o++ = (char)strtol(hex, NULL, 16);
            p += 2;
            break;
        }
        default: *o++ = '\\'; *o++ = *p; break;
        }
    }
    *o = '\0';
    return (size_t)(o - s);
}

static void script_add(script *sc, step st) {
    sc->steps = realloc(sc->steps, (sc->nsteps + 1) * sizeof *sc->steps);
    if (!sc->steps) die("%s", "out of memory");
    sc->steps[sc->nsteps++] = st;
}

static void script_load(script *sc, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open script %s", path);
    memset(sc, 0, sizeof *sc);
    sc->path = path;
    sc->status = 200;
    snprintf(sc->status_text, sizeof sc->status_text, "OK");
    buf_init(&sc->headers, 1 << 16);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (n == 0 || line[0] == '#') continue;
        char *arg = strchr(line, ' ');
        if (arg) *arg++ = '\0';
        else arg = line + n;
        step st = {0};
        if (strcmp(line, "status") == 0) {
            sc->status = atoi(arg);
            char *t = strchr(arg, ' ');
            snprintf(sc->status_text, sizeof sc->status_text, "%s", t ? t + 1 : "Status");
        } else if (strcmp(line, "header") == 0) {
            buf_appendf(&sc->headers, "%s\r\n", arg);
        } else if (strcmp(line, "framing") == 0) {
            sc->framing = strcmp(arg, "length") == 0 ? FRAMING_LENGTH : strcmp(arg, "none") == 0 ? FRAMING_NONE : FRAMING_CHUNKED;
        } else if (strcmp(line, "end") == 0) {
            sc->end = strcmp(arg, "reset") == 0 ? END_RESET : strcmp(arg, "hang") == 0 ? END_HANG
                    : strcmp(arg, "cut") == 0 ? END_CUT : END_CLOSE;
        } else if (strcmp(line, "chunk") == 0 || strcmp(line, "repeat") == 0) {
            char *end;
            st.kind = line[0] == 'c' ? STEP_CHUNK : STEP_REPEAT;
            st.count = 1;
            if (st.kind == STEP_REPEAT) st.count = strtol(arg, &end, 10), arg = end + (*end == ' ');
            st.delay_ms = strtod(arg, &end);
            arg = end + (*end == ' ');
            st.text = strdup(arg);
            st.len = unescape(st.text);
            script_add(sc, st);
        } else if (strcmp(line, "pad") == 0) {
            char *end;
            st.kind = STEP_PAD;
            st.delay_ms = strtod(arg, &end);
            st.count = strtol(end, &end, 10);
            st.pad_char = end[0] == ' ' && end[1] ? end[1] : 'a';
            script_add(sc, st);
        } else {
            die("unknown script command in %s", path);
        }
    }
    free(line);
    fclose(f);
}

/* Expands {prompt40} (any step) and {i} and {n} (repeat steps) into out. */
static void expand(const step *st, long i, const char *prompt40, buf *out) {
    buf_reset(out);
    const char *s = st->text, *e = st->text + st->len;
    bool rep = st->kind == STEP_REPEAT;
    while (s < e) {
        const char *brace = memchr(s, '{', (size_t)(e - s));
        if (!brace) brace = e;
        buf_append(out, s, (size_t)(brace - s));
        s = brace;
        if (s == e) break;
        if (rep && e - s >= 3 && memcmp(s, "{i}", 3) == 0) buf_appendf(out, "%ld", i), s += 3;
        else if (rep && e - s >= 3 && memcmp(s, "{n}", 3) == 0) buf_appendf(out, "%ld", st->count), s += 3;
        else if (e - s >= 10 && memcmp(s, "{prompt40}", 10) == 0) buf_append_str(out, prompt40), s += 10;
        else buf_append(out, s, 1), s++;
    }
}

/* What {prompt40} stands for: the first 40 characters of the prompt the request carried
 * ("prompt", or the content of the last message), escaped for a JSON string. */
static void request_prompt40(const char *body, char *out, size_t n) {
    out[0] = '\0';
    json_t *root = json_loads(body, 0, NULL), *msgs = json_object_get(root, "messages");
    const json_t *p = json_object_get(root, "prompt");
    if (!json_is_string(p)) p = json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "content");
    if (json_is_string(p)) {
        const char *t = json_string_value(p);
        size_t len = 0;
        for (int chars = 0; t[len] && chars < 40; chars++)
            for (len++; ((unsigned char)t[len] & 0xC0) == 0x80; len++) {}
        json_t *cut = json_stringn(t, len);
        char *q = cut ? json_dumps(cut, JSON_ENCODE_ANY) : NULL;
        if (q && strlen(q) >= 2) snprintf(out, n, "%.*s", (int)(strlen(q) - 2), q + 1);
        free(q);
        json_decref(cut);
    }
    json_decref(root);
}

static bool send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Pieces with no delay between them leave in one write: a server that is not pacing has no
 * reason to spend a send() per event (and a client reading such a stream meets what a fast
 * server does, several events per read). The queue goes out when it reaches this size,
 * before any wait, and before the end. Paced mode (--paced) still sends event by event. */
#define QUEUE_FLUSH_BYTES 65536

static bool queue_flush(int fd, buf *queue) {
    bool ok = send_all(fd, queue->data, queue->len);
    buf_reset(queue);
    return ok;
}

/* Queues one piece in the script's framing; sends the queue once it is full. */
static bool send_piece(int fd, framing fr, const char *p, size_t n, buf *queue) {
    if (fr == FRAMING_CHUNKED && !n) return true; /* an empty chunk would end the body */
    if (fr == FRAMING_CHUNKED) buf_appendf(queue, "%zx\r\n", n);
    if (buf_append(queue, p, n)) return false;
    if (fr == FRAMING_CHUNKED) buf_append(queue, "\r\n", 2);
    return queue->len < QUEUE_FLUSH_BYTES || queue_flush(fd, queue);
}

/* Total body bytes of a script (for Content-Length framing). */
static size_t script_body_len(const script *sc, const char *prompt40) {
    size_t total = 0;
    buf tmp;
    buf_init(&tmp, 1 << 20);
    for (size_t k = 0; k < sc->nsteps; k++) {
        const step *st = &sc->steps[k];
        if (st->kind == STEP_PAD) total += (size_t)st->count;
        else if (st->kind == STEP_CHUNK && !memmem(st->text, st->len, "{prompt40}", 10)) total += st->len;
        else
            for (long i = 0; i < st->count; i++) expand(st, i, prompt40, &tmp), total += tmp.len;
    }
    buf_free(&tmp);
    return total;
}

/* Waits for the next piece's time; what is queued goes out first when there is a wait. */
static bool wait_until(int fd, buf *queue, int64_t *target, double delay_ms) {
    double d = pace_us >= 0 ? (double)pace_us / 1000.0 : delay_ms;
    if (d <= 0) return true;
    if (queue->len && !queue_flush(fd, queue)) return false;
    *target += (int64_t)(d * 1e6);
    int64_t left = *target - clock_now_ns();
    if (left > 0) clock_sleep_ns(left);
    return true;
}

static void script_play(const script *sc, int fd, const char *prompt40) {
    buf head, queue, piece;
    buf_init(&head, 1 << 17);
    buf_init(&queue, (1 << 21) + 64);
    buf_init(&piece, 1 << 20);
    buf_appendf(&head, "HTTP/1.1 %d %s\r\n", sc->status, sc->status_text);
    buf_append(&head, sc->headers.data ? sc->headers.data : "", sc->headers.len);
    buf_append_str(&head, "Connection: close\r\n");
    if (sc->framing == FRAMING_CHUNKED) buf_append_str(&head, "Transfer-Encoding: chunked\r\n");
    if (sc->framing == FRAMING_LENGTH)
        buf_appendf(&head, "Content-Length: %zu\r\n", script_body_len(sc, prompt40) + (sc->end == END_CUT ? 100 : 0));
    buf_append_str(&head, "\r\n");
    bool ok = send_all(fd, head.data, head.len);
    int64_t target = clock_now_ns();
    char padbuf[65536];
    for (size_t k = 0; ok && k < sc->nsteps; k++) {
        const step *st = &sc->steps[k];
        if (st->kind == STEP_CHUNK) {
            ok = wait_until(fd, &queue, &target, st->delay_ms);
            if (!ok) break;
            if (memmem(st->text, st->len, "{prompt40}", 10)) {
                expand(st, 0, prompt40, &piece);
                ok = send_piece(fd, sc->framing, piece.data ? piece.data : "", piece.len, &queue);
            } else {
                ok = send_piece(fd, sc->framing, st->text, st->len, &queue);
            }
        } else if (st->kind == STEP_REPEAT) {
            for (long i = 0; ok && i < st->count; i++) {
                if (!(ok = wait_until(fd, &queue, &target, st->delay_ms))) break;
                expand(st, i, prompt40, &piece);
                ok = send_piece(fd, sc->framing, piece.data, piece.len, &queue);
            }
        } else {
            ok = wait_until(fd, &queue, &target, st->delay_ms) && (!queue.len || queue_flush(fd, &queue));
            if (!ok) break;
            memset(padbuf, st->pad_char, sizeof padbuf);
            if (sc->framing == FRAMING_CHUNKED) {
                char h[32];
                int hn = snprintf(h, sizeof h, "%lx\r\n", st->count);
                ok = send_all(fd, h, (size_t)hn);
            }
            for (long left = st->count; ok && left > 0; left -= (long)sizeof padbuf)
                ok = send_all(fd, padbuf, left < (long)sizeof padbuf ? (size_t)left : sizeof padbuf);
            if (ok && sc->framing == FRAMING_CHUNKED) ok = send_all(fd, "\r\n", 2);
        }
    }
    if (ok && sc->end == END_CLOSE && sc->framing == FRAMING_CHUNKED) buf_append(&queue, "0\r\n\r\n", 5);
    if (ok && queue.len) ok = queue_flush(fd, &queue);
    if (ok) {
        switch (sc->end) {
        case END_CLOSE: break; /* the final 0-chunk went with the queue */
        case END_CUT:
            if (sc->framing == FRAMING_CHUNKED) send_all(fd, "100\r\npartial", 12);
            break;
        case END_RESET: {
            struct linger lg = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            break;
        }
        case END_HANG: {
            /* keep the connection open, silent, until the client gives up (at most 10 min) */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            char sink[4096];
            int64_t until = clock_now_ns() + 600 * (int64_t)1000000000;
            while (clock_now_ns() < until && poll(&p, 1, 1000) >= 0)
                if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && recv(fd, sink, sizeof sink, 0) <= 0) break;
            break;
        }
        }
    }
    buf_free(&head);
    buf_free(&queue);
    buf_free(&piece);
}

/* Reads the request head and body; returns false when the client sent nothing usable. */
static bool read_request(int fd, buf *req, size_t *body_at) {
    char chunk[8192];
    char *hend = NULL;
    while (!hend) {
        ssize_t r = recv(fd, chunk, sizeof chunk, 0);
        if (r <= 0 || buf_append(req, chunk, (size_t)r)) return false;
        hend = strstr(req->data, "\r\n\r\n");
    }
    *body_at = (size_t)(hend + 4 - req->data);
    size_t want = 0;
    for (char *p = req->data; p && p < hend; p = strstr(p, "\r\n"), p = p ? p + 2 : NULL)
        if (strncasecmp(p, "Content-Length:", 15) == 0) want = strtoul(p + 15, NULL, 10);
    while (req->len - *body_at < want) {
        ssize_t r = recv(fd, chunk, sizeof chunk, 0);
        if (r <= 0 || buf_append(req, chunk, (size_t)r)) return false;
    }
    return true;
}

static void *serve_conn(void *arg) {
    int fd = (int)(intptr_t)arg;
    buf req;
    buf_init(&req, 1 << 22);
    size_t body_at = 0;
    if (read_request(fd, &req, &body_at)) {
        long k = atomic_fetch_add(&request_count, 1);
        const script *sc = &scripts[(size_t)k < nscripts ? (size_t)k : nscripts - 1];
        if (log_file) {
            pthread_mutex_lock(&log_lock);
            char *eol = strstr(req.data, "\r\n");
            fprintf(log_file, "%.*s\t%s\t%s\n", (int)(eol - req.data), req.data, sc->path, req.data + body_at);
            fflush(log_file);
            pthread_mutex_unlock(&log_lock);
        }
        char prompt40[512];
        request_prompt40(req.data + body_at, prompt40, sizeof prompt40);
        script_play(sc, fd, prompt40);
    }
    buf_free(&req);
    close(fd);
    return NULL;
}

/* ---- paced mode ---- */

#define PACED_EVENT                                                                                            \
    "data: {\"id\":\"cmpl-paced\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"paced\"," \
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},\"finish_reason\":null}]}\n\n"

typedef struct paced_stream {
    int fd;
    buf req;
    bool streaming;
    long seed;        /* the request's "seed", -1 when none */
    long sent;        /* events sent */
    int64_t t0, due;  /* first event's schedule; next event's */
    int64_t *sent_ns; /* when each event went out (clock_now_ns) */
    int heap_at;      /* index in the schedule heap; -1 when not in it */
    bool waiting;     /* begun, waiting for the other streams of the first --phases N */
    struct paced_stream *next_done; /* ended, its send-log line not yet written */
} paced_stream;

static long paced_tokens;
static int64_t paced_interval_ns;
static long paced_phases;      /* > 0: stream j's events fall (j mod N) / N of an interval after the first stream's */
static long paced_streams;     /* streams begun so far (j) */
static int64_t paced_epoch;    /* the first stream's first due time */
static paced_stream **paced_waiting; /* the first paced_phases streams, until the last is in */
#define PACED_START_NS 20000000      /* from the last of them to the first event */
static bool paced_realtime;    /* the thread at SCHED_FIFO 1 where allowed */
/* The thread sleeps until this long before an event is due, then watches the clock: a
 * sleeping thread wakes some microseconds late, and the server's lateness would show in
 * every gap a client measures against the interval. Short: at SCHED_FIFO a thread that
 * spins most of the time is throttled by the kernel (50 ms in every second by default). */
static int64_t paced_spin_ns = 5000; /* --spin-us */
static bool paced_spin;        /* --spin 1: never sleep; watch the clock and the sockets all the time */
static FILE *paced_log;
static paced_stream *paced_done; /* ended streams whose send-log lines wait for a quiet moment */
static volatile sig_atomic_t paced_stop;
static paced_stream **paced_heap;
static int paced_heap_n;

static void heap_swap(int a, int b) {
    paced_stream *t = paced_heap[a];
    paced_heap[a] = paced_heap[b];
    paced_heap[b] = t;
    paced_heap[a]->heap_at = a;
    paced_heap[b]->heap_at = b;
}

static void heap_push(paced_stream *s) {
    int i = paced_heap_n++;
    paced_heap[i] = s;
    s->heap_at = i;
    while (i > 0 && paced_heap[(i - 1) / 2]->due > paced_heap[i]->due) heap_swap(i, (i - 1) / 2), i = (i - 1) / 2;
}

static paced_stream *heap_pop(void) {
    paced_stream *top = paced_heap[0];
    heap_swap(0, --paced_heap_n);
    top->heap_at = -1;
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < paced_heap_n && paced_heap[l]->due < paced_heap[m]->due) m = l;
        if (r < paced_heap_n && paced_heap[r]->due < paced_heap[m]->due) m = r;
        if (m == i) break;
        heap_swap(i, m);
        i = m;
    }
    return top;
}

static void paced_close(int ep, paced_stream *s) {
    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    buf_free(&s->req);
    free(s->sent_ns);
    free(s);
}

/* The request is in: note its seed, send the head, schedule the first event now. Only a
 * POST gets a stream; anything else (a manifest lookup) is not found. */
static void paced_begin(int ep, paced_stream *s) {
    if (strncmp(s->req.data, "POST ", 5) != 0) {
        static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        send_all(s->fd, nf, sizeof nf - 1);
        paced_close(ep, s);
        return;
    }
    const char *seed = strstr(s->req.data, "\"seed\":");
    s->seed = seed ? strtol(seed + 7, NULL, 10) : -1;
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                               "Connection: close\r\n\r\n";
    send_all(s->fd, head, sizeof head - 1);
    s->streaming = true;
    s->sent_ns = calloc((size_t)paced_tokens, sizeof *s->sent_ns);
    int64_t now = clock_now_ns();
    long j = paced_streams++;
    if (paced_phases > 0 && j < paced_phases) {
        /* the first N streams wait for each other: their schedule starts when the last is in,
         * so that no event is due while the client is still opening streams */
        paced_waiting[j] = s;
        s->waiting = true;
        if (j + 1 < paced_phases) return;
        paced_epoch = now + PACED_START_NS;
        for (long k = 0; k < paced_phases; k++) {
            paced_waiting[k]->t0 = paced_waiting[k]->due = paced_epoch + k * paced_interval_ns / paced_phases;
            paced_waiting[k]->waiting = false;
            heap_push(paced_waiting[k]);
        }
        return;
    }
    s->t0 = now;
    if (paced_phases > 0) { /* a later stream: the first slot of its phase that is not past */
        int64_t phase = paced_epoch + (j % paced_phases) * paced_interval_ns / paced_phases;
        s->t0 = now <= phase ? phase : phase + ((now - phase + paced_interval_ns - 1) / paced_interval_ns) * paced_interval_ns;
    }
    s->due = s->t0;
    heap_push(s);
}

/* Sends the stream's next event; after the last, usage and [DONE], the send log, close. */
static void paced_send(int ep, paced_stream *s) {
    static const char ev[] = PACED_EVENT;
    s->sent_ns[s->sent] = clock_now_ns();
    bool ok = send_all(s->fd, ev, sizeof ev - 1);
    s->sent++;
    if (ok && s->sent < paced_tokens) {
        s->due = s->t0 + s->sent * paced_interval_ns;
        heap_push(s);
        return;
    }
    char tail[256];
    int n = snprintf(tail, sizeof tail, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
                                        "\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%ld}}\n\ndata: [DONE]\n\n",
                     paced_tokens);
    if (ok) send_all(s->fd, tail, (size_t)n);
    if (!paced_log) {
        paced_close(ep, s);
        return;
    }
    /* the line is written when no stream is in flight (or at SIGTERM): formatting 200
     * numbers here would make the events due meanwhile late */
    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
    s->next_done = paced_done;
    paced_done = s;
}

/* Writes the send-log lines of the ended streams and frees them. */
static void paced_log_done(void) {
    while (paced_done) {
        paced_stream *s = paced_done;
        paced_done = s->next_done;
        fprintf(paced_log, "%ld", s->seed);
        for (long i = 0; i < s->sent; i++) fprintf(paced_log, " %lld", (long long)s->sent_ns[i]);
        fputc('\n', paced_log);
        buf_free(&s->req);
        free(s->sent_ns);
        free(s);
    }
    fflush(paced_log);
}

static void paced_on_term(int sig) {
    (void)sig;
    paced_stop = 1;
}

/* Reads a request; false when the client went away (the stream is then closed). */
static bool paced_read(int ep, paced_stream *s) {
    char chunk[8192];
    ssize_t r = recv(s->fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (r < 0) return errno == EAGAIN || errno == EINTR;
    if (r == 0) return false;
    if (s->streaming) return true;
    if (buf_append(&s->req, chunk, (size_t)r)) return false;
    char *hend = strstr(s->req.data, "\r\n\r\n");
    if (!hend) return true;
    size_t want = 0;
    for (char *p = s->req.data; p && p < hend; p = strstr(p, "\r\n"), p = p ? p + 2 : NULL)
        if (strncasecmp(p, "Content-Length:", 15) == 0) want = strtoul(p + 15, NULL, 10);
    if (s->req.len - (size_t)(hend + 4 - s->req.data) < want) return true;
    paced_begin(ep, s);
    return true;
}

/* One thread: accepts, reads requests, and sends every due event in time order. */
static void paced_serve(int ls) {
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake-ups on time, not up to 50 us late */
    struct sched_param sp = {.sched_priority = 1};
    if (paced_realtime && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
        fprintf(stderr, "fault_server: real-time priority refused; normal scheduling\n");
    int ep = epoll_create1(0);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev);
    paced_heap = calloc(65536, sizeof *paced_heap);
    paced_waiting = calloc(paced_phases > 0 ? (size_t)paced_phases : 1, sizeof *paced_waiting);
    struct epoll_event evs[64];
    struct sigaction sa = {.sa_handler = paced_on_term}; /* no SA_RESTART: the wait returns */
    sigaction(SIGTERM, &sa, NULL);
    for (;;) {
        int64_t now = clock_now_ns();
        /* due within the spin: watch the clock (a readable socket waits those microseconds) */
        while (paced_heap_n > 0 && paced_heap[0]->due > now && paced_heap[0]->due - now <= paced_spin_ns)
            now = clock_now_ns();
        while (paced_heap_n > 0 && paced_heap[0]->due <= now) {
            paced_stream *s = heap_pop();
            paced_send(ep, s);
            now = clock_now_ns();
        }
        if (paced_done && (paced_heap_n == 0 || paced_stop)) paced_log_done();
        if (paced_stop) exit(0);
        int64_t wait = paced_heap_n > 0 ? paced_heap[0]->due - now - paced_spin_ns : 1000000000;
        if (wait < 0 || (paced_spin && paced_heap_n > 0)) wait = 0;
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        int n = epoll_pwait2(ep, evs, 64, &ts, NULL);
        for (int i = 0; i < n; i++) {
            paced_stream *s = evs[i].data.ptr;
            if (!s) {
                int fd = accept(ls, NULL, NULL);
                int one = 1;
                if (fd < 0) continue;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                s = calloc(1, sizeof *s);
                s->fd = fd;
                s->heap_at = -1;
                buf_init(&s->req, 1 << 22);
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
                epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                continue;
            }
            if (paced_read(ep, s)) continue;
            if (s->heap_at < 0 && !s->waiting) paced_close(ep, s);
            else epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL); /* the next send fails and closes it */
        }
    }
}

int main(int argc, char **argv) {
    const char *port_file = NULL, *log_path = NULL, *send_log_path = NULL;
    int port = 0;
    scripts = calloc((size_t)argc, sizeof *scripts);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die("missing value after %s", a);
        if (strcmp(a, "--port-file") == 0) port_file = v;
        else if (strcmp(a, "--port") == 0) port = atoi(v);
        else if (strcmp(a, "--script") == 0) script_load(&scripts[nscripts++], v);
        else if (strcmp(a, "--pace-us") == 0) pace_us = atol(v);
        else if (strcmp(a, "--log") == 0) log_path = v;
        else if (strcmp(a, "--paced") == 0) paced_tokens = atol(v);
        else if (strcmp(a, "--interval-us") == 0) paced_interval_ns = atol(v) * 1000;
        else if (strcmp(a, "--send-log") == 0) send_log_path = v;
        else if (strcmp(a, "--phases") == 0) paced_phases = atol(v);
        else if (strcmp(a, "--realtime") == 0) paced_realtime = strcmp(v, "1") == 0;
        else if (strcmp(a, "--spin") == 0) paced_spin = strcmp(v, "1") == 0;
        else if (strcmp(a, "--spin-us") == 0) paced_spin_ns = atol(v) * 1000;
        else die("unknown option %s (--port-file F --script S... [--port N] [--pace-us N] [--log F] | "
                 "--paced N --interval-us US [--send-log F] [--phases N] [--realtime 1] [--spin 1] [--spin-us US])", a);
        i++;
    }
    if (!nscripts && paced_tokens <= 0) die("%s", "at least one --script (or --paced N) is needed");
    if (paced_tokens > 0 && paced_interval_ns <= 0) die("%s", "--paced needs --interval-us");
    if (paced_phases < 0 || paced_phases > 65536) die("%s", "--phases: 0..65536");
    if (send_log_path && !(paced_log = fopen(send_log_path, "a"))) die("cannot open %s", send_log_path);
    signal(SIGPIPE, SIG_IGN);
    if (log_path && !(log_file = fopen(log_path, "a"))) die("cannot open %s", log_path);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, 512)) die("cannot listen: %s", strerror(errno));
    socklen_t sl = sizeof sa;
    getsockname(ls, (struct sockaddr *)&sa, &sl);
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f) die("cannot write %s", tmp);
        fprintf(f, "%d\n", ntohs(sa.sin_port));
        fclose(f);
        if (rename(tmp, port_file)) die("cannot rename to %s", port_file);
    } else {
        printf("%d\n", ntohs(sa.sin_port));
        fflush(stdout);
    }
    if (paced_tokens > 0) paced_serve(ls); /* does not return */
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            die("accept: %s", strerror(errno));
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, serve_conn, (void *)(intptr_t)fd)) close(fd);
        pthread_attr_destroy(&at);
    }
}
