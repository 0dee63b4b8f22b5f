/* `kgate status --from-report FILE`: post one commit status per gate (context "kgate/<gate>")
 * to GitHub or GitLab, detected from the CI environment, with the token from the environment.
 *
 * States (docs/production-ci.md, "Commit statuses"), by the gate's worst verdict
 * (FAIL > XPASS > ERROR > SKIP > WARN > XFAIL > PASS):
 * every status finishes (never pending), the same states in both modes:
 *   PASS/WARN/XFAIL -> success (XFAIL: the count of expected failures in the description);
 *   FAIL and XPASS (a declared expected failure that now passes) -> failure (GitLab: failed);
 *   ERROR -> error (GitLab: failed); SKIP -> error (GitLab: failed), since a skipped gate
 *   certifies nothing; a run without a GPU says "incomplete: no GPU" on the gates it skipped.
 *   diagnostic report: the same states, every description stamped "DIAGNOSTIC (non-certifying)".
 *   incomplete report (the run was interrupted): the description starts "incomplete
 *   (interrupted)"; a gate that would pass is posted as a SKIP is (error): the cases it had not
 *   reached were not run.
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
    int n[KG_VERDICT_N];
    const char *first[KG_VERDICT_N]; /* first case of each verdict */
} gate_agg;

static int verdict_rank(kg_verdict v)
{
    switch (v) {
    case KG_VERDICT_FAIL: return 6;
    case KG_VERDICT_XPASS: return 5;
    case KG_VERDICT_ERROR: return 4;
    case KG_VERDICT_SKIP: return 3;
    case KG_VERDICT_WARN: return 2;
    case KG_VERDICT_XFAIL: return 1;
    default: return 0;
    }
}

static kg_verdict worst(const gate_agg *g)
{
    kg_verdict w = KG_VERDICT_PASS;
    for (int v = 0; v < KG_VERDICT_N; v++)
        if (g->n[v] && verdict_rank((kg_verdict)v) > verdict_rank(w))
            w = (kg_verdict)v;
    return w;
}

/* The state of a gate whose worst verdict is w, the same in both modes: every status finishes
 * (never "pending", which a forge shows as still running). A skipped gate (no GPU) is "error",
 * GitHub's state for a check that could not be made, as is an interrupted run's passing gate:
 * neither certifies anything, and "success" on a context a branch rule requires would let a run
 * that measured nothing through. A diagnostic pass is "success", stamped DIAGNOSTIC. */
static const char *state_for(platform p, kg_verdict w, bool incomplete)
{
    bool gh = p == PLAT_GITHUB;
    switch (w) {
    case KG_VERDICT_FAIL:
    case KG_VERDICT_XPASS: return gh ? "failure" : "failed";
    case KG_VERDICT_ERROR:
    case KG_VERDICT_SKIP: return gh ? "error" : "failed";
    default: return incomplete ? (gh ? "error" : "failed") : "success";
    }
}

/* "PASS: 30 of 31 cases passed (with warnings; 1 expected failure)". */
static void describe_pass(char *buf, size_t n, const gate_agg *g, int total)
{
    char xf[64] = "";
    int passed = total - g->n[KG_VERDICT_XFAIL];
    if (g->n[KG_VERDICT_XFAIL])
        snprintf(xf, sizeof xf, "%s%d expected failure%s", g->n[KG_VERDICT_WARN] ? "; " : "",
                 g->n[KG_VERDICT_XFAIL], g->n[KG_VERDICT_XFAIL] == 1 ? "" : "s");
    snprintf(buf, n, "PASS: %d of %d case%s passed%s%s%s%s", passed, total, total == 1 ? "" : "s",
             g->n[KG_VERDICT_WARN] || xf[0] ? " (" : "",
             g->n[KG_VERDICT_WARN] ? "with warnings" : "", xf,
             g->n[KG_VERDICT_WARN] || xf[0] ? ")" : "");
}

static void describe(char *buf, size_t n, const gate_agg *g, kg_verdict w, bool diagnostic,
                     bool incomplete, bool no_gpu)
{
    int total = 0;
    for (int v = 0; v < KG_VERDICT_N; v++)
        total += g->n[v];
    /* A gate with skips on a run without a GPU says why first: "incomplete: no GPU". */
    int off = snprintf(buf, n, "%s%s%s", diagnostic ? "DIAGNOSTIC (non-certifying): " : "",
                       incomplete ? "incomplete (interrupted): " : "",
                       no_gpu && g->n[KG_VERDICT_SKIP] ? "incomplete: no GPU: " : "");
    if (off < 0 || (size_t)off >= n)
        return;
    switch (w) {
    case KG_VERDICT_FAIL:
    case KG_VERDICT_XPASS:
    case KG_VERDICT_ERROR:
    case KG_VERDICT_SKIP:
        off += snprintf(buf + off, n - off, "%s: %d of %d case%s %s (first: %s)",
                        kg_verdict_name(w), g->n[w], total, total == 1 ? "" : "s",
                        w == KG_VERDICT_FAIL    ? "failed"
                        : w == KG_VERDICT_XPASS ? "passed unexpectedly (remove xfail_gate)"
                        : w == KG_VERDICT_ERROR ? "errored"
                                                : "not run",
                        g->first[w] ? g->first[w] : "?");
        /* A failing gate that also has unexpected passes says so. */
        if (w == KG_VERDICT_FAIL && g->n[KG_VERDICT_XPASS] && off > 0 && (size_t)off < n)
            snprintf(buf + off, n - off, "; XPASS: %d (first: %s)", g->n[KG_VERDICT_XPASS],
                     g->first[KG_VERDICT_XPASS]);
        break;
    default: describe_pass(buf + off, n - off, g, total);
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

/* Where and how the statuses go, resolved from the CI environment before anything is sent. */
typedef struct {
    bool gh; /* GitHub, else GitLab */
    const char *sha, *api, *where, *token, *tok_var;
    char *url_base;    /* .../statuses/SHA */
    char *auth;        /* the token's header line; NULL without a token (dry run) */
    char target[1024]; /* each status's link; "" = none */
} status_dest;

/* The platform, commit, API, project and token, each checked so a bad one names its variable. */
static int dest_env(status_dest *d, const status_opts *o)
{
    platform p = o->plat;
    if (p == PLAT_AUTO)
        p = kg_env("GITHUB_ACTIONS") ? PLAT_GITHUB : kg_env("GITLAB_CI") ? PLAT_GITLAB : PLAT_AUTO;
    if (p == PLAT_AUTO)
        return KG_ERR(KG_EINVAL, "status: no CI detected (neither GITHUB_ACTIONS nor GITLAB_CI is "
                                 "set); use --platform github|gitlab");
    bool gh = d->gh = p == PLAT_GITHUB;
    d->sha = kg_env("KGATE_STATUS_SHA") ? kg_env("KGATE_STATUS_SHA")
                                        : kg_env(gh ? "GITHUB_SHA" : "CI_COMMIT_SHA");
    d->api = gh ? (kg_env("GITHUB_API_URL") ? kg_env("GITHUB_API_URL") : "https://api.github.com")
                : kg_env("CI_API_V4_URL");
    d->where = gh ? kg_env("GITHUB_REPOSITORY") : kg_env("CI_PROJECT_ID");
    d->token = kg_env("KGATE_STATUS_TOKEN");
    d->tok_var = "KGATE_STATUS_TOKEN";
    if (!d->token) {
        d->tok_var = gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN";
        d->token = kg_env(d->tok_var);
    }
    if (!d->sha || !valid_sha(d->sha))
        return KG_ERR(KG_EINVAL, "status: %s: expected a commit SHA (hex), got '%s'",
                      kg_env("KGATE_STATUS_SHA") ? "KGATE_STATUS_SHA"
                      : gh                       ? "GITHUB_SHA"
                                                 : "CI_COMMIT_SHA",
                      d->sha ? d->sha : "(unset)");
    if (!d->api || !valid_api(d->api))
        return KG_ERR(KG_EINVAL, "status: %s: expected an http(s) URL, got '%s'",
                      gh ? "GITHUB_API_URL" : "CI_API_V4_URL", d->api ? d->api : "(unset)");
    if (!d->where || (gh && !valid_repo(d->where)))
        return KG_ERR(KG_EINVAL, "status: %s: expected %s, got '%s'",
                      gh ? "GITHUB_REPOSITORY" : "CI_PROJECT_ID",
                      gh ? "owner/name" : "a project id or path", d->where ? d->where : "(unset)");
    if (!d->token && !o->dry_run)
        return KG_ERR(KG_EINVAL, "status: no token: set %s (or KGATE_STATUS_TOKEN)",
                      gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN");
    return d->token ? kg_http_token_check(d->token, d->tok_var, "status") : 0;
}

/* The statuses URL, the token's header and the default link (the CI run or job page). */
static int dest_urls(status_dest *d, const status_opts *o)
{
    int rc = 0;
    char *escaped = curl_easy_escape(NULL, d->where, 0);
    size_t alen = strlen(d->api);
    while (alen && d->api[alen - 1] == '/')
        alen--;
    size_t ulen = alen + strlen(d->where) * 3 + 64;
    if (!escaped || !(d->url_base = malloc(ulen))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* GitHub's owner/name keeps its slash; a GitLab project path must be URL-encoded. */
    snprintf(d->url_base, ulen,
             d->gh ? "%.*s/repos/%s/statuses/%s" : "%.*s/projects/%s/statuses/%s", (int)alen,
             d->api, d->gh ? d->where : escaped, d->sha);
    if (d->token) {
        const char *hname = d->gh                                     ? "Authorization: Bearer "
                            : strcmp(d->tok_var, "CI_JOB_TOKEN") == 0 ? "JOB-TOKEN: "
                                                                      : "PRIVATE-TOKEN: ";
        size_t n = strlen(hname) + strlen(d->token) + 1;
        if (!(d->auth = malloc(n))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(d->auth, n, "%s%s", hname, d->token);
    }
    if (o->target_url)
        snprintf(d->target, sizeof d->target, "%s", o->target_url);
    else if (d->gh && kg_env("GITHUB_SERVER_URL") && kg_env("GITHUB_RUN_ID"))
        snprintf(d->target, sizeof d->target, "%s/%s/actions/runs/%s", kg_env("GITHUB_SERVER_URL"),
                 d->where, kg_env("GITHUB_RUN_ID"));
    else if (!d->gh && kg_env("CI_JOB_URL"))
        snprintf(d->target, sizeof d->target, "%s", kg_env("CI_JOB_URL"));
cleanup:
    curl_free(escaped);
    return rc;
}

static void dest_free(status_dest *d)
{
    if (d->auth) { /* the token does not outlive its use */
        memset(d->auth, 0, strlen(d->auth));
        free(d->auth);
    }
    free(d->url_base);
    d->auth = d->url_base = NULL;
}

/* What to check when the API refused a status (NULL: nothing specific). */
static const char *refusal_hint(long status, bool gh)
{
    switch (status) {
    case 401:
        return gh ? "check GITHUB_TOKEN / KGATE_STATUS_TOKEN"
                  : "check KGATE_STATUS_TOKEN / CI_JOB_TOKEN";
    case 403:
        return gh ? "the workflow needs `permissions: statuses: write`"
                  : "the token needs the api scope and at least the Developer role";
    case 404: return gh ? "check GITHUB_REPOSITORY and the SHA" : "check CI_PROJECT_ID and the SHA";
    default: return NULL;
    }
}

/* One gate's status: its state, context and description. */
typedef struct {
    const char *state;
    char ctx[160], desc[256];
} gate_status;

static void gate_status_fill(gate_status *st, const gate_agg *g, const status_dest *d,
                             const status_opts *o, const kg_export_view *v)
{
    kg_verdict w = worst(g);
    st->state = state_for(d->gh ? PLAT_GITHUB : PLAT_GITLAB, w, v->incomplete);
    if (o->context_suffix)
        snprintf(st->ctx, sizeof st->ctx, "kgate/%s (%s)", g->gate, o->context_suffix);
    else
        snprintf(st->ctx, sizeof st->ctx, "kgate/%s", g->gate);
    describe(st->desc, sizeof st->desc, g, w, v->diagnostic, v->incomplete, v->no_gpu);
}

/* The request body (caller frees with cJSON_free); NULL when out of memory. */
static char *gate_status_json(const gate_status *st, const status_dest *d)
{
    cJSON *body = cJSON_CreateObject();
    if (!body)
        return NULL;
    cJSON_AddStringToObject(body, "state", st->state);
    cJSON_AddStringToObject(body, d->gh ? "context" : "name", st->ctx);
    cJSON_AddStringToObject(body, "description", st->desc);
    if (d->target[0])
        cJSON_AddStringToObject(body, "target_url", d->target);
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    return text;
}

/* A 2xx is not enough. The forge answers a status it set with that status as a JSON
 * object (GitHub: "state", GitLab: "status"); a body that is not JSON, another shape or another
 * state is a server (or a proxy) that did not set it: KG_EHTTP, never "posted". The body is
 * not quoted: a misbehaving server may echo the token. */
static int post_reply_check(const kg_http_response *resp, const gate_status *st,
                            const status_dest *d)
{
    int rc = 0;
    cJSON *j = NULL;
    const char *key = d->gh ? "state" : "status";
    if (!resp->body || !resp->body_len ||
        kg_json_parse_strict(&j, resp->body, resp->body_len, "reply") < 0) {
        rc = KG_ERR(KG_EHTTP,
                    "status %s: POST %s answered HTTP %ld with %s: the status is not "
                    "known to be set",
                    st->ctx, d->url_base, resp->status,
                    resp->body_len ? "a body that is not JSON" : "no body");
        goto cleanup;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsObject(j) || !cJSON_IsString(v) || strcmp(v->valuestring, st->state) != 0)
        rc = KG_ERR(KG_EHTTP,
                    "status %s: POST %s answered HTTP %ld without the status it "
                    "posted (expected a JSON object whose \"%s\" is \"%s\"): the "
                    "status is not known to be set",
                    st->ctx, d->url_base, resp->status, key, st->state);
cleanup:
    cJSON_Delete(j);
    return rc;
}

/* Post (or, in a dry run, print) one gate's status. */
static int post_one(const gate_agg *g, const status_dest *d, const status_opts *o,
                    const kg_export_view *v, const char *const *headers, const kg_http_opts *ho)
{
    int rc = 0;
    gate_status st;
    kg_http_response resp = { 0 };
    gate_status_fill(&st, g, d, o, v);
    char *text = gate_status_json(&st, d);
    if (!text) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (o->dry_run) {
        printf("dry run: POST %s\n  %s\n  body: %s\n", d->url_base,
               d->gh      ? "Authorization: Bearer ***"
               : d->token ? "(token header): ***"
                          : "(no token set)",
               text);
        goto cleanup;
    }
    rc = kg_http_request(&resp, "POST", d->url_base, headers, text, ho);
    if (rc < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s", kg_error_last());
        const char *hint = refusal_hint(resp.status, d->gh);
        rc = KG_ERR(KG_EHTTP, "status %s: %s%s%s", st.ctx, msg, hint ? " -- " : "",
                    hint ? hint : "");
        goto cleanup;
    }
    KG_TRY(post_reply_check(&resp, &st, d));
    printf("%s: %s (%s) -> HTTP %ld%s\n", st.ctx, st.state, st.desc, resp.status,
           resp.attempts > 1 ? " after retries" : "");
cleanup:
    kg_http_response_free(&resp);
    cJSON_free(text);
    return rc;
}

static int post_all(const cJSON *report, const status_opts *o)
{
    int rc = 0;
    kg_export_view v;
    gate_agg *aggs = NULL;
    size_t nagg = 0;
    status_dest d;
    const char *headers[6];
    kg_http_opts ho;
    memset(&v, 0, sizeof v);
    memset(&d, 0, sizeof d);

    KG_TRY(dest_env(&d, o));
    KG_TRY(dest_urls(&d, o));
    KG_TRY(kg_export_view_build(&v, report));
    KG_TRY(aggregate(&aggs, &nagg, &v));
    if (nagg == 0) {
        rc = KG_ERR(KG_EINVAL, "status: %s has no results: nothing to post", o->report_path);
        goto cleanup;
    }
    if (v.diagnostic)
        printf("kgate status: the report is DIAGNOSTIC (non-certifying): every description "
               "says so\n");
    if (v.no_gpu)
        printf("kgate status: the run had no GPU: gates with skipped cases are posted as "
               "'%s' (incomplete: no GPU)\n",
               d.gh ? "error" : "failed");
    if (v.incomplete)
        printf("kgate status: the report is INCOMPLETE (the run was interrupted): no gate is "
               "posted as 'success'\n");
    kg_http_forge_setup(headers, &ho, d.gh, d.auth, d.token, o->timeout_s, o->connect_timeout_s,
                        o->retries, o->verbose);
    for (size_t i = 0; i < nagg; i++)
        KG_TRY(post_one(&aggs[i], &d, o, &v, headers, &ho));
cleanup:
    dest_free(&d);
    free(aggs);
    kg_export_view_free(&v);
    return rc;
}

int kg_status_post(const cJSON *report, const kg_status_opts *o) { return post_all(report, o); }

bool kg_status_url_ok(const char *url) { return url && valid_api(url); }
