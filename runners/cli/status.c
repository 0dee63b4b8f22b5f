/* `kgate status --from-report FILE`: the flags of the commit-status poster (the posting is
 * gates/report/status.c). */
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_opts.h"
#include "report/export.h"
#include "report/status.h"

static int status_target_url(void *opts, const char *v)
{
    if (!kg_status_url_ok(v))
        return KG_ERR(KG_EINVAL, "--target-url: expected an http(s) URL, got '%s'", v);
    ((kg_status_opts *)opts)->target_url = v;
    return 0;
}

static int status_platform(void *opts, const char *v)
{
    return kg_cmd_opts_platform(&((kg_status_opts *)opts)->plat, v);
}

static int status_context_suffix(void *opts, const char *v)
{
    if (!*v || strlen(v) > 80)
        return KG_ERR(KG_EINVAL, "--context-suffix: expected 1 to 80 characters");
    /* A newline would start a line of its own in the output (a `::error::` workflow command). */
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7F || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F))
            return KG_ERR(KG_EINVAL,
                          "--context-suffix: a control character (0x%02x) at %zu: "
                          "refused",
                          p[0] == 0xC2 ? p[1] : *p, (size_t)(p - (const unsigned char *)v));
    ((kg_status_opts *)opts)->context_suffix = v;
    return 0;
}

static const kg_opt status_table[] = {
    KG_OPT_STRING_REQUIRED_("from-report", "REPORT.json", kg_status_opts, report_path,
                            "the kgate report whose gates are posted"),
    KG_OPT_FN_("target-url", "URL", status_target_url, 0,
               "link of each status (default: the CI run or job page)"),
    KG_OPT_BOOL_("dry-run", kg_status_opts, dry_run,
                 "print the requests (token redacted) and send nothing"),
    KG_CMD_OPT_PLATFORM(status_platform),
    KG_CMD_OPTS_HTTP(kg_status_opts),
    KG_OPT_FN_("context-suffix", "TEXT", status_context_suffix, 0,
               "context 'kgate/<gate> (TEXT)': one set per GPU of a fleet"),
    KG_CMD_OPT_VERBOSE(kg_status_opts),
};

static const char status_description[] =
    "Post one commit status per gate (context kgate/<gate>) from a kgate report.\n"
    "GitHub (GITHUB_ACTIONS=true): POST $GITHUB_API_URL/repos/$GITHUB_REPOSITORY/statuses/SHA,\n"
    "  token KGATE_STATUS_TOKEN or GITHUB_TOKEN (Authorization: Bearer).\n"
    "GitLab (GITLAB_CI=true): POST $CI_API_V4_URL/projects/$CI_PROJECT_ID/statuses/SHA,\n"
    "  token KGATE_STATUS_TOKEN (PRIVATE-TOKEN) or CI_JOB_TOKEN (JOB-TOKEN).\n"
    "SHA: KGATE_STATUS_SHA, else GITHUB_SHA / CI_COMMIT_SHA. Every status finishes (never\n"
    "'pending'): pass -> success, FAIL/XPASS -> failure, ERROR/SKIP -> error (GitLab: failed);\n"
    "a diagnostic report's descriptions start DIAGNOSTIC (non-certifying), a run without a GPU's\n"
    "'incomplete: no GPU'.\n";
static const char status_exit_codes[] =
    "exit codes: 0 posted, 2 usage or input error (bad flag, environment or report),\n"
    "            4 HTTP failure (including 401/403/404, explained in the message, and a 2xx\n"
    "              whose body is not the status it set)\n";

int kg_cmd_status(kg_registry *reg, int argc, char **argv)
{
    kg_status_opts o = KG_STATUS_OPTS_INIT;
    kg_opt_table table = KG_CMD_OPTS_TABLE(status_table, &o);
    kg_opt_cmd cmd = { .command = "status",
                       .description = status_description,
                       .tables = &table,
                       .n_tables = 1,
                       .exit_codes = status_exit_codes };
    cJSON *rep = NULL;
    int rc = 0;
    KG_UNUSED(reg);
    if ((rc = kg_cmd_opts_parse(&cmd, argc, argv, NULL, 0, NULL)) != 0)
        goto cleanup; /* --help (1) or a usage error */
    if (!o.report_path) {
        rc = kg_cmd_opts_required(&cmd, "--from-report REPORT.json");
        goto cleanup;
    }
    KG_TRY(kg_report_load(&rep, o.report_path));
    KG_TRY(kg_status_post(rep, &o));
cleanup:
    cJSON_Delete(rep);
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
