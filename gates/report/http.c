/* libcurl wrapper: one request with timeouts, bounded retries (exponential backoff on 429, 5xx
 * and transient transport errors, Retry-After honored up to a cap), and messages that never
 * carry the secret. Redirects are not followed, so a token is never sent to another host. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "report/http.h"

void kg_http_response_free(kg_http_response *r)
{
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
}

int kg_http_global_init(void)
{
    static bool done = false;
    if (done)
        return 0;
    CURLcode e = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (e != CURLE_OK)
        return KG_ERR(KG_EHTTP, "curl_global_init failed: %s", curl_easy_strerror(e));
    done = true;
    return 0;
}

typedef struct {
    char *p;
    size_t len;
    bool oom;
} body_buf;

/* Keep at most 64 KiB of a response: enough for any API error message. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    body_buf *b = ud;
    size_t n = size * nmemb, room = 65536 - b->len;
    size_t take = n < room ? n : room;
    if (take) {
        char *p = realloc(b->p, b->len + take + 1);
        if (!p) {
            b->oom = true;
            return 0;
        }
        memcpy(p + b->len, data, take);
        b->len += take;
        p[b->len] = '\0';
        b->p = p;
    }
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static bool transient(CURLcode e)
{
    return e == CURLE_OPERATION_TIMEDOUT || e == CURLE_COULDNT_CONNECT || e == CURLE_SEND_ERROR ||
           e == CURLE_RECV_ERROR || e == CURLE_GOT_NOTHING || e == CURLE_PARTIAL_FILE;
}

static const char *status_hint(long s)
{
    switch (s) {
    case 401: return "unauthorized: the token is missing, expired or was rejected";
    case 403:
        return "forbidden: the token lacks the permission for this request (or a rate "
               "limit was hit)";
    case 404:
        return "not found: the repository/project or commit does not exist, or the token "
               "cannot see it";
    case 422: return "unprocessable: the API rejected the request's content";
    case 429: return "too many requests: rate limited";
    default: return s >= 500 ? "server error" : "unexpected status";
    }
}

/* A short, single-line excerpt of the response body for the error message. */
static void excerpt(char *dst, size_t n, const char *body)
{
    size_t i = 0;
    for (; body && *body && i + 1 < n; body++)
        dst[i++] = (*body == '\n' || *body == '\r' || *body == '\t') ? ' ' : *body;
    dst[i] = '\0';
}

/* One request's fixed parts, shared by its attempts. */
typedef struct {
    const char *method, *url, *body;
    struct curl_slist *headers;
    const kg_http_opts *o;
    char safe_url[1024];          /* the URL with the secret redacted, for messages */
    char errbuf[CURL_ERROR_SIZE]; /* curl's message of the last attempt */
} http_req;

static int header_list(struct curl_slist **out, const char *const *headers)
{
    *out = NULL;
    for (const char *const *hd = headers; hd && *hd; hd++) {
        struct curl_slist *n = curl_slist_append(*out, *hd);
        if (!n) {
            curl_slist_free_all(*out);
            *out = NULL;
            return KG_ERR(KG_ENOMEM, "out of memory building HTTP headers");
        }
        *out = n;
    }
    return 0;
}

static int handle_setup(CURL *h, http_req *q, body_buf *bb)
{
    int rc = 0;
    const kg_http_opts *o = q->o;
    q->errbuf[0] = '\0';
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_URL, q->url));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, q->method));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_HTTPHEADER, q->headers));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->timeout_ms));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_ERRORBUFFER, q->errbuf));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body));
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_WRITEDATA, bb));
#if LIBCURL_VERSION_NUM >= 0x075500
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https"));
#else
    KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    if (q->body) {
        KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body));
        KG_CURL_CHECK(curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(q->body)));
    }
cleanup:
    return rc;
}

/* Attempt number `a` on a fresh handle (*h, *bb replaced): *e is the transport's result,
 * out->status the HTTP status (0 without a response), *retry_after the server's Retry-After in
 * seconds. */
static int attempt(CURLcode *e, curl_off_t *retry_after, CURL **h, body_buf *bb,
                   kg_http_response *out, http_req *q, int a)
{
    int rc = 0;
    curl_easy_cleanup(*h);
    free(bb->p);
    *bb = (body_buf){ NULL, 0, false };
    *retry_after = 0;
    if (!(*h = curl_easy_init()))
        return KG_ERR(KG_EHTTP, "curl_easy_init failed");
    KG_TRY(handle_setup(*h, q, bb));
    *e = curl_easy_perform(*h);
    out->attempts = a;
    out->status = 0;
    if (*e == CURLE_OK) {
        KG_CURL_CHECK(curl_easy_getinfo(*h, CURLINFO_RESPONSE_CODE, &out->status));
        KG_CURL_CHECK(curl_easy_getinfo(*h, CURLINFO_RETRY_AFTER, retry_after));
    }
    if (bb->oom)
        rc = KG_ERR(KG_ENOMEM, "out of memory reading the response of %s", q->safe_url);
cleanup:
    return rc;
}

/* curl's message for a failed transfer, secret redacted. */
static void transfer_message(char *msg, size_t n, CURLcode e, const http_req *q)
{
    snprintf(msg, n, "%s", e == CURLE_OK ? "" : (q->errbuf[0] ? q->errbuf : curl_easy_strerror(e)));
    kg_redact_all(msg, q->o->secret);
}

/* The error of the last attempt: the transport's, or the HTTP status with a body excerpt. */
static int request_failed(CURLcode e, bool retry, int a, const kg_http_response *out, body_buf *bb,
                          const http_req *q)
{
    char ex[201], msg[CURL_ERROR_SIZE + 64];
    if (e != CURLE_OK) {
        transfer_message(msg, sizeof msg, e, q);
        return KG_ERR(KG_EHTTP, "%s %s: %s%s (%s after %d attempt%s)", q->method, q->safe_url,
                      e == CURLE_OPERATION_TIMEDOUT ? "timed out: " : "", msg,
                      retry ? "gave up" : "not retried", a, a == 1 ? "" : "s");
    }
    /* Redact the whole body first: a token cut by the excerpt would not match. */
    if (bb->p)
        kg_redact_all(bb->p, q->o->secret);
    excerpt(ex, sizeof ex, bb->p);
    return KG_ERR(KG_EHTTP, "%s %s: HTTP %ld, %s%s%s%s", q->method, q->safe_url, out->status,
                  status_hint(out->status), ex[0] ? "; response: " : "", ex,
                  retry ? " (retries exhausted)" : "");
}

/* Server-suggested delay wins over our schedule, within the cap: bounded runtime. */
static long retry_wait(long delay, curl_off_t retry_after, const kg_http_opts *o)
{
    long wait = delay;
    if (retry_after > 0) /* seconds from the server: cap before scaling (no overflow) */
        wait = retry_after > LONG_MAX / 1000 ? LONG_MAX : (long)retry_after * 1000;
    if (o->backoff_max_ms > 0 && wait > o->backoff_max_ms)
        wait = o->backoff_max_ms;
    return wait;
}

int kg_http_request(kg_http_response *out, const char *method, const char *url,
                    const char *const *headers, const char *body, const kg_http_opts *o)
{
    int rc = 0;
    CURL *h = NULL;
    body_buf bb = { NULL, 0, false };
    http_req q = { method, url, body, NULL, o, "", "" };
    memset(out, 0, sizeof *out);
    snprintf(q.safe_url, sizeof q.safe_url, "%s", url);
    kg_redact_all(q.safe_url, o->secret);
    KG_TRY(kg_http_global_init());
    KG_TRY(header_list(&q.headers, headers));
    long delay = o->backoff_ms > 0 ? o->backoff_ms : 1000;
    int attempts = o->max_attempts > 0 ? o->max_attempts : 1;
    for (int a = 1; a <= attempts; a++) {
        CURLcode e = CURLE_OK;
        curl_off_t retry_after = 0;
        KG_TRY(attempt(&e, &retry_after, &h, &bb, out, &q, a));
        if (o->verbose) {
            char msg[CURL_ERROR_SIZE + 64];
            transfer_message(msg, sizeof msg, e, &q);
            fprintf(stderr, "http: %s %s -> %ld%s%s (attempt %d/%d)\n", method, q.safe_url,
                    out->status, e == CURLE_OK ? "" : ", ", msg, a, attempts);
        }
        if (e == CURLE_OK && out->status >= 200 && out->status < 300)
            break;
        bool retry = e == CURLE_OK ? (out->status == 429 || out->status >= 500) : transient(e);
        if (!retry || a == attempts) {
            rc = request_failed(e, retry, a, out, &bb, &q);
            goto cleanup;
        }
        long wait = retry_wait(delay, retry_after, o);
        if (o->verbose)
            fprintf(stderr, "http: retrying in %ld ms\n", wait);
        sleep_ms(wait);
        delay *= 2;
    }
cleanup:
    if (rc == 0 || bb.p) {
        out->body = bb.p;
        out->body_len = bb.len;
        if (out->body)
            kg_redact_all(out->body, o->secret);
        bb.p = NULL;
    }
    free(bb.p);
    curl_slist_free_all(q.headers);
    curl_easy_cleanup(h);
    return rc;
}

void kg_http_forge_setup(const char **headers, kg_http_opts *ho, bool github, const char *auth,
                         const char *secret, double timeout_s, double connect_timeout_s,
                         int retries, bool verbose)
{
    headers[0] = auth ? auth : "Authorization: (none)";
    headers[1] = "Content-Type: application/json";
    headers[2] = github ? "Accept: application/vnd.github+json" : "Accept: application/json";
    headers[3] = github ? "X-GitHub-Api-Version: 2022-11-28" : NULL;
    headers[4] = headers[5] = NULL;
    headers[github ? 4 : 3] = "User-Agent: kgate/" KG_VERSION_STRING;
    *ho = (kg_http_opts)KG_HTTP_OPTS_INIT;
    ho->timeout_ms = (long)(timeout_s * 1000);
    ho->connect_timeout_ms = (long)(connect_timeout_s * 1000);
    if (ho->connect_timeout_ms > ho->timeout_ms)
        ho->connect_timeout_ms = ho->timeout_ms;
    ho->max_attempts = retries + 1;
    ho->verbose = verbose;
    ho->secret = secret;
}

int kg_http_token_check(const char *token, const char *var, const char *who)
{
    for (const unsigned char *p = (const unsigned char *)token; p && *p; p++)
        if (*p < 0x20 || *p == 0x7F) /* CR LF would add a header of the caller's choosing */
            return KG_ERR(KG_EINVAL,
                          "%s: %s holds a control character (0x%02x at %zu): "
                          "refused (a token is one line of printable characters)",
                          who, var, *p, (size_t)(p - (const unsigned char *)token));
    return 0;
}
