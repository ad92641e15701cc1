/* client.h - the one libcurl client setup: every easy handle net/ (measured requests, one
 * or many at a time) and hub/ (downloads) use starts with http_client_setup(), so that the
 * protocols, redirects, proxy rule, user agent, TLS checks and connect timeout are decided
 * in one place. */
#ifndef PACER_NET_CLIENT_H
#define PACER_NET_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "base/error.h"
#include "base/version.h"

/* "pacer/" PACER_VERSION */
#define HTTP_CLIENT_USER_AGENT "pacer/" PACER_VERSION

typedef struct http_client_options {
    int64_t connect_timeout_ms; /* 0: libcurl's default */
    long max_redirects;         /* 0: redirects are not followed (measured requests) */
    bool use_proxy;             /* false: no proxy, whatever the environment says (a
                                 * measurement never goes through one); true: libcurl's
                                 * rules from the environment (downloads) */
} http_client_options;

/* Sets on `e`: the URL, http and https only (redirects too), the redirect rule, the proxy
 * rule, no signals (threads), TCP_NODELAY, the user agent, TLS peer and host verification,
 * the connect timeout. Calls curl_global_init once first. PACER_ERR_INTERNAL when libcurl
 * refuses an option. */
pacer_err http_client_setup(CURL *e, const char *url, const http_client_options *o) __attribute__((warn_unused_result));

#endif
