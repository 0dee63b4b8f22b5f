/* `kgate selftest`: its options and the call into the engine (gates/selftest/selftest.c). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const char selftest_description[] =
    "Run every gate over the defect catalogue (the kgate-defects runner beside this one, or\n"
    "--defects PATH / $KGATE_DEFECTS) and over this runner's clean cases, and print the\n"
    "detection matrix (case x gate: expected, observed), then\n"
    "  N caught, N escaped, N false alarms\n"
    "A defect is caught when the gate it names FAILs it; a clean case is a false alarm when any\n"
    "gate FAILs or ERRORs on it. Without a GPU only the static checks run (the rest: not run).\n";
static const char selftest_exit_codes[] =
    "exit codes: 0 every defect caught and no false alarm, 1 an escape or a false alarm,\n"
    "            2 usage or input error, 3 no GPU (nothing escaped of what ran), 4 runtime\n"
    "            error (a child run failed) or interrupted (SIGINT/SIGTERM)\n";

typedef struct {
    const char *defects, *keep;
} st_opts;

static const kg_opt st_opt_table[] = {
    KG_OPT_STRING_("defects", "PATH", st_opts, defects,
                   "the defect runner (default: $KGATE_DEFECTS, else kgate-defects beside this "
                   "runner)"),
    KG_OPT_STRING_("keep", "DIR", st_opts, keep, "keep the child reports and logs in DIR"),
};

/* `kgate selftest`: not a gate over this runner's selection (--filter narrows the defect
 * catalogue), so no kg_run; the gate table, the report and the exit-code policy are shared. */
int kg_cmd_selftest(kg_registry *reg, int argc, char **argv)
{
    kg_common_opts o = KG_COMMON_OPTS_INIT;
    st_opts so = { 0 };
    const kg_opt_table tables[] = {
        { .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = &o },
        { .opts = st_opt_table, .n = KG_ARRAY_LEN(st_opt_table), .target = &so },
    };
    const kg_opt_cmd cmd = { .command = "selftest",
                             .description = selftest_description,
                             .tables = tables,
                             .n_tables = 2,
                             .exit_codes = selftest_exit_codes };
    kg_report *rep = NULL;
    char path[PATH_MAX];
    bool help = false;
    int rc = 0, code = KG_EXIT_PASS;
    KG_UNUSED(reg);
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    if (o.shard_count) {
        rc = KG_ERR(KG_EINVAL, "selftest: --shard is not supported (the selftest checks the "
                               "gates on this GPU: every shard of a run runs it whole)");
        goto cleanup;
    }
    KG_TRY(kg_selftest_defects_path(path, sizeof path, so.defects));
    if (o.report_path)
        KG_TRY(kg_path_check_writable(o.report_path));
    if (o.report_path && strcmp(o.report_path, "-") == 0)
        KG_TRY(kg_stdout_for_data()); /* the matrix on stderr, stdout the report alone */
    if (!o.seed_set)
        o.seed = kg_seed_fresh();
    KG_TRY(kg_report_new(&rep, "selftest", true));
    kg_report_set_seed(rep, o.seed);
    kg_interrupt_catch(); /* Ctrl-C: the children killed at once, the report so far written */
    printf("kgate selftest: seed %llu (reproduce with --seed %llu), defects from %s\n",
           (unsigned long long)o.seed, (unsigned long long)o.seed, path);
    KG_TRY(kg_selftest_run(rep, path, &o, so.keep, true, &code));
    if (o.report_path) {
        KG_TRY(kg_report_write(rep, o.report_path));
        printf("report: %s\n", o.report_path);
    }
cleanup:
    if (rc < 0 && kg_interrupted() && rep && o.report_path &&
        kg_report_write(rep, o.report_path) == 0)
        printf("report: %s (incomplete)\n", o.report_path);
    kg_report_free(rep);
    return rc < 0 ? kg_cli_fail(rc) : code;
}
