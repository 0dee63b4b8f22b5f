/* `kgate history offsets --case ID`: per device class, each GPU's offset
 * from the class for one case, and the class's cross-GPU spread, from the production runs on
 * the history branch (the rules: gates/core/fleet.h). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "history/history_fleet.h"

typedef struct {
    const char *case_id, *device, *metric, *repo, *branch;
} ho_opts;

static const kg_opt ho_table[] = {
    KG_OPT_STRING_REQUIRED_("case", "ID", ho_opts, case_id, "the case (its id, exactly)"),
    KG_OPT_STRING_("device", "CLASS", ho_opts, device,
                   "only this device class (default: every class the case ran on)"),
    KG_OPT_STRING_("metric", "METRIC", ho_opts, metric, "the metric (default time_us_warm)"),
    KG_OPT_STRING_("repo", "DIR", ho_opts, repo,
                   "the repository (default: the one holding the current directory)"),
    KG_OPT_STRING_("branch", "REF", ho_opts, branch,
                   "the history (default: $KGATE_HISTORY_BRANCH, else kgate-history)"),
};

static const char ho_desc[] =
    "Per device class, each GPU's figure for one case (the median of its production runs'\n"
    "medians; regressed runs left out), its offset from the class's figure (the median of the\n"
    "GPUs' figures, one vote per GPU) and the class's cross-GPU spread (largest minus smallest\n"
    "figure of the GPUs with at least 3 runs, over the class's): the band a GPU that never set\n"
    "a mark is judged with adds it (docs/production-ci.md, \"Every figure knows its GPU\").\n";

/* One class: the table of its GPUs. */
static int ho_class(const kg_history_recs *all, const char *cls, const ho_opts *o)
{
    kg_fleet_run *runs = NULL;
    kg_fleet_gpu gpus[64];
    size_t n = 0, ng = 0;
    double median = 0, spread = -1;
    int rc = 0;
    KG_TRY(kg_history_fleet_runs(&runs, &n, all, cls, o->case_id, o->metric));
    KG_TRY(kg_fleet_offsets(gpus, &ng, KG_ARRAY_LEN(gpus), &median, &spread, runs, n));
    printf("%s [%s] %s: %zu production run(s), %zu GPU(s), class figure %.6g; cross-GPU spread "
           "%s",
           o->case_id, cls, o->metric ? o->metric : "time_us_warm", n, ng, median,
           spread >= 0 ? "" : "unknown (fewer than 2 GPUs with 3 runs)\n");
    if (spread >= 0)
        printf("%.2f%%\n", 100 * spread);
    printf("  %-44s %-20s %5s %12s %9s\n", "gpu", "serial", "runs", "median", "offset");
    for (size_t g = 0; g < ng; g++) {
        const char *sn = kg_history_fleet_serial(all, gpus[g].gpu);
        printf("  %-44s %-20s %5d %12.6g %+8.2f%%%s\n", gpus[g].gpu, sn[0] ? sn : "(none)",
               gpus[g].runs, gpus[g].median, 100 * gpus[g].offset_rel,
               gpus[g].runs < KG_FLEET_MIN_RUNS ? " (too few runs for the spread)" : "");
    }
    if (n && !ng)
        printf("  (no run records its GPU: written by a kgate that did not record GPUs)\n");
cleanup:
    free(runs);
    return rc;
}

int kg_cmd_history_offsets(int argc, char **argv)
{
    ho_opts o = { 0 };
    kg_opt_table t = { .opts = ho_table, .n = KG_ARRAY_LEN(ho_table), .target = &o };
    kg_opt_cmd cmd = { .command = "history offsets",
                       .description = ho_desc,
                       .tables = &t,
                       .n_tables = 1 };
    kg_history_recs all = { 0 };
    kg_git *g = NULL;
    bool help = false;
    int rc = 0, shown = 0;
    const char *rev = NULL;
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    if (!o.case_id) {
        rc = KG_ERR(KG_EINVAL, "history offsets: --case ID is required");
        goto cleanup;
    }
    rev = o.branch ? o.branch : kg_env(KG_HISTORY_BRANCH_ENV);
    rev = rev ? rev : KG_HISTORY_BRANCH_DEFAULT;
    KG_TRY(kg_git_open(&g, o.repo ? o.repo : "."));
    rc = kg_history_load(&all, g, rev);
    if (rc == KG_ENOTFOUND)
        rc = KG_ERR(KG_ENOTFOUND,
                    "history %s: no such branch or ref (fetch it: `git fetch "
                    "origin %s`)",
                    rev, rev);
    KG_TRY(rc);
    for (size_t i = 0; i < all.n; i++) {
        const char *cls = all.v[i].device_class;
        bool first = strcmp(all.v[i].case_id, o.case_id) == 0;
        for (size_t j = 0; first && j < i; j++)
            first = !(strcmp(all.v[j].device_class, cls) == 0 &&
                      strcmp(all.v[j].case_id, o.case_id) == 0);
        if (first && (!o.device || strcmp(o.device, cls) == 0)) {
            KG_TRY(ho_class(&all, cls, &o));
            shown++;
        }
    }
    if (!shown)
        rc = KG_ERR(KG_ENOTFOUND, "history offsets: no run of '%s'%s%s on %s", o.case_id,
                    o.device ? " on " : "", o.device ? o.device : "", rev);
cleanup:
    kg_history_recs_free(&all);
    kg_git_free(g);
    return rc;
}
