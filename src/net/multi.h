/* multi.h - many streamed HTTP requests driven by one thread: libcurl's multi interface
 * over epoll (curl_multi_socket_action), no thread per stream. Each transfer is an
 * http_request as http_perform() takes it: its body pieces reach on_data with the
 * clock_now_ns() time curl handed them over, its timeouts and cancel flag hold, and when it
 * ends a callback gets what http_perform() would have returned. */
#ifndef PACER_MULTI_H
#define PACER_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "net/http.h"

typedef struct net_multi net_multi;

/* Called once per transfer when it ends, from inside net_multi_run() (or net_multi_free()),
 * with http_perform()'s code and the filled response. The request and response may be
 * freed or reused from here on, and new transfers may be added. */
typedef void (*net_done_fn)(void *ctx, pacer_err rc, http_response *resp);

/* A new driver in *out. Returns PACER_ERR_NOMEM or PACER_ERR_IO (no epoll). */
pacer_err net_multi_new(net_multi **out);
/* Ends every running transfer as cancelled (their callbacks run) and frees the driver.
 * Accepts NULL. */
void net_multi_free(net_multi *m);

/* Starts `req` (borrowed until its callback) into `resp` (reset here; start_ns is now).
 * Returns PACER_OK, or an error with resp->reason filled (bad URL, no memory); then the
 * callback is not called. */
pacer_err net_multi_add(net_multi *m, const http_request *req, http_response *resp, net_done_fn done, void *ctx);

/* Moves every transfer along until clock_now_ns() reaches `until_ns` or none is running;
 * callbacks run from here. Returns PACER_OK, or PACER_ERR_IO / PACER_ERR_INTERNAL when the
 * loop itself failed (running transfers are then left as they are). */
pacer_err net_multi_run(net_multi *m, int64_t until_ns);

/* With `on`, net_multi_run() never sleeps: it asks epoll again at once (timeout 0) until a
 * socket is ready or a deadline comes, so a piece is handed over as soon as the kernel has
 * queued it, with no wake-up on its path. The thread then keeps its core busy while it
 * runs. Off by default. */
void net_multi_busy_poll(net_multi *m, bool on);

/* Transfers started and not yet ended. */
size_t net_multi_running(const net_multi *m);

#endif
