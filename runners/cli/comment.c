/* `kgate comment --from-report R.json [--from-report R2.json ...]`: the flags of the PR/MR
 * comment (the body and the posting are gates/report/comment.c). */
#include "cli/cli.h"
#include "cli/cmd_opts.h"
#include "report/comment.h"
#include "report/export.h"

#define CM_MAX_REPORTS 64

typedef struct {
    kg_comment_opts o;
    const char *paths[CM_MAX_REPORTS];
    size_t n;
    const char *urls[CM_MAX_REPORTS]; /* each report's own --report-url */
    const char *first_url;            /* the one given when only one is */
    size_t n_urls;
    bool url_unpaired; /* a --report-url before any --from-report */
} comment_args;

static int comment_from_report(void *opts, const char *v)
{
    comment_args *a = opts;
    if (a->n == CM_MAX_REPORTS)
        return KG_ERR(KG_EINVAL, "--from-report: at most %d reports", CM_MAX_REPORTS);
    a->paths[a->n++] = v;
    return 0;
}

static int comment_report_url(void *opts, const char *v)
{
    comment_args *a = opts;
    if (!kg_status_url_ok(v))
        return KG_ERR(KG_EINVAL, "--report-url: expected an http(s) URL, got '%s'", v);
    if (a->n == 0)
        a->url_unpaired = true;
    else
        a->urls[a->n - 1] = v;
    if (!a->n_urls++)
        a->first_url = v;
    return 0;
}

static int comment_platform(void *opts, const char *v)
{
    return kg_cmd_opts_platform(&((kg_comment_opts *)opts)->plat, v);
}

/* The reports and their links (into comment_args), then the posting flags (into its
 * kg_comment_opts). */
static const kg_opt comment_reports[] = {
    KG_OPT_FN_("from-report", "REPORT.json", comment_from_report, 0,
               "a kgate report; repeat it, one per GPU of the matrix"),
    KG_OPT_FN_("report-url", "URL", comment_report_url, 0,
               "the HTML report's link (default: the CI run or pipeline page); given\n"
               "after each --from-report, that report's own (its GPU's outputs)"),
};
static const kg_opt comment_post[] = {
    KG_OPT_BOOL_("dry-run", kg_comment_opts, dry_run, "print the body and send nothing"),
    KG_CMD_OPT_PLATFORM(comment_platform),
    KG_CMD_OPTS_HTTP(kg_comment_opts),
    KG_CMD_OPT_VERBOSE(kg_comment_opts),
};

static const char comment_description[] =
    "Create or update the one kgate comment of the pull/merge request (found again by its\n"
    "hidden marker <!-- kgate-comment -->): the verdict across every report given (one per\n"
    "GPU of the matrix), one table of what regressed (case, device, change %, tolerance %),\n"
    "the failures, errors and faults, a collapsed table of every case's change (against its\n"
    "mark, or its base), and the link to the HTML report. A `kgate ab` report adds the A/B\n"
    "table (B/A, 95% CI, decision; B_SLOWER fails) and makes the marks' regressions\n"
    "informational: a pull request's bench verdict is its A/B.\n"
    "GitHub (GITHUB_ACTIONS=true): $GITHUB_API_URL/repos/$GITHUB_REPOSITORY/issues/PR/comments,\n"
    "  PR from KGATE_PR_NUMBER or GITHUB_REF (refs/pull/N/merge); token KGATE_STATUS_TOKEN or\n"
    "  GITHUB_TOKEN (needs pull-requests: write).\n"
    "GitLab (GITLAB_CI=true): $CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/IID/notes,\n"
    "  IID from KGATE_PR_NUMBER or CI_MERGE_REQUEST_IID; token KGATE_STATUS_TOKEN (PRIVATE-TOKEN)\n"
    "  or CI_JOB_TOKEN (JOB-TOKEN).\n";
static const char comment_exit_codes[] =
    "exit codes: 0 posted (or printed), 2 usage or input error (bad flag, environment: no PR/MR\n"
    "            number, or report), 4 HTTP failure (including 401/403/404, explained)\n";

int kg_cmd_comment(kg_registry *reg, int argc, char **argv)
{
    comment_args a = { .o = KG_COMMENT_OPTS_INIT, .n = 0 };
    kg_opt_table tables[] = { KG_CMD_OPTS_TABLE(comment_reports, &a),
                              KG_CMD_OPTS_TABLE(comment_post, &a.o) };
    kg_opt_cmd cmd = { .command = "comment",
                       .description = comment_description,
                       .tables = tables,
                       .n_tables = KG_ARRAY_LEN(tables),
                       .exit_codes = comment_exit_codes };
    cJSON *reps[CM_MAX_REPORTS] = { 0 };
    int rc = 0;
    KG_UNUSED(reg);
    if ((rc = kg_cmd_opts_parse(&cmd, argc, argv, NULL, 0, NULL)) != 0)
        goto cleanup; /* --help (1) or a usage error */
    if (!a.n) {
        rc = kg_cmd_opts_required(&cmd, "--from-report REPORT.json");
        goto cleanup;
    }
    if (a.n_urls == 1) {
        a.o.report_url = a.first_url; /* one link for the whole comment, as before */
    } else if (a.n_urls > 1) {
        if (a.url_unpaired) {
            rc = KG_ERR(KG_EINVAL, "--report-url: give one, or one after each --from-report "
                                   "(its own link)");
            goto cleanup;
        }
        a.o.report_urls = a.urls;
    }
    for (size_t i = 0; i < a.n; i++)
        KG_TRY(kg_report_load(&reps[i], a.paths[i]));
    a.o.report_paths = a.paths;
    a.o.n_reports = a.n;
    KG_TRY(kg_comment_post((const cJSON *const *)reps, a.n, &a.o));
cleanup:
    for (size_t i = 0; i < a.n; i++)
        cJSON_Delete(reps[i]);
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
