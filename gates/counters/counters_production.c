/* The counters gate's part of run --production (kg_gate_production, gate.h): a passing row's
 * counts become candidate counter marks for kg_advance_apply, the ratchet every bench mark
 * goes through: a mark only improves (lower DRAM bytes / instructions / spills / sysmem,
 * higher occupancy / tensor instructions), and only a run in which everything passed offers
 * them (after_pass: a failing run never advances anything). Only the counts the gate's rule
 * let move (kg_ct_verdict.mark_moves: no mark yet, or beaten by the regression margin) are
 * candidates. A counter is exact, so the candidate's interval is the count itself (band 0,
 * one sample). */
#include <math.h>
#include <string.h>
#include "core/report_keys.h"
#include "counters/counters.h"

/* One counter mark's candidate: the count itself is its interval (see above). */
static void cp_exact(kg_advance_obs *o, const kg_advance_obs *stamp, const char *case_id,
                     const kg_ct_mark_def *md, double x)
{
    *o = *stamp;
    o->case_id = case_id;
    o->decision = KG_RV_DEC_IMPROVED;
    o->metric = md->metric;
    o->direction = md->direction;
    o->median = o->ci_lo = o->ci_hi = x;
    o->band = 0;
    o->samples = 1;
    o->exact = true;
}

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
        cp_exact(&out[n++], stamp, d->id, &kg_ct_mark_defs[i], v);
    }
    return n;
}

/* The JSON path (report_candidates): a recorded production report's counters rows become
 * the candidate marks `run --production` proposed. The figures' mark_moves names the metrics
 * the gate's rule let set or move; each is read from its figure (kg_ct_mark_defs), a count is
 * exact (band 0, one sample), and kg_advance_apply ratchets it like any mark. A report without
 * mark_moves (before it was recorded) proposes none. */
/* The index in kg_ct_mark_defs of the metric named by `it`, refusing unknown names and any
 * given twice (seen: the indices so far). */
static int ac_metric(size_t *idx, const cJSON *it, unsigned *seen, const char *name, const char *cs)
{
    const char *m = cJSON_GetStringValue(it);
    int i = kg_ct_mark_index(m);
    if (i >= 0) {
        if (*seen & (1u << i))
            return KG_ERR(KG_EPARSE,
                          "%s: counters result for '%.200s': figures.%s names '%s' "
                          "twice",
                          name, cs, KG_FIG_CT_MARK_MOVES, m);
        *seen |= 1u << i;
        *idx = (size_t)i;
        return 0;
    }
    return KG_ERR(KG_EPARSE,
                  "%s: counters result for '%.200s': figures.%s: '%.80s' is not a "
                  "counter mark (dram_bytes_per_launch, inst_per_launch, ...)",
                  name, cs, KG_FIG_CT_MARK_MOVES, m ? m : "(not a string)");
}

static int cp_report_candidates(kg_advance_obs *out, size_t max, const cJSON *res, kg_verdict v,
                                const kg_advance_obs *stamp, const char *name,
                                bool (*claimed)(const char *metric))
{
    const char *cs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, KG_RES_CASE));
    const cJSON *fig = cJSON_GetObjectItemCaseSensitive(res, KG_RES_FIGURES);
    const char *dec = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_CT_DECISION));
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_CT_MARK_MOVES), *it;
    unsigned seen = 0;
    int n = 0;
    (void)claimed;
    /* as production: only a PASS itself (not an XFAIL) the rule decided (OK or NO_MARK)
     * proposes marks */
    if (v != KG_VERDICT_PASS || !dec ||
        (strcmp(dec, KG_RV_CT_OK) != 0 && strcmp(dec, KG_RV_CT_NO_MARK) != 0) || !moves)
        return 0;
    if (!cJSON_IsArray(moves))
        return KG_ERR(KG_EPARSE,
                      "%s: counters result for '%.200s': figures.%s must be an array "
                      "of counter mark names",
                      name, cs, KG_FIG_CT_MARK_MOVES);
    cJSON_ArrayForEach(it, moves) {
        size_t i = 0;
        int rc = ac_metric(&i, it, &seen, name, cs);
        if (rc < 0)
            return rc;
        const kg_ct_mark_def *md = &kg_ct_mark_defs[i];
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(fig, md->figure);
        /* a count is an integer-sized number, occupancy a percentage: an absurd value would
         * set a mark no run can meet */
        double hi = md->bit == KG_CT_MV_OCC ? 100.0 : 9007199254740992.0;
        if (!cJSON_IsNumber(val) || !isfinite(val->valuedouble) || !(val->valuedouble > 0) ||
            val->valuedouble > hi)
            return KG_ERR(KG_EPARSE,
                          "%s: counters result for '%.200s': figures.%s must be a "
                          "finite count in (0, %.6g] (it is in %s)",
                          name, cs, md->figure, hi, KG_FIG_CT_MARK_MOVES);
        if ((size_t)n >= max) /* each mark at most once: never more than KG_CT_N_MARKS */
            return KG_ERR(KG_EPARSE,
                          "%s: counters result for '%.200s': figures.%s names more "
                          "than %zu marks",
                          name, cs, KG_FIG_CT_MARK_MOVES, max);
        cp_exact(&out[n++], stamp, cs, md, val->valuedouble);
    }
    return n;
}

static bool cp_claims_metric(const char *metric) { return kg_ct_mark_index(metric) >= 0; }

const struct kg_gate_production kg_counters_production = {
    .candidates = cp_candidates,
    .source = "this run (counters)",
    .after_pass = true,
    .report_candidates = cp_report_candidates,
    .claims_metric = cp_claims_metric,
};
