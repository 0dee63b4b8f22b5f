/* The counters gate's part of run --production (kg_gate_production, gate.h): a passing row's
 * counts become candidate counter marks for kg_advance_apply, the ratchet every bench mark
 * goes through: a mark only improves (lower DRAM bytes / instructions / spills / sysmem,
 * higher occupancy / tensor instructions), and only a run in which everything passed offers
 * them (after_pass: a failing run never advances anything). Only the counts the gate's rule
 * let move (kg_ct_verdict.mark_moves: no mark yet, or beaten by the regression margin) are
 * candidates. A counter is exact, so the candidate's interval is the count itself (band 0,
 * one sample). */
#include <math.h>
#include "core/report_keys.h"
#include "counters/counters.h"

/* A count of 0 (no spills) or an unavailable one is no mark, which the decision reads as
 * 0 / none (as `kgate counters --save-marks` stores them). */
static size_t cp_candidates(kg_advance_obs *out, size_t max, const kg_case_desc *d,
                            const kg_case_result *res, const kg_advance_obs *stamp)
{
    const kg_counters_row *b = res->data;
    size_t n = 0;
    if (res->verdict != KG_VERDICT_PASS || !b ||
        (b->v.decision != KG_CT_OK && b->v.decision != KG_CT_NO_MARK))
        return 0;
    for (size_t i = 0; i < KG_CT_N_MARKS && n < max; i++) {
        double v = kg_ct_mark_value(&b->c, i);
        if (!(b->v.mark_moves & kg_ct_mark_defs[i].bit) || !isfinite(v) || !(v > 0))
            continue;
        out[n] = *stamp;
        out[n].case_id = d->id;
        out[n].decision = KG_RV_DEC_IMPROVED;
        out[n].metric = kg_ct_mark_defs[i].metric;
        out[n].direction = kg_ct_mark_defs[i].direction;
        out[n].median = out[n].ci_lo = out[n].ci_hi = v;
        out[n].band = 0;
        out[n].samples = 1;
        out[n].exact = true;
        n++;
    }
    return n;
}

const struct kg_gate_production kg_counters_production = {
    .candidates = cp_candidates,
    .source = "this run (counters)",
    .after_pass = true,
};
