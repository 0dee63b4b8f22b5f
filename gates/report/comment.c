/* `kgate comment --from-report R.json [...]`: one PR/MR comment per pipeline, created or updated
 * in place (docs/production-ci.md, "PR/MR comment").
 *
 * The body (Markdown) starts with the hidden marker KG_COMMENT_MARKER, then a headline with the
 * verdict across every report given (one per GPU of the matrix): "kgate: 2 regressions, 1
 * failure", "kgate: all gates passed", or "kgate: incomplete: no GPU"; then one table of what
 * regressed (case, device class, change %, tolerance %), the failures, errors and faults, the
 * link to the HTML report and the reports it was made from.
 * GitHub: GET /user (the token's own user; an app token that may not read it: the app's bot,
 * github-actions[bot] or KGATE_COMMENT_AUTHOR), GET /repos/{repo}/issues/{pr}/comments (paged);
 * the comment by that user whose first line is the marker is PATCHed at
 * /repos/{repo}/issues/comments/{id}, else one is POSTed (a quote of the marker by anyone else
 * is never edited). GitLab: the same with
 * /projects/{id}/merge_requests/{iid}/notes (PUT .../notes/{id}). The token goes only into the
 * auth header (as for statuses: KGATE_STATUS_TOKEN, else GITHUB_TOKEN / CI_JOB_TOKEN) and is
 * redacted from every message. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/comment.h"
#include "report/http.h"

#define CM_MAX_ROWS 60 /* per table or list: a comment stays far below GitHub's 65536 */
#define CM_MAX_ALL 250 /* rows of the collapsed table of every case's change */
#define CM_GPU_LABEL 160
#define CM_PAGE 100 /* comments per page when looking for the marker */
#define CM_MAX_PAGES 50
/* The forge API's keys of a comment or note (both APIs spell them alike); not report keys, so
 * not in core/report_keys.h. */
#define CM_API_BODY "body"
#define CM_API_ID "id"
#define CM_API_GH_USER "user" /* GitHub: comment.user.login, GET /user .login */
#define CM_API_GH_LOGIN "login"
#define CM_API_GL_AUTHOR "author" /* GitLab: note.author.username, GET /user .username */
#define CM_API_GL_USERNAME "username"
/* A GitHub App installation token (GITHUB_TOKEN in Actions) may not read GET /user (403): its
 * comments are the app's bot's, KGATE_COMMENT_AUTHOR else this one. */
#define CM_GH_APP_BOT "github-actions[bot]"
#define CM_AUTHOR_ENV "KGATE_COMMENT_AUTHOR"
#define CM_MAX_ID 9007199254740991.0 /* 2^53 - 1: every larger JSON number is inexact */

/* The counts the headline is made of, over every report. */
typedef struct {
    int regressions, failures, errors, faults, no_gpu, incomplete, diagnostic, results;
    int ab_reports, ab_slower; /* `kgate ab` reports given; their B_SLOWER cases */
} cm_counts;

static bool cm_is_ab(const kg_export_row *r) { return strcmp(r->gate, KG_RV_GATE_AB) == 0; }

static bool cm_regressed(const kg_export_row *r)
{
    return !cm_is_ab(r) && r->decision && strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0;
}

static bool cm_ab_slower(const kg_export_row *r)
{
    return cm_is_ab(r) && r->decision && strcmp(r->decision, KG_RV_AB_B_SLOWER) == 0;
}

static bool cm_failed(const kg_export_row *r)
{
    return !cm_regressed(r) && !cm_ab_slower(r) &&
           (r->verdict == KG_VERDICT_FAIL || r->verdict == KG_VERDICT_XPASS);
}

static double cm_fig(const kg_export_row *r, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r->figures, key);
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : NAN;
}

/* A row's change in percent, positive = slower: against the mark (bench), or B against A
 * (ab: the median ratio). NAN when it has none. */
static double cm_change(const kg_export_row *r)
{
    return cm_is_ab(r) ? (cm_fig(r, KG_FIG_AB_RATIO_MEDIAN) - 1.0) * 100.0 : r->change_pct;
}

static const char *cm_device(const kg_export_view *v)
{
    return v->device_class ? v->device_class : v->device_name ? v->device_name : "no GPU";
}

static void cm_count(cm_counts *c, const kg_export_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        c->regressions += cm_regressed(r);
        c->ab_slower += cm_ab_slower(r);
        c->failures += cm_failed(r);
        c->errors += r->verdict == KG_VERDICT_ERROR;
        c->faults += r->fault_class != NULL;
    }
    c->ab_reports += v->command && strcmp(v->command, KG_RV_GATE_AB) == 0;
    c->no_gpu += v->no_gpu;
    c->incomplete += v->incomplete;
    c->diagnostic += v->diagnostic;
    c->results += (int)v->n;
}

/* "## kgate: 2 regressions, 1 failure" (counts of zero left out). */
static void cm_headline(kg_sbuf *b, const cm_counts *c)
{
    char buf[64];
    const char *sep = "";
    kg_sbuf_puts(b, "## kgate: ");
    if (c->ab_slower) {
        kg_sbuf_printf(b, "%d slower than the base (A/B)", c->ab_slower);
        sep = ", ";
    }
    if (c->regressions && !c->ab_reports) {
        kg_sbuf_puts(b, kg_fmt_count(buf, sizeof buf, c->regressions, "regression"));
        sep = ", ";
    }
    if (c->failures) {
        kg_sbuf_printf(b, "%s%s", sep, kg_fmt_count(buf, sizeof buf, c->failures, "failure"));
        sep = ", ";
    }
    if (c->errors) {
        kg_sbuf_printf(b, "%s%s", sep, kg_fmt_count(buf, sizeof buf, c->errors, "error"));
        sep = ", ";
    }
    if (c->no_gpu) {
        kg_sbuf_printf(b, "%sincomplete: no GPU", sep);
        sep = ", ";
    }
    if (c->incomplete) {
        kg_sbuf_printf(b, "%sincomplete (interrupted)", sep);
        sep = ", ";
    }
    if (!*sep)
        kg_sbuf_puts(b, c->results ? "all gates passed" : "no results");
    if (c->regressions && c->ab_reports)
        kg_sbuf_printf(b, " (%d above the marks, informational)", c->regressions);
    kg_sbuf_puts(b, "\n\n");
    if (c->diagnostic)
        kg_sbuf_puts(b, "**DIAGNOSTIC (non-certifying)**: at least one report is not a "
                        "production run; it certifies nothing.\n\n");
}

/* The one table of what regressed, across every report. */
static void cm_regressions(kg_sbuf *b, const kg_export_view *views, size_t n, int total,
                           bool informational)
{
    char ch[32], tol[32], mark[32], now[32];
    int shown = 0;
    if (!total)
        return;
    kg_sbuf_puts(b, informational ? "### Above the marks (informational: the A/B decides a pull "
                                    "request)\n\n"
                                  : "### Regressions\n\n");
    kg_sbuf_puts(b, "| case | device | change % | tolerance % | mark us | "
                    "now us |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < views[k].n && shown < CM_MAX_ROWS; i++) {
            const kg_export_row *r = &views[k].rows[i];
            if (!cm_regressed(r))
                continue;
            kg_sbuf_puts(b, "| ");
            kg_sbuf_md_code(b, r->case_id, 200);
            kg_sbuf_puts(b, " | ");
            kg_sbuf_md(b, cm_device(&views[k]), 80);
            kg_sbuf_printf(b, " | %s%s | %s | %s | %s |\n",
                           isnan(r->change_pct) || r->change_pct < 0 ? "" : "+",
                           kg_fmt_num(ch, sizeof ch, r->change_pct, "%.1f"),
                           kg_fmt_num(tol, sizeof tol, r->band_pct, "%.1f"),
                           kg_fmt_num(mark, sizeof mark, r->mark_us, "%.2f"),
                           kg_fmt_num(now, sizeof now, r->time_us, "%.2f"));
            shown++;
        }
    if (shown < total)
        kg_sbuf_printf(b, "\n... and %d more (see the report)\n", total - shown);
    kg_sbuf_puts(b, "\n");
}

/* A list of the failures (FAIL/XPASS that are not regressions) or the errors (faults named). */
static void cm_list(kg_sbuf *b, const kg_export_view *views, size_t n, bool errors, int total)
{
    int shown = 0;
    if (!total)
        return;
    kg_sbuf_puts(b, errors ? "### Errors and faults\n\n" : "### Failures\n\n");
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < views[k].n && shown < CM_MAX_ROWS; i++) {
            const kg_export_row *r = &views[k].rows[i];
            if (errors ? r->verdict != KG_VERDICT_ERROR : !cm_failed(r))
                continue;
            kg_sbuf_printf(b, "- **%s** ", kg_verdict_name(r->verdict));
            kg_sbuf_md(b, r->gate, 40);
            kg_sbuf_puts(b, " ");
            kg_sbuf_md_code(b, r->case_id, 200);
            kg_sbuf_puts(b, " on ");
            kg_sbuf_md(b, cm_device(&views[k]), 80);
            if (r->fault_class)
                kg_sbuf_printf(b, " (fault: %s)", r->fault_class);
            if (r->message && *r->message) {
                kg_sbuf_puts(b, ": ");
                kg_sbuf_md(b, r->message, 300);
            }
            kg_sbuf_puts(b, "\n");
            shown++;
        }
    if (shown < total)
        kg_sbuf_printf(b, "- ... and %d more (see the report)\n", total - shown);
    kg_sbuf_puts(b, "\n");
}

/* A GPU's label in the tables: the device class, the ordinal and the UUID's first characters
 * when the report has them ("NVIDIA H200/sm_90, GPU 0 (GPU-1a2b3c4d)"). */
static void cm_gpu_label(char *buf, size_t n, const kg_export_view *v, const cJSON *report)
{
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(report, KG_RK_DEVICE);
    const cJSON *ord = cJSON_GetObjectItemCaseSensitive(dev, KG_RK_DEVICE_ORDINAL);
    const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(dev, KG_RK_DEVICE_UUID);
    size_t len = (size_t)snprintf(buf, n, "%s", cm_device(v));
    if (len < n && cJSON_IsNumber(ord) && ord->valuedouble >= 0 && ord->valuedouble < 4096)
        len += (size_t)snprintf(buf + len, n - len, ", GPU %d", (int)ord->valuedouble);
    if (len < n && cJSON_IsString(uuid) && uuid->valuestring[0])
        snprintf(buf + len, n - len, " (%.12s)", uuid->valuestring);
}

/* One row of the tables sorted by change. */
typedef struct {
    const kg_export_row *r;
    size_t k;      /* the report it is from */
    double change; /* percent, positive = slower; NAN: none (sorted last) */
} cm_item;

static int cm_item_cmp(const void *a, const void *b)
{
    const cm_item *x = a, *y = b;
    if (isnan(x->change) != isnan(y->change))
        return isnan(x->change) ? 1 : -1;
    if (!isnan(x->change) && x->change != y->change)
        return x->change > y->change ? -1 : 1;
    int c = strcmp(x->r->case_id, y->r->case_id);
    return c ? c : (x->k < y->k ? -1 : x->k > y->k);
}

/* The A/B rows (ab_only) or every bench and A/B row that ran, worst change first. */
static size_t cm_collect(cm_item **out, const kg_export_view *views, size_t n, bool ab_only)
{
    size_t m = 0, cap = 0;
    for (size_t k = 0; k < n; k++)
        cap += views[k].n;
    *out = calloc(cap ? cap : 1, sizeof **out);
    if (!*out)
        return 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < views[k].n; i++) {
            const kg_export_row *r = &views[k].rows[i];
            bool bench = strcmp(r->gate, KG_RV_GATE_BENCH) == 0;
            if (!(cm_is_ab(r) || (bench && !ab_only)) || r->verdict == KG_VERDICT_SKIP)
                continue;
            (*out)[m++] = (cm_item){ .r = r, .k = k, .change = cm_change(r) };
        }
    qsort(*out, m, sizeof **out, cm_item_cmp);
    return m;
}

/* The A/B table: per case and GPU, B/A (the head over its base), the 95% CI and the decision. */
static void cm_ab_table(kg_sbuf *b, const kg_export_view *views, size_t n,
                        char (*gpu)[CM_GPU_LABEL])
{
    cm_item *it = NULL;
    char ra[32], lo[32], hi[32];
    size_t m = cm_collect(&it, views, n, true);
    if (m) {
        kg_sbuf_puts(b, "### A/B: this pull request (B) against its base (A), same GPU, same "
                        "job\n\n| case | GPU | B/A | 95% CI | decision |\n"
                        "| --- | --- | ---: | --- | --- |\n");
        for (size_t i = 0; i < m && i < CM_MAX_ROWS; i++) {
            const kg_export_row *r = it[i].r;
            kg_sbuf_puts(b, "| ");
            kg_sbuf_md_code(b, r->case_id, 200);
            kg_sbuf_puts(b, " | ");
            kg_sbuf_md(b, gpu[it[i].k], CM_GPU_LABEL);
            kg_sbuf_printf(b, " | %s | %s..%s | ",
                           kg_fmt_num(ra, sizeof ra, cm_fig(r, KG_FIG_AB_RATIO_MEDIAN), "%.4f"),
                           kg_fmt_num(lo, sizeof lo, cm_fig(r, KG_FIG_AB_RATIO_CI_LO), "%.4f"),
                           kg_fmt_num(hi, sizeof hi, cm_fig(r, KG_FIG_AB_RATIO_CI_HI), "%.4f"));
            kg_sbuf_md(b, r->decision ? r->decision : kg_verdict_name(r->verdict), 40);
            kg_sbuf_puts(b, cm_ab_slower(r) ? " (fails) |\n" : " |\n");
        }
        if (m > CM_MAX_ROWS)
            kg_sbuf_printf(b, "\n... and %zu more (see the report)\n", m - CM_MAX_ROWS);
        kg_sbuf_puts(b, "\n");
    }
    free(it);
}

/* Collapsed: every case's change against its mark (bench) or its base (A/B), worst first. */
static void cm_all_changes(kg_sbuf *b, const kg_export_view *views, size_t n,
                           char (*gpu)[CM_GPU_LABEL])
{
    cm_item *it = NULL;
    char ch[32], now[32];
    size_t m = cm_collect(&it, views, n, false);
    if (m) {
        kg_sbuf_printf(b,
                       "<details><summary>Every case's change (%zu rows, slowest first)"
                       "</summary>\n\n| case | GPU | change %% | against | decision | now us |\n"
                       "| --- | --- | ---: | --- | --- | ---: |\n",
                       m);
        for (size_t i = 0; i < m && i < CM_MAX_ALL; i++) {
            const kg_export_row *r = it[i].r;
            kg_sbuf_puts(b, "| ");
            kg_sbuf_md_code(b, r->case_id, 200);
            kg_sbuf_puts(b, " | ");
            kg_sbuf_md(b, gpu[it[i].k], CM_GPU_LABEL);
            kg_sbuf_printf(b, " | %s%s | %s | ", isnan(it[i].change) || it[i].change < 0 ? "" : "+",
                           kg_fmt_num(ch, sizeof ch, it[i].change, "%.2f"),
                           cm_is_ab(r)         ? "base (A/B)"
                           : isnan(r->mark_us) ? "no mark"
                                               : "mark");
            kg_sbuf_md(b, r->decision ? r->decision : kg_verdict_name(r->verdict), 40);
            kg_sbuf_printf(b, " | %s |\n", kg_fmt_num(now, sizeof now, r->time_us, "%.2f"));
        }
        if (m > CM_MAX_ALL)
            kg_sbuf_printf(b, "\n... and %zu more (see the report)\n", m - CM_MAX_ALL);
        kg_sbuf_puts(b, "\n</details>\n\n");
    }
    free(it);
}

/* The link (--report-url, else the CI run or job page) and the reports the comment is from. */
static bool cm_url_ok(const char *u)
{
    return u && (strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0) &&
           strlen(u) < 1024 && !strpbrk(u, " ()<>[]\n\r\t\"'`");
}

/* Each GPU's own link (--report-url after its --from-report), one per distinct URL. */
static bool cm_links(kg_sbuf *b, size_t n, const kg_comment_opts *o, char (*gpu)[CM_GPU_LABEL])
{
    int shown = 0;
    if (!o->report_urls)
        return false;
    for (size_t k = 0; k < n && k < o->n_reports; k++) {
        bool dup = false;
        if (!cm_url_ok(o->report_urls[k]))
            continue;
        for (size_t j = 0; j < k && !dup; j++)
            dup = o->report_urls[j] && strcmp(o->report_urls[j], o->report_urls[k]) == 0;
        if (dup)
            continue;
        kg_sbuf_puts(b, shown++ ? " · [" : "HTML report: [");
        kg_sbuf_md(b, gpu[k], CM_GPU_LABEL);
        kg_sbuf_printf(b, "](%s)", o->report_urls[k]);
    }
    if (shown)
        kg_sbuf_puts(b, "\n\n");
    return shown > 0;
}

static void cm_footer(kg_sbuf *b, const kg_export_view *views, size_t n, const kg_comment_opts *o,
                      char (*gpu)[CM_GPU_LABEL])
{
    char url[1024] = "";
    if (cm_links(b, n, o, gpu))
        ; /* each GPU's outputs linked */
    else if (o->report_url)
        snprintf(url, sizeof url, "%s", o->report_url);
    else if (kg_env("GITHUB_SERVER_URL") && kg_env("GITHUB_REPOSITORY") && kg_env("GITHUB_RUN_ID"))
        snprintf(url, sizeof url, "%s/%s/actions/runs/%s", kg_env("GITHUB_SERVER_URL"),
                 kg_env("GITHUB_REPOSITORY"), kg_env("GITHUB_RUN_ID"));
    else if (kg_env("CI_PIPELINE_URL"))
        snprintf(url, sizeof url, "%s", kg_env("CI_PIPELINE_URL"));
    if (url[0] && cm_url_ok(url))
        kg_sbuf_printf(b, "[HTML report](%s)\n\n", url);
    kg_sbuf_printf(b, "<sub>%zu report%s:", n, n == 1 ? "" : "s");
    for (size_t k = 0; k < n; k++) {
        char c[64];
        kg_sbuf_puts(b, k ? "; " : " ");
        kg_sbuf_md(b, cm_device(&views[k]), 80);
        kg_sbuf_printf(b, " (%s", kg_fmt_count(c, sizeof c, (int)views[k].n, "result"));
        if (o->report_paths && k < o->n_reports) {
            kg_sbuf_puts(b, ", ");
            kg_sbuf_md_code(b, o->report_paths[k], 200);
        }
        kg_sbuf_puts(b, ")");
    }
    kg_sbuf_puts(b, "</sub>\n");
}

int kg_comment_body(kg_sbuf *out, const cJSON *const *reports, size_t n, const kg_comment_opts *o)
{
    int rc = 0;
    cm_counts c = { 0 };
    size_t built = 0;
    kg_export_view *views = calloc(n ? n : 1, sizeof *views);
    char(*gpu)[CM_GPU_LABEL] = calloc(n ? n : 1, sizeof *gpu);
    if (!views || !gpu) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (; built < n; built++)
        KG_TRY(kg_export_view_build(&views[built], reports[built]));
    for (size_t k = 0; k < n; k++) {
        cm_count(&c, &views[k]);
        cm_gpu_label(gpu[k], sizeof gpu[k], &views[k], reports[k]);
    }
    kg_sbuf_puts(out, KG_COMMENT_MARKER "\n");
    cm_headline(out, &c);
    cm_ab_table(out, views, n, gpu);
    cm_regressions(out, views, n, c.regressions, c.ab_reports > 0);
    cm_list(out, views, n, false, c.failures);
    cm_list(out, views, n, true, c.errors);
    cm_all_changes(out, views, n, gpu);
    cm_footer(out, views, n, o, gpu);
    if (out->err)
        rc = KG_ERR(KG_ENOMEM, "out of memory");
cleanup:
    for (size_t k = 0; k < built; k++)
        kg_export_view_free(&views[k]);
    free(views);
    free(gpu);
    return rc;
}

/* ---- posting ------------------------------------------------------------------------- */

/* Where the comment goes, resolved from the CI environment before anything is sent. */
typedef struct {
    bool gh;
    const char *api, *where, *token, *tok_var, *num_var;
    char num[32]; /* the PR number / MR iid */
    char *base;   /* .../issues/{pr}/comments or .../merge_requests/{iid}/notes */
    char *item;   /* GitHub: .../issues/comments (+ /{id}); GitLab: = base */
    char *auth;
    char login[256]; /* the token's own user: only its comments are ever edited */
} cm_dest;

static bool cm_digits(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!isdigit((unsigned char)s[n]))
            return false;
    return n > 0 && n < 20;
}

/* The PR number: KGATE_PR_NUMBER, else GITHUB_REF refs/pull/N/merge (GitHub) or
 * CI_MERGE_REQUEST_IID (GitLab). */
static int cm_number(cm_dest *d)
{
    const char *v = kg_env("KGATE_PR_NUMBER"), *ref = kg_env("GITHUB_REF");
    d->num_var = "KGATE_PR_NUMBER";
    if (!v && d->gh && ref && strncmp(ref, "refs/pull/", 10) == 0) {
        const char *e = strchr(ref + 10, '/');
        size_t len = e ? (size_t)(e - (ref + 10)) : strlen(ref + 10);
        if (len < sizeof d->num) {
            memcpy(d->num, ref + 10, len);
            d->num[len] = '\0';
        }
        d->num_var = "GITHUB_REF";
        v = d->num;
    } else if (!v && !d->gh) {
        d->num_var = "CI_MERGE_REQUEST_IID";
        v = kg_env(d->num_var);
    }
    if (!v)
        return KG_ERR(KG_EINVAL,
                      "comment: no %s number: not a %s pipeline? set KGATE_PR_NUMBER "
                      "(or %s)",
                      d->gh ? "pull request" : "merge request",
                      d->gh ? "pull request" : "merge request",
                      d->gh ? "GITHUB_REF=refs/pull/N/merge" : "CI_MERGE_REQUEST_IID");
    if (!cm_digits(v))
        return KG_ERR(KG_EINVAL, "comment: %s: expected a %s number, got '%s'", d->num_var,
                      d->gh ? "pull request" : "merge request", v);
    if (v != d->num)
        snprintf(d->num, sizeof d->num, "%s", v);
    return 0;
}

static int cm_dest_env(cm_dest *d, const kg_comment_opts *o)
{
    kg_status_platform p = o->plat;
    if (p == KG_STATUS_PLATFORM_AUTO)
        p = kg_env("GITHUB_ACTIONS") ? KG_STATUS_PLATFORM_GITHUB
            : kg_env("GITLAB_CI")    ? KG_STATUS_PLATFORM_GITLAB
                                     : KG_STATUS_PLATFORM_AUTO;
    if (p == KG_STATUS_PLATFORM_AUTO)
        return KG_ERR(KG_EINVAL, "comment: no CI detected (neither GITHUB_ACTIONS nor GITLAB_CI "
                                 "is set); use --platform github|gitlab");
    bool gh = d->gh = p == KG_STATUS_PLATFORM_GITHUB;
    d->api = gh ? (kg_env("GITHUB_API_URL") ? kg_env("GITHUB_API_URL") : "https://api.github.com")
                : kg_env("CI_API_V4_URL");
    d->where = gh ? kg_env("GITHUB_REPOSITORY") : kg_env("CI_PROJECT_ID");
    d->tok_var = "KGATE_STATUS_TOKEN";
    if (!(d->token = kg_env(d->tok_var))) {
        d->tok_var = gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN";
        d->token = kg_env(d->tok_var);
    }
    if (!kg_status_url_ok(d->api))
        return KG_ERR(KG_EINVAL, "comment: %s: expected an http(s) URL, got '%s'",
                      gh ? "GITHUB_API_URL" : "CI_API_V4_URL", d->api ? d->api : "(unset)");
    if (!d->where || (gh && (!strchr(d->where, '/') || strpbrk(d->where, "?#% "))))
        return KG_ERR(KG_EINVAL, "comment: %s: expected %s, got '%s'",
                      gh ? "GITHUB_REPOSITORY" : "CI_PROJECT_ID",
                      gh ? "owner/name" : "a project id or path", d->where ? d->where : "(unset)");
    int rc = cm_number(d);
    if (rc < 0)
        return rc;
    if (!d->token)
        return KG_ERR(KG_EINVAL, "comment: no token: set %s (or KGATE_STATUS_TOKEN)",
                      gh ? "GITHUB_TOKEN" : "CI_JOB_TOKEN");
    return kg_http_token_check(d->token, d->tok_var, "comment");
}

static char *cm_strdupf(const char *fmt, const char *a, int alen, const char *b, const char *c)
{
    size_t n = (size_t)alen + strlen(b) + strlen(c) + strlen(fmt) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, fmt, alen, a, b, c);
    return s;
}

/* The list/create URL, the update URL's prefix and the token's header. */
static int cm_dest_urls(cm_dest *d)
{
    int rc = 0;
    char *esc = curl_easy_escape(NULL, d->where, 0);
    int alen = (int)strlen(d->api);
    while (alen && d->api[alen - 1] == '/')
        alen--;
    if (!esc) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* GitHub's owner/name keeps its slash; a GitLab project path is URL-encoded. */
    d->base = cm_strdupf(d->gh ? "%.*s/repos/%s/issues/%s/comments"
                               : "%.*s/projects/%s/merge_requests/%s/notes",
                         d->api, alen, d->gh ? d->where : esc, d->num);
    d->item = d->gh ? cm_strdupf("%.*s/repos/%s/issues/comments%s", d->api, alen, d->where, "")
                    : cm_strdupf("%.*s%s%s", d->base, (int)strlen(d->base), "", "");
    const char *hname = d->gh                                     ? "Authorization: Bearer "
                        : strcmp(d->tok_var, "CI_JOB_TOKEN") == 0 ? "JOB-TOKEN: "
                                                                  : "PRIVATE-TOKEN: ";
    d->auth = cm_strdupf("%.*s%s%s", hname, (int)strlen(hname), d->token, "");
    if (!d->base || !d->item || !d->auth)
        rc = KG_ERR(KG_ENOMEM, "out of memory");
cleanup:
    curl_free(esc);
    return rc;
}

static void cm_dest_free(cm_dest *d)
{
    if (d->auth) { /* the token does not outlive its use */
        memset(d->auth, 0, strlen(d->auth));
        free(d->auth);
    }
    free(d->base);
    free(d->item);
    d->auth = d->base = d->item = NULL;
}

static const char *cm_hint(long status, bool gh)
{
    switch (status) {
    case 401:
        return gh ? "check GITHUB_TOKEN / KGATE_STATUS_TOKEN"
                  : "check KGATE_STATUS_TOKEN / CI_JOB_TOKEN";
    case 403:
        return gh ? "the workflow needs `permissions: pull-requests: write`"
                  : "the token needs the api scope (CI_JOB_TOKEN cannot write notes: set "
                    "KGATE_STATUS_TOKEN)";
    case 404:
        return gh ? "check GITHUB_REPOSITORY and the pull request number"
                  : "check CI_PROJECT_ID and the merge request iid";
    default: return NULL;
    }
}

/* One request; a failure's message gets the hint for its status. */
static int cm_send(kg_http_response *resp, const char *method, const char *url, const char *body,
                   const char *const *headers, const kg_http_opts *ho, const cm_dest *d)
{
    int rc = kg_http_request(resp, method, url, headers, body, ho);
    if (rc < 0) {
        char msg[1200];
        const char *hint = cm_hint(resp->status, d->gh);
        snprintf(msg, sizeof msg, "%s", kg_error_last());
        rc = KG_ERR(KG_EHTTP, "comment: %s%s%s", msg, hint ? " -- " : "", hint ? hint : "");
    }
    return rc;
}

/* A comment's id as an integer in range, or 0: a JSON number like 1e30 or 1.5 is no id. */
static long long cm_id(const cJSON *i)
{
    if (!cJSON_IsNumber(i))
        return 0;
    double v = i->valuedouble;
    return v >= 1 && v <= CM_MAX_ID && v == floor(v) ? (long long)v : 0;
}

/* The comment's author: GitHub user.login, GitLab author.username. */
static const char *cm_author(const cJSON *it, bool gh)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, gh ? CM_API_GH_USER : CM_API_GL_AUTHOR);
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(u, gh ? CM_API_GH_LOGIN : CM_API_GL_USERNAME));
}

/* Ours: authored by the token's user, the marker its whole first line. Anyone can quote the
 * marker; only kgate's own comment is edited, so no one else's text carries its verdict. */
static bool cm_ours(const cJSON *it, const cm_dest *d)
{
    const char *b = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, CM_API_BODY));
    const char *who = cm_author(it, d->gh);
    size_t n = strlen(KG_COMMENT_MARKER);
    return b && who && strcmp(who, d->login) == 0 && strncmp(b, KG_COMMENT_MARKER, n) == 0 &&
           (b[n] == '\0' || b[n] == '\n' || (b[n] == '\r' && b[n + 1] == '\n'));
}

/* Look through the PR/MR's comments for ours; *id = 0 when there is none. *more: the page was
 * full (another may follow). */
static int cm_find_page(long long *id, bool *more, const kg_http_response *resp, const char *url,
                        const cm_dest *d)
{
    cJSON *arr = resp->body ? cJSON_Parse(resp->body) : NULL;
    const cJSON *it;
    *more = false;
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(arr);
        return KG_ERR(KG_EHTTP, "comment: GET %s: expected a JSON array of comments", url);
    }
    cJSON_ArrayForEach(it, arr) {
        long long cid = cm_id(cJSON_GetObjectItemCaseSensitive(it, CM_API_ID));
        if (!*id && cid && cm_ours(it, d))
            *id = cid;
    }
    *more = cJSON_GetArraySize(arr) >= CM_PAGE;
    cJSON_Delete(arr);
    return 0;
}

/* The token's own user: GET /user (GitHub .login, GitLab .username); a GitHub token that may
 * not read it (an app's installation token: 403) comments as the app's bot. */
static int cm_whoami(cm_dest *d, const char *const *headers, const kg_http_opts *ho)
{
    int rc = 0;
    char url[2048];
    kg_http_response resp = { 0 };
    cJSON *j = NULL;
    int alen = (int)strlen(d->api);
    while (alen && d->api[alen - 1] == '/')
        alen--;
    snprintf(url, sizeof url, "%.*s/user", alen, d->api);
    rc = kg_http_request(&resp, "GET", url, headers, NULL, ho);
    if (rc < 0 && d->gh && resp.status == 403) {
        const char *bot = kg_env(CM_AUTHOR_ENV) ? kg_env(CM_AUTHOR_ENV) : CM_GH_APP_BOT;
        snprintf(d->login, sizeof d->login, "%s", bot);
        rc = 0;
        goto cleanup;
    }
    if (rc < 0) {
        char msg[1200];
        const char *hint = cm_hint(resp.status, d->gh);
        snprintf(msg, sizeof msg, "%s", kg_error_last());
        rc = KG_ERR(KG_EHTTP, "comment: who is the token's user? %s%s%s", msg, hint ? " -- " : "",
                    hint ? hint : "");
        goto cleanup;
    }
    j = resp.body ? cJSON_Parse(resp.body) : NULL;
    const char *who = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(j, d->gh ? CM_API_GH_LOGIN : CM_API_GL_USERNAME));
    if (!who || !*who || strlen(who) >= sizeof d->login) {
        rc = KG_ERR(KG_EHTTP, "comment: GET %s: expected {\"%s\": <the token's user>}", url,
                    d->gh ? CM_API_GH_LOGIN : CM_API_GL_USERNAME);
        goto cleanup;
    }
    snprintf(d->login, sizeof d->login, "%s", who);
cleanup:
    cJSON_Delete(j);
    kg_http_response_free(&resp);
    return rc;
}

static int cm_find(long long *id, cm_dest *d, const char *const *headers, const kg_http_opts *ho)
{
    int rc = 0;
    bool more = true;
    char url[2048];
    *id = 0;
    KG_TRY(cm_whoami(d, headers, ho));
    for (int page = 1; more && !*id && page <= CM_MAX_PAGES; page++) {
        kg_http_response resp = { 0 };
        snprintf(url, sizeof url, "%s?per_page=%d&page=%d", d->base, CM_PAGE, page);
        rc = cm_send(&resp, "GET", url, NULL, headers, ho, d);
        if (rc == 0)
            rc = cm_find_page(id, &more, &resp, url, d);
        kg_http_response_free(&resp);
        if (rc < 0)
            return rc;
    }
cleanup:
    return rc;
}

/* The id of the comment a forge's reply describes (cm_id: 0 when it names none). */
static long long cm_reply_id(const kg_http_response *resp)
{
    cJSON *j = resp->body ? cJSON_Parse(resp->body) : NULL;
    long long id = cm_id(cJSON_GetObjectItemCaseSensitive(j, CM_API_ID));
    cJSON_Delete(j);
    return id;
}

/* Update comment `id` in place, or create one (id 0). */
static int cm_write(const cm_dest *d, long long id, const char *body, const char *const *headers,
                    const kg_http_opts *ho)
{
    int rc = 0;
    char url[2048];
    kg_http_response resp = { 0 };
    cJSON *j = cJSON_CreateObject();
    char *text = j && cJSON_AddStringToObject(j, CM_API_BODY, body) ? cJSON_PrintUnformatted(j)
                                                                    : NULL;
    if (!text) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (id)
        snprintf(url, sizeof url, "%s/%lld", d->item, id);
    else
        snprintf(url, sizeof url, "%s", d->base);
    KG_TRY(cm_send(&resp, id ? (d->gh ? "PATCH" : "PUT") : "POST", url, text, headers, ho, d));
    /* Created: the new comment's id is the one the forge's reply names. */
    long long shown = id ? id : cm_reply_id(&resp);
    printf("kgate comment: %s %s %lld on %s%s%s -> HTTP %ld\n", id ? "updated" : "created",
           d->gh ? "comment" : "note", shown, d->where, d->gh ? "#" : "!", d->num, resp.status);
cleanup:
    kg_http_response_free(&resp);
    cJSON_free(text);
    cJSON_Delete(j);
    return rc;
}

/* A dry run: the body, then what would be sent where (nothing is sent). */
static int cm_dry_run(const kg_sbuf *b, const kg_comment_opts *o)
{
    cm_dest d;
    memset(&d, 0, sizeof d);
    fwrite(b->p, 1, b->len, stdout);
    if (cm_dest_env(&d, o) < 0) {
        printf("\ndry run: nothing sent (%s)\n", kg_error_last());
        return 0;
    }
    printf("\ndry run: GET /user, GET %s (look for the token's user's comment that starts "
           "with %s), then %s or POST there (token redacted: ***)\n",
           d.gh ? "/repos/{repo}/issues/{pr}/comments"
                : "/projects/{id}/merge_requests/{iid}/notes",
           KG_COMMENT_MARKER, d.gh ? "PATCH the comment found" : "PUT the note found");
    return 0;
}

int kg_comment_post(const cJSON *const *reports, size_t n, const kg_comment_opts *o)
{
    int rc = 0;
    kg_sbuf b = KG_SBUF_INIT;
    cm_dest d;
    const char *headers[6];
    kg_http_opts ho;
    long long id = 0;
    memset(&d, 0, sizeof d);
    if (n == 0)
        return KG_ERR(KG_EINVAL, "comment: no report given (--from-report REPORT.json)");
    KG_TRY(kg_comment_body(&b, reports, n, o));
    if (o->dry_run) {
        rc = cm_dry_run(&b, o);
        goto cleanup;
    }
    KG_TRY(cm_dest_env(&d, o));
    KG_TRY(cm_dest_urls(&d));
    kg_http_forge_setup(headers, &ho, d.gh, d.auth, d.token, o->timeout_s, o->connect_timeout_s,
                        o->retries, o->verbose);
    KG_TRY(cm_find(&id, &d, headers, &ho));
    KG_TRY(cm_write(&d, id, b.p, headers, &ho));
cleanup:
    cm_dest_free(&d);
    kg_sbuf_free(&b);
    return rc;
}
