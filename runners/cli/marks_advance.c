/* `kgate marks advance --from-report REPORT.json`: the production step from a recorded report
 * (release managers; the CPU tests drive the production path through it). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "production/production.h"
#include "marks/marks_ref.h"

static const char advance_description[] =
    "The production path from a recorded report (of `kgate run --production`): if every gate\n"
    "passed for every case on a GPU, commit the advanced marks exactly as the run would have.\n"
    "A diagnostic (non-certifying) report is refused (exit 2); a report with a FAIL, ERROR or\n"
    "SKIP commits nothing (exit 1).\n";
static const char advance_exit_codes[] =
    "exit codes: 0 committed (or nothing moved), 1 not every gate passed: nothing committed,\n"
    "            2 usage or input error (a diagnostic, unsigned or malformed report, a refused\n"
    "            branch), 4 runtime error (libgit2, the push)\n";

typedef struct {
    const char *from;
    kg_marks_git_opts mo;
} adv_opts;

static const kg_opt adv_opt_table[] = {
    { .name = "from-report",
      .value_name = "REPORT.json",
      .kind = KG_OPT_STRING,
      .offset = offsetof(adv_opts, from),
      .flags = KG_OPT_F_REQUIRED,
      .help = "the report of a `kgate run --production`" },
    KG_OPT_STRING_("marks", "FILE", adv_opts, mo.marks_path, "marks file in the repository"),
    KG_OPT_STRING_("marks-branch", "BRANCH", adv_opts, mo.marks_ref,
                   "the branch marks are committed on (default $KGATE_MARKS_BRANCH, else "
                   "kgate-marks; HEAD: the checked-out branch)"),
    KG_OPT_STRING_("marks-ref", "REF", adv_opts, mo.marks_ref, "the older name of --marks-branch"),
    KG_OPT_STRING_("push", "REMOTE", adv_opts, mo.push_remote, "push the commit"),
    KG_OPT_STRING_("author", "NAME", adv_opts, mo.author, "commit author"),
    KG_OPT_STRING_("email", "EMAIL", adv_opts, mo.email, "commit email"),
};

int kg_cmd_marks_advance(int argc, char **argv)
{
    adv_opts ao = { .mo = KG_MARKS_GIT_OPTS_INIT };
    const kg_opt_table tables[] = {
        { .opts = adv_opt_table, .n = KG_ARRAY_LEN(adv_opt_table), .target = &ao }
    };
    const kg_opt_cmd cmd = { .command = "marks advance",
                             .description = advance_description,
                             .tables = tables,
                             .n_tables = 1,
                             .exit_codes = advance_exit_codes };
    const char *from = NULL;
    cJSON *root = NULL;
    kg_advance_input *in = NULL;
    kg_marks_target *t = NULL;
    kg_marks_git_opts mo;
    bool help = false;
    int rc = 0, code = KG_EXIT_PASS;
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    from = ao.from;
    mo = ao.mo;
    KG_TRY(kg_marks_branch_check(mo.marks_ref ? mo.marks_ref : kg_env(KG_MARKS_BRANCH_ENV),
                                 mo.marks_ref ? "--marks-branch" : KG_MARKS_BRANCH_ENV));
    mo.marks_ref = kg_marks_branch_default(mo.marks_ref);
    if (!from) {
        kg_opt_cmd_usage(stderr, &cmd);
        rc = KG_ERR(KG_EINVAL, "marks advance: --from-report REPORT is required");
        goto cleanup;
    }
    /* Strict load, signature (KGATE_REPORT_KEY), production shape (gates/marks/advance.h). */
    KG_TRY(kg_advance_load(&in, &root, from, "kgate marks advance --from-report"));
    KG_TRY(kg_marks_target_open(&t, &mo));
    KG_TRY(kg_advance_check_commit(root, t->git, t->refname, from));
    if (!in->all_passed) {
        printf("marks: not advancing: %s: not every gate passed for every case on a GPU (%s); "
               "nothing committed\n",
               from, in->why_not);
        code = KG_EXIT_GATE_FAILED;
        goto cleanup;
    }
    KG_TRY(kg_cli_fleet_learn(in, t->git, NULL, root)); /* GPU, history band */
    KG_TRY(kg_production_advance(t, &mo, in, NULL));
cleanup:
    if (rc < 0)
        code = kg_cli_fail(rc);
    kg_marks_target_free(t);
    kg_advance_input_free(in);
    cJSON_Delete(root);
    return code;
}
