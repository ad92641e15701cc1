/* emitter.c - the calibration emitter: a listening socket, an eventfd to stop, and per
 * connection a small state machine: read the request head and body, then write the
 * response head and token events from one prepared block (a whole number of events, so
 * the stream wraps cleanly) whenever the socket has room. */
#include "net/emitter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define EMITTER_EVENT                                                                                          \
    "data: {\"id\":\"cmpl-calibration\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"          \
    "\"model\":\"calibration\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},\"finish_reason\":null}]}\n\n"
#define EMITTER_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
#define EMITTER_BLOCK_EVENTS 256
#define EMITTER_REQUEST_MAX 65536

typedef struct emitter_conn {
    struct emitter_conn *prev, *next;
    int fd;
    bool writing;
    size_t head_sent;  /* bytes of EMITTER_HEAD written */
    size_t block_at;   /* offset into the event block */
    size_t req_len;
    char req[EMITTER_REQUEST_MAX];
} emitter_conn;

struct net_emitter {
    int listen_fd, stop_fd, epfd;
    pthread_t thread;
    char *block;
    size_t block_len;
    emitter_conn *conns; /* every open connection */
};

static void emitter_close(net_emitter *e, emitter_conn *c) {
    if (c->prev) c->prev->next = c->next;
    else e->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
}

/* True once the request head and its Content-Length body are in. */
static bool emitter_request_done(const emitter_conn *c) {
    const char *end = memmem(c->req, c->req_len, "\r\n\r\n", 4);
    if (!end) return false;
    size_t head = (size_t)(end - c->req) + 4, want = 0;
    for (const char *p = c->req; p && p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : NULL)
        if (strncasecmp(p, "Content-Length:", 15) == 0) want = strtoul(p + 15, NULL, 10);
    return c->req_len - head >= want;
}

/* Reads what the client sent; false when the connection is to be closed. */
static bool emitter_read(emitter_conn *c) {
    for (;;) {
        char sink[4096];
        char *to = c->writing ? sink : c->req + c->req_len;
        size_t room = c->writing ? sizeof sink : sizeof c->req - c->req_len;
        if (room == 0) return false; /* a request head past the cap */
        ssize_t r = recv(c->fd, to, room, 0);
        if (r == 0) return false;
        if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        if (!c->writing) {
            c->req_len += (size_t)r;
            if (emitter_request_done(c)) c->writing = true;
        }
    }
}

/* Writes until the socket is full; false when the client went away. */
static bool emitter_write(net_emitter *e, emitter_conn *c) {
    static const char head[] = EMITTER_HEAD;
    while (c->head_sent < sizeof head - 1) {
        ssize_t w = send(c->fd, head + c->head_sent, sizeof head - 1 - c->head_sent, MSG_NOSIGNAL);
        if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        c->head_sent += (size_t)w;
    }
    for (;;) {
        ssize_t w = send(c->fd, e->block + c->block_at, e->block_len - c->block_at, MSG_NOSIGNAL);
        if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        c->block_at = (c->block_at + (size_t)w) % e->block_len;
    }
}

static void emitter_accept(net_emitter *e) {
    for (;;) {
        int fd = accept4(e->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        emitter_conn *c = calloc(1, sizeof *c);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
        if (!c || epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->next = e->conns;
        if (e->conns) e->conns->prev = c;
        e->conns = c;
    }
}

static void *emitter_main(void *arg) {
    net_emitter *e = arg;
    pthread_setname_np(pthread_self(), "pacer-emitter"); /* told apart from the client in profiles */
    struct epoll_event evs[64];
    for (;;) {
        int n = epoll_wait(e->epfd, evs, 64, -1);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &e->stop_fd) goto out;
            if (p == &e->listen_fd) {
                emitter_accept(e);
                continue;
            }
            emitter_conn *c = p;
            bool keep = true;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) keep = emitter_read(c);
            if (keep && c->writing && (evs[i].events & EPOLLOUT)) keep = emitter_write(e, c);
            if (!keep) emitter_close(e, c);
        }
    }
out:
    return NULL;
}

pacer_err net_emitter_start(net_emitter **out, int *port) {
    *out = NULL;
    net_emitter *e = calloc(1, sizeof *e);
    if (!e) return PACER_ERR_NOMEM;
    e->listen_fd = e->stop_fd = e->epfd = -1;
    size_t one = sizeof EMITTER_EVENT - 1;
    e->block_len = one * EMITTER_BLOCK_EVENTS;
    e->block = malloc(e->block_len);
    if (!e->block) goto fail;
    for (size_t i = 0; i < EMITTER_BLOCK_EVENTS; i++) memcpy(e->block + i * one, EMITTER_EVENT, one);
    e->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    e->stop_fd = eventfd(0, EFD_CLOEXEC);
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (e->listen_fd < 0 || e->stop_fd < 0 || e->epfd < 0) goto fail;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (bind(e->listen_fd, (struct sockaddr *)&sa, sizeof sa) || listen(e->listen_fd, 4096) ||
        getsockname(e->listen_fd, (struct sockaddr *)&sa, &sl))
        goto fail;
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &e->listen_fd};
    struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &e->stop_fd};
    if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->listen_fd, &lev) || epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->stop_fd, &sev))
        goto fail;
    if (pthread_create(&e->thread, NULL, emitter_main, e)) goto fail;
    *port = ntohs(sa.sin_port);
    *out = e;
    return PACER_OK;
fail:
    if (e->listen_fd >= 0) close(e->listen_fd);
    if (e->stop_fd >= 0) close(e->stop_fd);
    if (e->epfd >= 0) close(e->epfd);
    free(e->block);
    free(e);
    return PACER_ERR_IO;
}

void net_emitter_stop(net_emitter *e) {
    if (!e) return;
    uint64_t one = 1;
    if (write(e->stop_fd, &one, sizeof one) != (ssize_t)sizeof one) pthread_cancel(e->thread);
    pthread_join(e->thread, NULL);
    close(e->listen_fd);
    while (e->conns) emitter_close(e, e->conns);
    close(e->stop_fd);
    close(e->epfd);
    free(e->block);
    free(e);
}
