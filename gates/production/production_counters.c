/* The counters gate's part of the production step (issue #18): the typed counters rows of a
 * run become candidate marks for kg_advance_apply, the ratchet every bench mark goes through:
 * a mark only improves (lower DRAM bytes / instructions / spills / sysmem, higher occupancy /
 * tensor instructions), and only a run in which everything passed is committed (the caller's
 * all_passed check: a failing run never advances anything). Only the counts the gate's rule
 * let move (kg_ct_verdict.mark_moves: no mark yet, or beaten by the regression margin) are
 * candidates. A counter is exact, so the
 * candidate's interval is the count itself (band 0, one sample). */
#include <math.h>
#include <string.h>
#include "core/report_keys.h"
#include "counters/counters.h"
#include "production/production_counters.h"

typedef struct {
    kg_advance_input *in;
    const kg_run *run;
    const char *set_by;
    char drv[16], rt[16];
} pc_ctx;

/* One count of one case; a count of 0 (no spills) or an unavailable one is no mark, which the
 * decision reads as 0 / none (as `kgate counters --save-marks` stores them). */
static int pc_put(pc_ctx *x, const char *case_id, const char *metric, double v,
                  kg_direction dir)
{
    if (!isfinite(v) || !(v > 0))
        return 0;
    kg_advance_obs o = { .case_id = case_id, .decision = KG_RV_DEC_IMPROVED, .metric = metric,
                         .direction = dir, .median = v, .ci_lo = v, .ci_hi = v, .band = 0,
                         .samples = 1, .commit = kg_report_commit(x->run->rep),
                         .date = kg_report_started_at(x->run->rep), .driver = x->drv,
                         .cuda = x->rt, .set_by = x->set_by, .exact = true };
    return kg_advance_add(x->in, &o, "this run (counters)");
}

static int pc_row(pc_ctx *x, const kg_run_row *row)
{
    int rc = 0;
    const kg_counters_row *b = row->res.data;
    const char *id = row->desc->id;
    if (row->res.verdict != KG_VERDICT_PASS || !b ||
        (b->v.decision != KG_CT_OK && b->v.decision != KG_CT_NO_MARK))
        return 0;
    for (size_t i = 0; i < KG_CT_N_MARKS; i++)
        if (b->v.mark_moves & kg_ct_mark_defs[i].bit)
            KG_TRY(pc_put(x, id, kg_ct_mark_defs[i].metric, kg_ct_mark_value(&b->c, i),
                          kg_ct_mark_defs[i].direction));
cleanup:
    return rc;
}

int kg_advance_counters_from_run(kg_advance_input *in, const kg_run *run, const char *set_by)
{
    int rc = 0;
    pc_ctx x = { .in = in, .run = run, .set_by = set_by };
    if (!in->device_class || !in->all_passed)
        return 0; /* nothing to ratchet: no device, or the run is not committed anyway */
    kg_device_version_str(x.drv, sizeof x.drv, run->dev.driver_version);
    kg_device_version_str(x.rt, sizeof x.rt, run->dev.runtime_version);
    for (size_t i = 0; i < run->n_rows; i++)
        if (run->rows[i].gate == &kg_gate_counters)
            KG_TRY(pc_row(&x, &run->rows[i]));
cleanup:
    return rc;
}
