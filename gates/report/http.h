/* A small libcurl wrapper for the CI APIs kgate talks to (commit statuses): timeouts, retries
 * with exponential backoff on 429/5xx (honoring Retry-After), clear messages on 401/403/404,
 * and a secret that is redacted from every message it produces. */
#ifndef KG_HTTP_H
#define KG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <curl/curl.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check a curl_easy_* call; on failure record file/line and `goto cleanup` with rc set.
 * The enclosing function needs `int rc` and a `cleanup:` label. */
#define KG_CURL_CHECK(expr)                                                         \
    do {                                                                            \
        CURLcode kg_ce_ = (expr);                                                   \
        if (kg_ce_ != CURLE_OK) {                                                   \
            rc = kg_error_set(KG_EHTTP, __FILE__, __LINE__, "%s failed: %s", #expr, \
                              curl_easy_strerror(kg_ce_));                          \
            goto cleanup;                                                           \
        }                                                                           \
    } while (0)

typedef struct {
    long connect_timeout_ms; /* per attempt */
    long timeout_ms;         /* whole request, per attempt */
    int max_attempts;        /* >= 1 */
    long backoff_ms;         /* first retry delay; doubles each retry */
    long backoff_max_ms;     /* cap for the delay, Retry-After included */
    bool verbose;            /* one line per attempt on stderr (secret redacted) */
    const char *secret;      /* redacted ("***") from every message; may be NULL */
} kg_http_opts;

#define KG_HTTP_OPTS_INIT                                                                        \
    {                                                                                            \
        .connect_timeout_ms = 10000, .timeout_ms = 30000, .max_attempts = 4, .backoff_ms = 1000, \
        .backoff_max_ms = 30000, .verbose = false, .secret = NULL                                \
    }

typedef struct {
    long status; /* last HTTP status (0 if no response) */
    char *body;  /* last response body, NUL-terminated (may be NULL) */
    size_t body_len;
    int attempts;
} kg_http_response;

void kg_http_response_free(kg_http_response *r);

/* curl_global_init once per process (kgate is single-threaded here). */
int kg_http_global_init(void);

/* Send `body` (may be NULL) with `headers` (NULL-terminated "Name: value" strings).
 * 0 on 2xx; KG_EHTTP otherwise with a message naming method, URL and what went wrong
 * (401/403/404 explained; retries exhausted; timeout). out is filled in both cases. */
int kg_http_request(kg_http_response *out, const char *method, const char *url,
                    const char *const *headers, const char *body, const kg_http_opts *o);

/* The headers (6 slots, NULL-terminated) and options of a GitHub or GitLab API request, shared
 * by commit statuses and the PR/MR comment: `auth` the token's header (NULL: none), `secret` the
 * token (redacted from every message), the flags' timeouts, retries and verbosity. */
void kg_http_forge_setup(const char **headers, kg_http_opts *ho, bool github, const char *auth,
                         const char *secret, double timeout_s, double connect_timeout_s,
                         int retries, bool verbose);

/* A token (from `var`) with a control character is refused: in a header, CR LF would inject
 * another. */
int kg_http_token_check(const char *token, const char *var, const char *who);

#ifdef __cplusplus
}
#endif
#endif
