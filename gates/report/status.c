/* `kgate status --from-report FILE`: post one commit status per gate (context "kgate/<gate>")
 * to GitHub or GitLab, detected from the CI environment, with the token from the environment.
 *
 * States (docs/production-ci.md, "Commit statuses"):
 *   production report: PASS/WARN -> success; FAIL -> failure (GitLab: failed);
 *                      ERROR -> error (GitLab: failed); SKIP -> error (GitLab: failed), since a
 *                      skipped gate certifies nothing.
 *   diagnostic report: never success. PASS/WARN/SKIP -> pending, with the description stamped
 *                      "DIAGNOSTIC (non-certifying)"; FAIL/ERROR as in production (a failure
 *                      certifies nothing either, and hiding it would help nobody).
 * The token goes only into the request's auth header; it is redacted from every message. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"
#include "report/http.h"
#include "report/status.h"

/* The posting code's names for the options of status.h. */
typedef kg_status_platform platform;
#define PLAT_AUTO KG_STATUS_PLATFORM_AUTO
#define PLAT_GITHUB KG_STATUS_PLATFORM_GITHUB
#define PLAT_GITLAB KG_STATUS_PLATFORM_GITLAB
typedef kg_status_opts status_opts;

typedef struct {
    const char *gate;
    int n[5];
    const char *first[5]; /* first case of each verdict */
} gate_agg;

static const char *env(const char *k)
{
    const char *v = getenv(k);
    return v && *v ? v : NULL;
}

static int verdict_rank(kg_verdict v)
{
    switch (v) {
    case KG_VERDICT_FAIL: return 4;
    case KG_VERDICT_ERROR: return 3;
    case KG_VERDICT_SKIP: return 2;
    case KG_VERDICT_WARN: return 1;
    default: return 0;
    }
}

static kg_verdict worst(const gate_agg *g)
{
    kg_verdict w = KG_VERDICT_PASS;
    for (int v = 0; v < 5; v++)
        if (g->n[v] && verdict_rank((kg_verdict)v) > verdict_rank(w))
            w = (kg_verdict)v;
    return w;
}

static const char *state_for(platform p, kg_verdict w, bool diagnostic)
{
    bool gh = p == PLAT_GITHUB;
    switch (w) {
    case KG_VERDICT_FAIL: return gh ? "failure" : "failed";
    case KG_VERDICT_ERROR: return gh ? "error" : "failed";
    case KG_VERDICT_SKIP: return diagnostic ? "pending" : gh ? "error" : "failed";
    default: return diagnostic ? "pending" : "success";
    }
}

static void describe(char *buf, size_t n, const gate_agg *g, kg_verdict w, bool diagnostic)
{
    int total = 0;
    for (int v = 0; v < 5; v++)
        total += g->n[v];
    int off = snprintf(buf, n, "%s", diagnostic ? "DIAGNOSTIC (non-certifying): " : "");
    if (off < 0 || (size_t)off >= n)
        return;
    switch (w) {
    case KG_VERDICT_FAIL:
    case KG_VERDICT_ERROR:
    case KG_VERDICT_SKIP:
        snprintf(buf + off, n - off, "%s: %d of %d case%s %s (first: %s)", kg_verdict_name(w),
                 g->n[w], total, total == 1 ? "" : "s",
                 w == KG_VERDICT_FAIL ? "failed" : w == KG_VERDICT_ERROR ? "errored" : "not run",
                 g->first[w] ? g->first[w] : "?");
        break;
    default:
        snprintf(buf + off, n - off, "PASS: %d of %d case%s passed%s", total, total,
                 total == 1 ? "" : "s", g->n[KG_VERDICT_WARN] ? " (with warnings)" : "");
    }
    /* Both APIs keep descriptions short (GitHub truncates past 140 characters). */
    if (strlen(buf) > 140)
        strcpy(buf + 137, "...");
}

static bool valid_sha(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!isxdigit((unsigned char)s[n]))
            return false;
    return n >= 7 && n <= 64;
}

static bool valid_repo(const char *s)
{
    int slashes = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '/')
            slashes++;
        else if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    }
    return slashes == 1 && s[0] != '/' && s[strlen(s) - 1] != '/';
}

static bool valid_api(const char *u)
{
    return strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0;
}

/* Per-gate counts in the order the report first names each gate. */
static int aggregate(gate_agg **out, size_t *nout, const kg_export_view *v)
{
    gate_agg *g = calloc(v->n ? v->n : 1, sizeof *g);
    size_t n = 0;
    *out = NULL;
    *nout = 0;
    if (!g)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t o = 0; o < v->n; o++)
        for (size_t i = 0; i < v->n; i++) {
            const kg_export_row *r = &v->rows[i];
            if (r->order != o)
                continue;
            size_t k = 0;
            while (k < n && strcmp(g[k].gate, r->gate) != 0)
                k++;
            if (k == n)
                g[n++].gate = r->gate;
            g[k].n[r->verdict]++;
            if (!g[k].first[r->verdict])
                g[k].first[r->verdict] = r->case_id;
        }
    *out = g;
    *nout = n;
    return 0;
}

static int post_all(const cJSON *report, const status_opts *o)
{
    int rc = 0;
    kg_export_view v;
    gate_agg *aggs = NULL;
    size_t nagg = 0;
    char *auth = NULL, *url_base = NULL, *escaped = NULL, *text = NULL;
    cJSON *body = NULL;
    kg_http_response resp = { 0 };
    char default_target[1024] = "";
    memset(&v, 0, sizeof v);

    platform p = o->plat;
    if (p == PLAT_AUTO)
        p = env("GITHUB_ACTIONS") ? PLAT_GITHUB : env("GITLAB_CI") ? PLAT_GITLAB : PLAT_AUTO;
    if (p == PLAT_AUTO) {
        rc = KG_ERR(KG_EINVAL, "status: no CI detected (neither GITHUB_ACTIONS nor GITLAB_CI is "
                               "set); use --platform github|gitlab");
        goto cleanup;
    }
    bool gh = p == PLAT_GITHUB;
    const char *sha = env("KGATE_STATUS_SHA") ? env("KGATE_STATUS_SHA")
                                              : env(gh ? "GITHUB_SHA" : "CI_COMMIT_SHA");
    const char *api = gh ? (env("GITHUB_API_URL") ? env("GITHUB_API_URL")
                                                  : "https://api.github.com")
                         : env("CI_API_V4_URL");
    const char *where = gh ? env("GITHUB_REPOSITORY") : env("CI_PROJECT_ID");
    const char *token = env("KGATE_STATUS_TOKEN");
    const char *tok_var = "KGATE_STATUS_TOKEN";
    if (!token) {
        tok_var = gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN";
        token = env(tok_var);
    }
    if (!sha || !valid_sha(sha)) {
        rc = KG_ERR(KG_EINVAL, "status: %s: expected a commit SHA (hex), got '%s'",
                    env("KGATE_STATUS_SHA") ? "KGATE_STATUS_SHA" : gh ? "GITHUB_SHA"
                                                                      : "CI_COMMIT_SHA",
                    sha ? sha : "(unset)");
        goto cleanup;
    }
    if (!api || !valid_api(api)) {
        rc = KG_ERR(KG_EINVAL, "status: %s: expected an http(s) URL, got '%s'",
                    gh ? "GITHUB_API_URL" : "CI_API_V4_URL", api ? api : "(unset)");
        goto cleanup;
    }
    if (!where || (gh && !valid_repo(where))) {
        rc = KG_ERR(KG_EINVAL, "status: %s: expected %s, got '%s'",
                    gh ? "GITHUB_REPOSITORY" : "CI_PROJECT_ID",
                    gh ? "owner/name" : "a project id or path", where ? where : "(unset)");
        goto cleanup;
    }
    if (!token && !o->dry_run) {
        rc = KG_ERR(KG_EINVAL, "status: no token: set %s (or KGATE_STATUS_TOKEN)",
                    gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN");
        goto cleanup;
    }
    if (!(escaped = curl_easy_escape(NULL, where, 0))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    size_t alen = strlen(api);
    while (alen && api[alen - 1] == '/')
        alen--;
    size_t ulen = alen + strlen(where) * 3 + 64;
    url_base = malloc(ulen);
    if (!url_base) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* GitHub's owner/name keeps its slash; a GitLab project path must be URL-encoded. */
    snprintf(url_base, ulen, gh ? "%.*s/repos/%s/statuses/%s" : "%.*s/projects/%s/statuses/%s",
             (int)alen, api, gh ? where : escaped, sha);
    if (token) {
        const char *hname = gh ? "Authorization: Bearer "
                               : strcmp(tok_var, "CI_JOB_TOKEN") == 0 ? "JOB-TOKEN: "
                                                                      : "PRIVATE-TOKEN: ";
        size_t n = strlen(hname) + strlen(token) + 1;
        if (!(auth = malloc(n))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(auth, n, "%s%s", hname, token);
    }
    if (gh && env("GITHUB_SERVER_URL") && env("GITHUB_RUN_ID"))
        snprintf(default_target, sizeof default_target, "%s/%s/actions/runs/%s",
                 env("GITHUB_SERVER_URL"), where, env("GITHUB_RUN_ID"));
    else if (!gh && env("CI_JOB_URL"))
        snprintf(default_target, sizeof default_target, "%s", env("CI_JOB_URL"));
    const char *target = o->target_url ? o->target_url
                                       : default_target[0] ? default_target : NULL;

    KG_TRY(kg_export_view_build(&v, report));
    KG_TRY(aggregate(&aggs, &nagg, &v));
    if (nagg == 0) {
        rc = KG_ERR(KG_EINVAL, "status: %s has no results: nothing to post", o->report_path);
        goto cleanup;
    }
    if (v.diagnostic)
        printf("kgate status: the report is DIAGNOSTIC (non-certifying): passing gates are "
               "posted as 'pending', never 'success'\n");
    const char *headers[] = { auth ? auth : "Authorization: (none)",
                              "Content-Type: application/json",
                              gh ? "Accept: application/vnd.github+json" : "Accept: application/json",
                              gh ? "X-GitHub-Api-Version: 2022-11-28" : NULL,
                              NULL, NULL };
    headers[gh ? 4 : 3] = "User-Agent: kgate/" KG_VERSION_STRING;
    kg_http_opts ho = KG_HTTP_OPTS_INIT;
    ho.timeout_ms = (long)(o->timeout_s * 1000);
    ho.connect_timeout_ms = (long)(o->connect_timeout_s * 1000);
    if (ho.connect_timeout_ms > ho.timeout_ms)
        ho.connect_timeout_ms = ho.timeout_ms;
    ho.max_attempts = o->retries + 1;
    ho.verbose = o->verbose;
    ho.secret = token;
    for (size_t i = 0; i < nagg; i++) {
        char ctx[160], desc[256];
        kg_verdict w = worst(&aggs[i]);
        const char *state = state_for(p, w, v.diagnostic);
        if (o->context_suffix)
            snprintf(ctx, sizeof ctx, "kgate/%s (%s)", aggs[i].gate, o->context_suffix);
        else
            snprintf(ctx, sizeof ctx, "kgate/%s", aggs[i].gate);
        describe(desc, sizeof desc, &aggs[i], w, v.diagnostic);
        cJSON_Delete(body);
        if (!(body = cJSON_CreateObject())) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        cJSON_AddStringToObject(body, "state", state);
        cJSON_AddStringToObject(body, gh ? "context" : "name", ctx);
        cJSON_AddStringToObject(body, "description", desc);
        if (target)
            cJSON_AddStringToObject(body, "target_url", target);
        cJSON_free(text);
        if (!(text = cJSON_PrintUnformatted(body))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (o->dry_run) {
            printf("dry run: POST %s\n  %s\n  body: %s\n", url_base,
                   gh ? "Authorization: Bearer ***" : token ? "(token header): ***"
                                                              : "(no token set)",
                   text);
            continue;
        }
        kg_http_response_free(&resp);
        rc = kg_http_request(&resp, "POST", url_base, headers, text, &ho);
        if (rc < 0) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s", kg_error_last());
            const char *hint =
                resp.status == 401 ? (gh ? "check GITHUB_TOKEN / KGATE_STATUS_TOKEN"
                                         : "check KGATE_STATUS_TOKEN / CI_JOB_TOKEN")
                : resp.status == 403 ? (gh ? "the workflow needs `permissions: statuses: write`"
                                           : "the token needs the api scope and at least the "
                                             "Developer role")
                : resp.status == 404 ? (gh ? "check GITHUB_REPOSITORY and the SHA"
                                           : "check CI_PROJECT_ID and the SHA")
                                     : NULL;
            rc = KG_ERR(KG_EHTTP, "status %s: %s%s%s", ctx, msg, hint ? " -- " : "",
                        hint ? hint : "");
            goto cleanup;
        }
        printf("%s: %s (%s) -> HTTP %ld%s\n", ctx, state, desc, resp.status,
               resp.attempts > 1 ? " after retries" : "");
    }
cleanup:
    if (auth) { /* the token does not outlive its use */
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    kg_http_response_free(&resp);
    curl_free(escaped);
    cJSON_Delete(body);
    cJSON_free(text);
    free(url_base);
    free(aggs);
    kg_export_view_free(&v);
    return rc;
}

int kg_status_post(const cJSON *report, const kg_status_opts *o) { return post_all(report, o); }

bool kg_status_url_ok(const char *url) { return url && valid_api(url); }
