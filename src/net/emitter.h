/* emitter.h - an in-process loopback SSE server for the client's self-calibration. On
 * 127.0.0.1 at a free port, every request gets an endless stream of OpenAI-style chat
 * token events, written as fast as the socket takes them, until the client goes away or
 * the emitter stops. One thread serves every connection (epoll). */
#ifndef PACER_EMITTER_H
#define PACER_EMITTER_H

#include "base/error.h"

typedef struct net_emitter net_emitter;

/* Starts the emitter's thread; *port gets the port it listens on. */
pacer_err net_emitter_start(net_emitter **out, int *port);
/* Stops the thread, closes every connection and frees the emitter. Accepts NULL. */
void net_emitter_stop(net_emitter *e);

#endif
