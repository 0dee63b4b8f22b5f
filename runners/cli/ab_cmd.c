/* `kgate ab A_EXE B_EXE`: its arguments and the calls into the ab gate (gates/ab/ab.c). */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const char ab_exit_codes[] =
    "exit codes: 0 B not slower, 1 B slower on a case, 2 usage or input error, 3 no GPU,\n"
    "            4 runtime error (a bench run failed, a case ERROR, interrupted)\n";

static int ab_parse(kg_ab_opts *o, kg_common_opts *co, int argc, char **argv, bool *help)
{
    int rc = 0;
    const char *pos[3] = { NULL };
    size_t npos = 0;
    const kg_opt_table tables[] = {
        { .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = co },
        kg_ab_opt_table(o),
    };
    const kg_opt_cmd cmd = { .command = "ab",
                             .synopsis_tail = "A_EXE B_EXE",
                             .description = kg_ab_description(),
                             .tables = tables,
                             .n_tables = 2,
                             .exit_codes = ab_exit_codes };
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, help, pos, 3, &npos));
    if (*help)
        return 0;
    if (npos != 2) {
        kg_opt_cmd_usage(stderr, &cmd);
        return KG_ERR(KG_EINVAL,
                      "ab: expected two runner executables A_EXE B_EXE, got %zu "
                      "argument(s)",
                      npos);
    }
    if (co->shard_count)
        return KG_ERR(KG_EINVAL, "ab: --shard is not supported (both sides time every selected "
                                 "case; split an A/B with --filter)");
    o->exe[0] = pos[0];
    o->exe[1] = pos[1];
    o->exclude = co->exclude; /* the selection and the watchdog are the bench runs' */
    o->tag = co->tag;
    o->case_timeout_s = co->case_timeout_s;
    KG_TRY(kg_ab_check_exes(o));
    if (!co->seed_set) { /* the runners need it before the report exists */
        co->seed = kg_seed_fresh();
        co->seed_set = true;
    }
cleanup:
    return rc;
}

int kg_cmd_ab(kg_registry *reg, int argc, char **argv)
{
    int rc = 0;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    kg_ab_opts o = kg_ab_opts_init;
    kg_run run = { 0 };
    kg_ab_state *st = NULL;
    kg_registry *cases = NULL;
    bool help = false;
    char banner[1200];
    KG_TRY(ab_parse(&o, &co, argc, argv, &help));
    if (help)
        return KG_EXIT_PASS;
    if (co.n_devices && co.device != co.devices[0]) { /* before the rounds, not after */
        rc = KG_ERR(KG_EINVAL,
                    "ab: --device %d and --devices %d,...: the A/B runs on one GPU; "
                    "give one of the two",
                    co.device, co.devices[0]);
        goto cleanup;
    }
    if (co.report_path && strcmp(co.report_path, "-") == 0)
        KG_TRY(kg_stdout_for_data()); /* the rounds and the table on stderr */
    printf("kgate ab: A=%s B=%s, %d rounds (A then B, separate processes), seed %llu\n", o.exe[0],
           o.exe[1], o.rounds, (unsigned long long)co.seed);
    kg_gate_env env = { .seed = co.seed, .device = co.device, .filter = co.filter };
    kg_interrupt_catch(); /* Ctrl-C: the round running killed at once, the report written */
    KG_TRY(kg_ab_rounds(&st, &o, &env));
    KG_TRY(kg_ab_registry(&cases, st, reg));
    o.rounds_done = st;
    snprintf(banner, sizeof banner, "A/B of %s and %s", o.exe[0], o.exe[1]);
    kg_common_opts sel = co; /* the reports' cases are the bench runs' selection already */
    sel.n_devices = 0;       /* the rounds timed on the first GPU alone; no other worker */
    if (cases)
        sel.filter = sel.exclude = sel.tag = NULL;
    KG_TRY(kg_run_begin(&run, "ab", &sel, cases ? cases : reg, banner));
    if (kg_ab_stopped_at(st)) { /* the report: incomplete, where it stopped, no verdicts */
        rc = kg_run_stopped(&run, "%s", kg_ab_stopped_at(st));
        goto cleanup;
    }
    KG_TRY(kg_ab_decide(&run, cases ? cases : reg, &o));
cleanup:
    rc = kg_run_finish(&run, rc);
    kg_run_free(&run);
    kg_registry_free(cases);
    kg_ab_state_free(st);
    return rc;
}
