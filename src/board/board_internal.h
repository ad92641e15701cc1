/* board_internal.h - the board's state, shared by board.c (intake, lookups) and
 * board_http.c (routes); private to src/board/. */
#ifndef PACER_BOARD_BOARD_INTERNAL_H
#define PACER_BOARD_BOARD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "board/board.h"
#include "board/site.h"
#include "server/http.h"

struct board {
    board_config cfg;
    board_metrics *metrics;
    http_server *srv;
    pthread_t lookup;
    bool lookup_started;
    bool stopping;        /* guarded by mu; the lookup thread waits on cv */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    board_site *site;     /* the website (pages), made by board_listen */
    http_route *routes;   /* the API's routes and the website's, one table */
};

/* The lookup thread's body: a pass over the due queue every half second until stopping. */
void *board_lookup_thread(void *arg);

#endif
