/* The bench decision rule (see bench.h and docs/production-ci.md "Bench decision"). Pure: the
 * production pipeline reuses it and CPU tests drive it with synthetic samples. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"

const char *kg_bench_decision_name(kg_bench_decision d)
{
    switch (d) {
    case KG_BENCH_NO_MARK: return "NO_MARK";
    case KG_BENCH_SAME: return "SAME";
    case KG_BENCH_IMPROVED: return "IMPROVED";
    case KG_BENCH_REGRESSED: return "REGRESSED";
    }
    return "?";
}

/* Orient a run value against the mark so that > 0 is worse. */
static double worse_rel(kg_direction dir, double run, double mark)
{
    return dir == KG_LOWER_IS_BETTER ? run / mark - 1.0 : mark / run - 1.0;
}

int kg_bench_decide(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                    const double *mark_samples, size_t n_mark_samples, const kg_decide_opts *o)
{
    kg_decide_opts d0 = KG_DECIDE_OPTS_INIT;
    memset(out, 0, sizeof *out);
    out->p_value = NAN;
    out->test = "none";
    if (!o)
        o = &d0;
    if (!run || !(run->median > 0) || !(run->ci_lo > 0) || !(run->ci_lo <= run->median) ||
        !(run->median <= run->ci_hi) || !isfinite(run->ci_hi))
        return KG_ERR(KG_EINVAL, "bench decision: need 0 < ci_lo <= median <= ci_hi (finite)");
    out->run_noise_rel = (run->ci_hi - run->ci_lo) / (2.0 * run->median);
    if (!mark) {
        out->decision = KG_BENCH_NO_MARK;
        snprintf(out->why, sizeof out->why, "no mark for this device class, case and metric");
        return 0;
    }
    if (!(mark->value > 0) || !isfinite(mark->value) || !(mark->band_rel >= 0))
        return KG_ERR(KG_EINVAL, "bench decision: mark value must be > 0 and band_rel >= 0");
    kg_direction dir = mark->direction;
    out->delta_rel = worse_rel(dir, run->median, mark->value);
    double a = worse_rel(dir, run->ci_lo, mark->value), b = worse_rel(dir, run->ci_hi, mark->value);
    out->ci_delta_lo = fmin(a, b);
    out->ci_delta_hi = fmax(a, b);
    out->mark_noise_rel = mark->band_rel;
    out->floor_rel = fmax(o->band_floor, o->abs_floor_us > 0 ? o->abs_floor_us / mark->value : 0);
    if (run->compute_bound)
        out->floor_rel = fmax(out->floor_rel, o->compute_floor);
    /* A mark from one process has never seen the spread between processes: until it has been
     * merged from several (kg_marks_merge), a wider floor stands in for it. */
    if (mark->runs <= 1)
        out->floor_rel = fmax(out->floor_rel, o->single_run_floor);
    out->tolerance_rel = fmax(out->floor_rel, out->mark_noise_rel + out->run_noise_rel);

    bool worse = out->delta_rel > 0;
    if (mark_samples && n_mark_samples > 0 && run->samples && run->n_samples > 0) {
        kg_mwu_result u;
        int rc = kg_stats_mann_whitney(&u, run->samples, run->n_samples, mark_samples,
                                       n_mark_samples);
        if (rc < 0)
            return rc;
        /* For times "worse" is "run tends to be greater". */
        bool run_greater_is_worse = dir == KG_LOWER_IS_BETTER;
        out->p_value = (worse == run_greater_is_worse) ? u.p_greater : u.p_less;
        out->significant = out->p_value < o->alpha;
        out->test = "mann-whitney-u";
    } else {
        /* The mark's interval [ci_lo, ci_hi] against the run's: disjoint in the delta's
         * direction. Two disjoint 95% intervals mean p < ~0.01. */
        double mlo = fmin(mark->ci_lo, mark->value), mhi = fmax(mark->ci_hi, mark->value);
        if (dir == KG_LOWER_IS_BETTER)
            out->significant = worse ? run->ci_lo > mhi : run->ci_hi < mlo;
        else
            out->significant = worse ? run->ci_hi < mlo : run->ci_lo > mhi;
        out->test = "ci-disjoint";
    }

    if (out->delta_rel > out->tolerance_rel && out->significant)
        out->decision = KG_BENCH_REGRESSED;
    else if (out->delta_rel < -out->tolerance_rel && out->significant)
        out->decision = KG_BENCH_IMPROVED;
    else
        out->decision = KG_BENCH_SAME;
    snprintf(out->why, sizeof out->why,
             "%s: %+.2f%% vs mark %.6g (CI %+.2f%%..%+.2f%%), tolerance %.2f%% = max(floor "
             "%.2f%%, mark band %.2f%% + run noise %.2f%%), %s %s",
             kg_bench_decision_name(out->decision), 100 * out->delta_rel, mark->value,
             100 * out->ci_delta_lo, 100 * out->ci_delta_hi, 100 * out->tolerance_rel,
             100 * out->floor_rel, 100 * out->mark_noise_rel, 100 * out->run_noise_rel,
             out->test, out->significant ? "significant" : "not significant");
    return 0;
}

cJSON *kg_bench_verdict_json(const kg_bench_verdict *v, const kg_mark *mark)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, KG_FIG_DECISION, kg_bench_decision_name(v->decision));
    cJSON_AddNumberToObject(o, KG_FIG_RUN_NOISE, v->run_noise_rel);
    if (!mark)
        return o;
    cJSON_AddNumberToObject(o, KG_FIG_DELTA, v->delta_rel);
    cJSON_AddNumberToObject(o, KG_FIG_CI_DELTA_LO, v->ci_delta_lo);
    cJSON_AddNumberToObject(o, KG_FIG_CI_DELTA_HI, v->ci_delta_hi);
    cJSON_AddNumberToObject(o, KG_FIG_TOLERANCE, v->tolerance_rel);
    cJSON_AddNumberToObject(o, KG_FIG_FLOOR, v->floor_rel);
    cJSON_AddNumberToObject(o, KG_FIG_MARK_NOISE, v->mark_noise_rel);
    cJSON_AddBoolToObject(o, KG_FIG_SIGNIFICANT, v->significant);
    cJSON_AddStringToObject(o, KG_FIG_TEST, v->test);
    if (isfinite(v->p_value))
        cJSON_AddNumberToObject(o, KG_FIG_P_VALUE, v->p_value);
    cJSON *m = cJSON_AddObjectToObject(o, KG_FIG_MARK);
    if (m) {
        cJSON_AddNumberToObject(m, KG_FIG_MARK_VALUE, mark->value);
        cJSON_AddNumberToObject(m, KG_FIG_BAND, mark->band_rel);
        cJSON_AddNumberToObject(m, KG_FIG_MARK_CI_LO, mark->ci_lo);
        cJSON_AddNumberToObject(m, KG_FIG_MARK_CI_HI, mark->ci_hi);
        cJSON_AddNumberToObject(m, KG_FIG_SAMPLES, mark->samples);
        cJSON_AddNumberToObject(m, KG_FIG_HP_RUNS, mark->runs > 0 ? mark->runs : 1);
        cJSON_AddStringToObject(m, KG_FIG_MARK_COMMIT, mark->commit ? mark->commit : "unknown");
        cJSON_AddStringToObject(m, KG_FIG_MARK_DATE, mark->date ? mark->date : "unknown");
        cJSON_AddStringToObject(m, KG_FIG_MARK_RUN_ID, mark->run_id ? mark->run_id : "unknown");
        if (mark->kernels)
            cJSON_AddStringToObject(m, KG_FIG_KERNELS, mark->kernels);
    }
    cJSON_AddStringToObject(o, KG_FIG_WHY, v->why);
    return o;
}
