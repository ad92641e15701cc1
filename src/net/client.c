/* client.c - the common options of every libcurl handle pacer opens. */
#include "net/client.h"

#include "base/version.h"
#include "net/http.h"

pacer_err http_client_setup(CURL *e, const char *url, const http_client_options *o) {
    static const http_client_options defaults;
    if (!o) o = &defaults;
    http_global_once();
    CURLcode c = CURLE_OK;
    c |= curl_easy_setopt(e, CURLOPT_URL, url);
    c |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    c |= curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    c |= curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, o->max_redirects > 0 ? 1L : 0L);
    if (o->max_redirects > 0) c |= curl_easy_setopt(e, CURLOPT_MAXREDIRS, o->max_redirects);
    if (!o->use_proxy) {
        c |= curl_easy_setopt(e, CURLOPT_PROXY, "");
        c |= curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    }
    c |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    c |= curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    c |= curl_easy_setopt(e, CURLOPT_USERAGENT, HTTP_CLIENT_USER_AGENT);
    c |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    c |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o->connect_timeout_ms > 0) c |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_timeout_ms);
    return c == CURLE_OK ? PACER_OK : PACER_ERR_INTERNAL;
}
