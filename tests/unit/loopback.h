/* loopback.h - for unit tests that serve a reply themselves: a listening socket on
 * 127.0.0.1 at a free port. Included by one test file each (static). */
#ifndef PACER_TEST_LOOPBACK_H
#define PACER_TEST_LOOPBACK_H

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Binds a listening socket on 127.0.0.1 and returns it; *port gets its port. */
static int listen_loopback(int *port) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 4), 0);
    socklen_t len = sizeof a;
    getsockname(ls, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return ls;
}

#endif
