/* multi.c - one thread, many streams: curl_multi_socket_action() told by epoll which socket
 * is ready, epoll told by curl which sockets and timeout it wants. The first-byte and idle
 * deadlines and the cancel flags, which curl does not know, are checked every few
 * milliseconds. Body pieces are time-stamped in the write callback (net/http.c's), the
 * moment curl hands them over, so a delivery is never stamped with the time of a wake-up
 * that other sockets' work had already delayed. */
#include "net/multi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "net/http_xfer.h"

#define MULTI_EVENTS 256
#define MULTI_SWEEP_NS 5000000 /* deadline and cancel checks */
/* Body bytes one transfer may take per round of the loop. curl reads a readable socket
 * up to 100 times in one action; a stream that never runs dry (the calibration emitter, a
 * server flooding its reply) would make every other stream wait, and the loop overrun
 * its deadline. Past this a transfer is paused until the next round. */
#define MULTI_ROUND_BYTES 32768

typedef struct net_xfer {
    http_xfer x;
    struct net_multi *m;
    struct curl_slist *hdrs;
    net_done_fn done;
    void *ctx;
    struct net_xfer *prev, *next;
    struct net_xfer *next_paused;
    uint64_t round;      /* the round round_bytes counts for */
    size_t round_bytes;
    int64_t held_ns;     /* arrival time of the piece curl holds while paused; 0: none */
    bool listed;         /* on the paused list */
} net_xfer;

struct net_multi {
    CURLM *multi;
    int epfd;
    int64_t curl_due_ns;  /* when curl wants its timeout action; -1: no timer */
    int64_t next_sweep_ns;
    int64_t until_ns;     /* the deadline of the run in progress */
    uint64_t round;
    net_xfer *head;
    net_xfer *paused;     /* paused for this round; resumed at the start of the next */
    size_t running;
    bool no_pwait2;       /* the kernel lacks epoll_pwait2: millisecond waits */
    bool busy_poll;       /* never sleep in the wait: look again at once */
    struct epoll_event events[MULTI_EVENTS];
};

size_t net_multi_running(const net_multi *m) { return m ? m->running : 0; }

void net_multi_busy_poll(net_multi *m, bool on) { m->busy_poll = on; }

/* curl says which events it wants on a socket; epoll is told the same. */
static int multi_on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp) {
    net_multi *m = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(m->epfd, EPOLL_CTL_DEL, s, NULL); /* may already be gone with the close */
        return 0;
    }
    struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u)};
    ev.data.fd = s;
    int op = socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(m->epfd, op, s, &ev) != 0) {
        /* a reused descriptor number, or one closed and reopened behind curl's back */
        op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (epoll_ctl(m->epfd, op, s, &ev) != 0) return -1;
    }
    if (!socketp) curl_multi_assign(m->multi, s, m);
    return 0;
}

/* curl's write callback: the piece goes to http_write() with its arrival time, unless the
 * transfer has had its share of this round or the run's deadline has come; then curl keeps
 * the piece (and its arrival time is kept here) until the transfer is resumed. */
static size_t multi_on_write(char *ptr, size_t size, size_t nmemb, void *ud) {
    net_xfer *t = ud;
    net_multi *m = t->m;
    size_t n = size * nmemb;
    int64_t now = t->held_ns ? t->held_ns : clock_now_ns();
    if (t->round != m->round) t->round = m->round, t->round_bytes = 0;
    if (t->round_bytes >= MULTI_ROUND_BYTES || now >= m->until_ns) {
        t->held_ns = now;
        if (!t->listed) {
            t->listed = true;
            t->next_paused = m->paused;
            m->paused = t;
        }
        return CURL_WRITEFUNC_PAUSE;
    }
    t->round_bytes += n;
    return http_write(&t->x, ptr, n, now);
}

/* Resumes the transfers paused in the last round: curl hands the held piece over inside
 * curl_easy_pause() (stamped with the time it arrived) and reads on when the socket has
 * more. A transfer paused again while its piece is handed over lists itself again. */
static void multi_resume(net_multi *m) {
    net_xfer *t = m->paused;
    m->paused = NULL;
    while (t) {
        net_xfer *next = t->next_paused;
        if (t != m->paused && clock_now_ns() >= m->until_ns) {
            /* the deadline came: the rest wait for the next run, in the same order */
            net_xfer **tail = &m->paused;
            while (*tail) tail = &(*tail)->next_paused;
            *tail = t;
            return;
        }
        t->listed = false;
        curl_easy_pause(t->x.easy, CURLPAUSE_CONT);
        if (!t->listed) t->held_ns = 0;
        t = next;
    }
}

/* Takes `t` off the paused list (it is ending). */
static void multi_unlist_paused(net_multi *m, net_xfer *t) {
    for (net_xfer **p = &m->paused; *p; p = &(*p)->next_paused)
        if (*p == t) {
            *p = t->next_paused;
            return;
        }
}

static int multi_on_timer(CURLM *multi, long timeout_ms, void *userp) {
    net_multi *m = userp;
    m->curl_due_ns = timeout_ms < 0 ? -1 : clock_now_ns() + (int64_t)timeout_ms * 1000000;
    return 0;
}

pacer_err net_multi_new(net_multi **out) {
    *out = NULL;
    http_global_once();
    net_multi *m = calloc(1, sizeof *m);
    if (!m) return PACER_ERR_NOMEM;
    m->curl_due_ns = -1;
    m->epfd = epoll_create1(EPOLL_CLOEXEC);
    m->multi = curl_multi_init();
    if (m->epfd < 0 || !m->multi) {
        pacer_err rc = m->epfd < 0 ? PACER_ERR_IO : PACER_ERR_NOMEM;
        if (m->epfd >= 0) close(m->epfd);
        if (m->multi) curl_multi_cleanup(m->multi);
        free(m);
        return rc;
    }
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, multi_on_socket);
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, multi_on_timer);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
    *out = m;
    return PACER_OK;
}

/* Takes `t` out of the driver, frees it, then tells its owner how it ended. */
static void multi_finish(net_multi *m, net_xfer *t, pacer_err rc) {
    http_response *resp = t->x.resp;
    resp->end_ns = clock_now_ns();
    if (!resp->status) {
        long code = 0;
        curl_easy_getinfo(t->x.easy, CURLINFO_RESPONSE_CODE, &code);
        resp->status = (int)code;
    }
    if (rc && !resp->reason[0]) snprintf(resp->reason, sizeof resp->reason, "%s", pacer_strerror(rc));
    if (t->listed) multi_unlist_paused(m, t);
    curl_multi_remove_handle(m->multi, t->x.easy);
    curl_easy_cleanup(t->x.easy);
    curl_slist_free_all(t->hdrs);
    if (t->prev) t->prev->next = t->next;
    else m->head = t->next;
    if (t->next) t->next->prev = t->prev;
    m->running--;
    net_done_fn done = t->done;
    void *ctx = t->ctx;
    free(t);
    done(ctx, rc, resp);
}

pacer_err net_multi_add(net_multi *m, const http_request *req, http_response *resp, net_done_fn done, void *ctx) {
    net_xfer *t = NULL;
    pacer_err rc = http_response_start(req, resp);
    if (rc) goto out;
    t = calloc(1, sizeof *t);
    if (!t || !(t->x.easy = curl_easy_init())) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    t->x.req = req;
    t->x.resp = resp;
    t->m = m;
    t->done = done;
    t->ctx = ctx;
    rc = http_setup(&t->x, &t->hdrs);
    /* cancel flags are checked by the sweep: no progress callback on every read */
    if (!rc && (curl_easy_setopt(t->x.easy, CURLOPT_NOPROGRESS, 1L) != CURLE_OK ||
                curl_easy_setopt(t->x.easy, CURLOPT_PRIVATE, t) != CURLE_OK ||
                curl_easy_setopt(t->x.easy, CURLOPT_WRITEFUNCTION, multi_on_write) != CURLE_OK ||
                curl_easy_setopt(t->x.easy, CURLOPT_WRITEDATA, t) != CURLE_OK))
        rc = PACER_ERR_INTERNAL;
    if (rc) goto out;
    resp->start_ns = clock_now_ns();
    if (curl_multi_add_handle(m->multi, t->x.easy) != CURLM_OK) {
        rc = PACER_ERR_INTERNAL;
        goto out;
    }
    t->next = m->head;
    if (m->head) m->head->prev = t;
    m->head = t;
    m->running++;
    return PACER_OK;
out:
    if (!resp->reason[0]) snprintf(resp->reason, sizeof resp->reason, "%s", pacer_strerror(rc));
    resp->end_ns = clock_now_ns();
    if (t) {
        if (t->x.easy) curl_easy_cleanup(t->x.easy);
        curl_slist_free_all(t->hdrs);
            free(t);
    }
    return rc;
}

/* Ends transfers whose cancel flag is set or whose first-byte or idle deadline passed. */
static void multi_sweep(net_multi *m, int64_t now) {
    net_xfer *t = m->head;
    while (t) {
        net_xfer *next = t->next;
        const http_request *req = t->x.req;
        http_response *resp = t->x.resp;
        if (req->cancel_flag && *req->cancel_flag) {
            snprintf(resp->reason, sizeof resp->reason, "cancelled");
            multi_finish(m, t, PACER_ERR_CANCELLED);
        } else if (!resp->first_byte_ns && req->first_byte_timeout_ms > 0 &&
                   now >= resp->start_ns + req->first_byte_timeout_ms * 1000000) {
            snprintf(resp->reason, sizeof resp->reason, "no response within %lld ms (first-byte timeout)",
                     (long long)req->first_byte_timeout_ms);
            multi_finish(m, t, PACER_ERR_TIMEOUT);
        } else if (resp->first_byte_ns && req->idle_timeout_ms > 0 &&
                   now >= t->x.last_byte_ns + req->idle_timeout_ms * 1000000) {
            snprintf(resp->reason, sizeof resp->reason, "no bytes for %lld ms (idle timeout)",
                     (long long)req->idle_timeout_ms);
            multi_finish(m, t, PACER_ERR_TIMEOUT);
        }
        t = next;
    }
}

/* Ends the transfers curl reports done. */
static void multi_collect(net_multi *m) {
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read(m->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURLcode cc = msg->data.result;
        net_xfer *t = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        if (t) multi_finish(m, t, http_classify(&t->x, cc));
    }
}

/* Waits for socket events until `wake_ns`; returns the number of events, -1 on error. */
static int multi_wait(net_multi *m, int64_t wake_ns) {
    int64_t wait = m->busy_poll ? 0 : wake_ns - clock_now_ns();
    if (wait < 0) wait = 0;
    if (!m->no_pwait2) {
        struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        int n = epoll_pwait2(m->epfd, m->events, MULTI_EVENTS, &ts, NULL);
        if (n >= 0 || errno != ENOSYS) return n;
        m->no_pwait2 = true;
    }
    return epoll_wait(m->epfd, m->events, MULTI_EVENTS, (int)((wait + 999999) / 1000000));
}

pacer_err net_multi_run(net_multi *m, int64_t until_ns) {
    int still = 0;
    m->until_ns = until_ns;
    while (m->running > 0) {
        int64_t now = clock_now_ns();
        if (now >= m->next_sweep_ns) {
            multi_sweep(m, now);
            m->next_sweep_ns = now + MULTI_SWEEP_NS;
            if (m->running == 0) break;
        }
        if (now >= until_ns) break;
        m->round++;
        bool resumed = m->paused != NULL;
        if (resumed) {
            multi_resume(m);
            multi_collect(m); /* a held piece may have ended its transfer */
        }
        int64_t wake = until_ns < m->next_sweep_ns ? until_ns : m->next_sweep_ns;
        if (m->curl_due_ns >= 0 && m->curl_due_ns < wake) wake = m->curl_due_ns;
        if (resumed) wake = now; /* they may have more waiting: look, do not sleep */
        int n = multi_wait(m, wake);
        if (n < 0) {
            if (errno == EINTR) continue;
            return PACER_ERR_IO;
        }
        /* events left when the deadline comes stay ready: epoll reports them again */
        for (int i = 0; i < n && (i == 0 || clock_now_ns() < until_ns); i++) {
            uint32_t e = m->events[i].events;
            int flags = (e & EPOLLIN ? CURL_CSELECT_IN : 0) | (e & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                        (e & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            if (curl_multi_socket_action(m->multi, m->events[i].data.fd, flags, &still) != CURLM_OK)
                return PACER_ERR_INTERNAL;
        }
        if (m->curl_due_ns >= 0 && clock_now_ns() >= m->curl_due_ns) {
            m->curl_due_ns = -1;
            if (curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &still) != CURLM_OK)
                return PACER_ERR_INTERNAL;
        }
        multi_collect(m);
    }
    return PACER_OK;
}

void net_multi_free(net_multi *m) {
    if (!m) return;
    while (m->head) {
        snprintf(m->head->x.resp->reason, sizeof m->head->x.resp->reason, "cancelled");
        multi_finish(m, m->head, PACER_ERR_CANCELLED);
    }
    curl_multi_cleanup(m->multi);
    close(m->epfd);
    free(m);
}
