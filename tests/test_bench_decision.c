/* The bench decision rule on synthetic samples: identical noise is SAME (no false alarms over
 * many seeds), +5% is REGRESSED, -5% IMPROVED, wide noise SAME, the floors and the direction. */
#include <math.h>
#include <string.h>
#include "bench/bench.h"
#include "marks/marks.h"
#include "core/kg_core.h"
#include "kg_test.h"

#define N 40

/* Skewed timing-like noise: a floor plus a positive tail (sum of uniforms, squared tail). */
static void fill(double *x, size_t n, double centre, double noise, uint64_t seed)
{
    kg_rng g;
    kg_rng_seed(&g, seed, 11);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < 4; k++)
            s += (double)(kg_rng_next(&g) >> 11) * 0x1p-53 - 0.5;
        double tail = (double)(kg_rng_next(&g) >> 11) * 0x1p-53;
        x[i] = centre * (1 + noise * s + noise * tail * tail * tail);
    }
}

/* The mark a single run of these samples would set (as the production pipeline does:
 * value = ci_hi, band = the run's CI half-width). */
static kg_mark mark_from(const double *x, size_t n)
{
    kg_summary s;
    kg_mark m;
    memset(&m, 0, sizeof m);
    (void)kg_stats_summarize(&s, x, n, 0.95);
    m.device_class = "GPU/sm_90";
    m.case_id = "c";
    m.metric = "time_us_warm";
    m.direction = KG_LOWER_IS_BETTER;
    m.value = s.ci_hi;
    m.run_median = s.median;
    m.ci_lo = s.ci_lo;
    m.ci_hi = s.ci_hi;
    m.band_rel = (s.ci_hi - s.ci_lo) / (2 * s.median);
    m.samples = (int)n;
    m.runs = 3; /* merged from 3 processes: decides (--min-mark-runs 3) */
    return m;
}

static kg_bench_decision decide(const kg_mark *mk, const double *x, size_t n, bool compute,
                                const double *ms, size_t nm, kg_bench_verdict *v)
{
    kg_summary s;
    kg_decide_opts o = KG_DECIDE_OPTS_INIT;
    CHECK(kg_stats_summarize(&s, x, n, 0.95) == 0);
    kg_bench_obs obs = { s.median, s.ci_lo, s.ci_hi, x, n, compute };
    CHECK(kg_bench_decide(v, mk, &obs, ms, nm, &o) == 0);
    return v->decision;
}

static void test_identical_is_same(void)
{
    double a[N], b[N];
    kg_bench_verdict v;
    int alarms = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        fill(a, N, 500.0, 0.004, seed * 2);
        fill(b, N, 500.0, 0.004, seed * 2 + 1);
        kg_mark m = mark_from(a, N);
        if (decide(&m, b, N, false, NULL, 0, &v) != KG_BENCH_SAME)
            alarms++;
        if (decide(&m, b, N, false, a, N, &v) != KG_BENCH_SAME)
            alarms++;
    }
    CHECK_MSG(alarms == 0, "identical noise: %d false alarms in 400 decisions", alarms);
}

static void test_shifts(void)
{
    double a[N], b[N];
    kg_bench_verdict v;
    fill(a, N, 500.0, 0.004, 100);
    kg_mark m = mark_from(a, N);
    fill(b, N, 500.0 * 1.05, 0.004, 101);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED);
    CHECK(v.significant && v.delta_rel > 0.04 && strstr(v.why, "REGRESSED"));
    CHECK(decide(&m, b, N, false, a, N, &v) == KG_BENCH_REGRESSED);
    CHECK(strcmp(v.test, "mann-whitney-u") == 0 && v.p_value < 1e-6);
    fill(b, N, 500.0 * 0.95, 0.004, 102);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_IMPROVED);
    CHECK(decide(&m, b, N, false, a, N, &v) == KG_BENCH_IMPROVED);
    /* Sensitivity at the floor: a quiet large memory-bound case regressing by 1%, against a
     * mark merged from several processes (its band carries the cross-process spread). */
    fill(a, N, 545.0, 0.001, 103);
    m = mark_from(a, N);
    m.runs = 3;
    fill(b, N, 545.0 * 1.01, 0.001, 104);
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED, "+1%%: %s", v.why);
    /* The same +1% against a single-process mark: no decision at all (UNPROVEN), whatever the
     * shift: one process has never seen the spread between processes. Not a failure. */
    m.runs = 1;
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_UNPROVEN && v.floor_rel == 0.005,
              "+1%% single-run: %s", v.why);
    CHECK_MSG(strstr(v.why, "mark from 1 process(es), needs 3"), "%s", v.why);
    CHECK(!kg_bench_decision_fails(v.decision));
    fill(b, N, 545.0 * 1.30, 0.001, 106);
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_UNPROVEN, "+30%%: %s", v.why);
    m.runs = 3;
    /* Significant but under the floor (0.5%): SAME. */
    fill(b, N, 545.0 * 1.003, 0.0002, 105);
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_SAME, "+0.3%%: %s", v.why);
}

static void test_wide_noise(void)
{
    double a[20], b[20];
    kg_bench_verdict v;
    fill(a, 20, 100.0, 0.2, 200);
    kg_mark m = mark_from(a, 20);
    fill(b, 20, 103.0, 0.2, 201);
    CHECK_MSG(decide(&m, b, 20, false, NULL, 0, &v) == KG_BENCH_SAME, "wide: %s", v.why);
    CHECK(v.tolerance_rel > 0.03);
    CHECK(decide(&m, b, 20, false, a, 20, &v) == KG_BENCH_SAME);
}

static void test_floors_and_direction(void)
{
    double a[N], b[N];
    kg_bench_verdict v;
    /* Compute-bound: one rule for every case, no fixed floor: +2% of a ~1 ms FMA chain against
     * a quiet 3-process mark is caught exactly like a memory-bound case. */
    fill(a, N, 1240.0, 0.002, 300);
    kg_mark m = mark_from(a, N);
    fill(b, N, 1240.0 * 1.02, 0.002, 301);
    CHECK_MSG(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_REGRESSED && v.floor_rel == 0.005,
              "compute +2%%: %s", v.why);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED);
    fill(b, N, 1240.0 * 1.002, 0.002, 302);
    CHECK(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_SAME);
    /* Absolute floor: 0.4 us on a 1 us kernel is 40%. */
    fill(a, N, 1.0, 0.002, 303);
    m = mark_from(a, N);
    fill(b, N, 1.06, 0.002, 304);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_SAME && v.floor_rel > 0.39);
    fill(b, N, 1.60, 0.002, 305);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED);
    /* Higher is better: a throughput 5% lower is worse. */
    fill(a, N, 3000.0, 0.002, 306);
    m = mark_from(a, N);
    m.direction = KG_HIGHER_IS_BETTER;
    m.metric = "gbps";
    m.value = m.ci_lo;
    fill(b, N, 3000.0 * 0.95, 0.002, 307);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED && v.delta_rel > 0);
    fill(b, N, 3000.0 * 1.05, 0.002, 308);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_IMPROVED);
}

static void test_merged_marks(void)
{
    /* Bimodal across processes (the H200 GEMM): marks merged from 3 processes cover both modes,
     * so a fourth process in either mode is SAME, and a clear regression is still caught. */
    kg_marks *ms = NULL;
    double x[N];
    kg_bench_verdict v;
    CHECK(kg_marks_new(&ms) == 0);
    const double modes[] = { 1415.0, 1240.0, 1415.0 };
    for (int i = 0; i < 3; i++) {
        fill(x, N, modes[i], 0.002, 400 + i);
        kg_mark r = mark_from(x, N);
        r.value = r.run_median;
        CHECK(kg_marks_merge(ms, &r) == 0);
    }
    const kg_mark *m = kg_marks_at(ms, 0);
    fill(x, N, 1240.0, 0.002, 410);
    CHECK_MSG(decide(m, x, N, false, NULL, 0, &v) == KG_BENCH_SAME, "fast mode: %s", v.why);
    fill(x, N, 1415.0, 0.002, 411);
    CHECK_MSG(decide(m, x, N, false, NULL, 0, &v) == KG_BENCH_SAME, "slow mode: %s", v.why);
    fill(x, N, 1415.0 * 1.4, 0.002, 412);
    CHECK(decide(m, x, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED);
    kg_marks_free(ms);
}

static void test_edges(void)
{
    kg_bench_verdict v;
    kg_bench_obs obs = { 10, 9, 11, NULL, 0, false };
    CHECK(kg_bench_decide(&v, NULL, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_NO_MARK);
    cJSON *j = kg_bench_verdict_json(&v, NULL);
    CHECK(j && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "decision")), "NO_MARK") == 0);
    cJSON_Delete(j);
    kg_bench_obs bad = { 10, 11, 12, NULL, 0, false };
    CHECK(kg_bench_decide(&v, NULL, &bad, NULL, 0, NULL) == KG_EINVAL);
    kg_mark m;
    memset(&m, 0, sizeof m);
    m.value = -1;
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == KG_EINVAL);
    m.value = 10;
    m.ci_lo = 9.9;
    m.ci_hi = 10.1;
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_UNPROVEN);
    m.runs = 3;
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_SAME);
    j = kg_bench_verdict_json(&v, &m);
    CHECK(j && cJSON_GetObjectItem(j, "tolerance_rel") && cJSON_GetObjectItem(j, "mark"));
    cJSON_Delete(j);
}

/* The issue's figures: a mark merged from 3 processes with a 0.3% spread, +2%. */
static kg_mark mark3(double value, double spread, int runs)
{
    kg_mark m;
    memset(&m, 0, sizeof m);
    m.device_class = "GPU/sm_90";
    m.case_id = "c";
    m.metric = "time_us_warm";
    m.direction = KG_LOWER_IS_BETTER;
    m.value = value;
    m.run_median = value;
    m.ci_lo = value * (1 - spread / 2);
    m.ci_hi = value * (1 + spread / 2);
    m.band_rel = spread;
    m.samples = 200;
    m.runs = runs;
    m.env_lo = value * (1 - spread / 4);
    m.env_hi = value * (1 + spread / 4);
    return m;
}

static void test_issue14_rule(void)
{
    double b[N];
    kg_bench_verdict v;
    kg_bench_obs obs;
    kg_summary s;
    kg_decide_opts o = KG_DECIDE_OPTS_INIT;
    CHECK(o.min_mark_runs == 3);
    kg_mark m = mark3(1000.0, 0.003, 3);
    fill(b, N, 1000.0 * 1.02, 0.001, 500);
    CHECK_MSG(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_REGRESSED, "+2%%: %s", v.why);
    CHECK(v.tolerance_rel < 0.01 && v.mark_noise_rel == 0.003);
    m.runs = 1;
    CHECK_MSG(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_UNPROVEN, "1 proc: %s", v.why);
    CHECK_MSG(strstr(v.why, "UNPROVEN: mark from 1 process(es), needs 3"), "%s", v.why);
    o.min_mark_runs = 1; /* --min-mark-runs 1 accepts it */
    CHECK(kg_stats_summarize(&s, b, N, 0.95) == 0);
    obs = (kg_bench_obs){ s.median, s.ci_lo, s.ci_hi, NULL, 0, true, 8, "full-clock" };
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, &o) == 0 && v.decision == KG_BENCH_REGRESSED);
    CHECK(v.run_k == 8 && strcmp(v.run_power_state, "full-clock") == 0);
    /* Power states: both known and different -> STATE_DIFFERS naming both; unknown on either
     * side decides. */
    m.runs = 3;
    m.power_state = "power-capped";
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 &&
          v.decision == KG_BENCH_STATE_DIFFERS);
    CHECK_MSG(strstr(v.why, "power-capped") && strstr(v.why, "full-clock"), "%s", v.why);
    CHECK(!kg_bench_decision_fails(v.decision) && v.delta_rel > 0.015); /* figures kept */
    cJSON *j = kg_bench_verdict_json(&v, &m);
    CHECK(j &&
          strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "decision")), "STATE_DIFFERS") == 0);
    CHECK(j && strcmp(cJSON_GetStringValue(
                          cJSON_GetObjectItem(cJSON_GetObjectItem(j, "mark"), "power_state")),
                      "power-capped") == 0);
    cJSON_Delete(j);
    /* The time basis is part of the state: a clock-normalised run against a power-capped mark
     * of measured times (set before normalisation) decides nothing. */
    obs.power_state = "power-capped" KG_STATE_NORMALISED_SUFFIX;
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 &&
          v.decision == KG_BENCH_STATE_DIFFERS);
    CHECK_MSG(strstr(v.why, "power-capped:replay-clock-normalised"), "%s", v.why);
    /* nor against a mark of the probe-normalised basis an earlier kgate wrote (~10% apart) */
    m.power_state = "power-capped:clock-normalised";
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 &&
          v.decision == KG_BENCH_STATE_DIFFERS);
    m.power_state = "power-capped:replay-clock-normalised";
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_REGRESSED);
    m.power_state = "power-capped";
    obs.power_state = "full-clock";
    obs.power_state = "unknown";
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_REGRESSED);
    m.power_state = "full-clock";
    obs.power_state = "full-clock";
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_REGRESSED);
    /* One process IMPROVED: reported unconfirmed. */
    fill(b, N, 1000.0 * 0.97, 0.001, 501);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_IMPROVED);
    CHECK_MSG(strstr(v.why, "unconfirmed"), "%s", v.why);
}

/* The bound of the processes combine_obs makes: compute-bound unless a test says otherwise
 * (the power state decides only there, kg_bench_state_decides). */
static bool g_combine_compute_bound = true;

/* n processes of one case at the given relative shifts, each decided on its own, combined. */
static kg_bench_decision combine_obs(const kg_mark *m, const double *shift, size_t n,
                                     kg_bench_verdict *v, const char *const *states, const int *ks,
                                     kg_bench_obs *comb_out)
{
    double x[N];
    kg_bench_obs per[8], comb;
    kg_bench_verdict pv[8];
    kg_summary s[8];
    for (size_t i = 0; i < n; i++) {
        fill(x, N, 1000.0 * (1 + shift[i]), 0.001, 600 + i);
        CHECK(kg_stats_summarize(&s[i], x, N, 0.95) == 0);
        per[i] = (kg_bench_obs){ s[i].median,
                                 s[i].ci_lo,
                                 s[i].ci_hi,
                                 NULL,
                                 0,
                                 g_combine_compute_bound,
                                 ks ? ks[i] : 4,
                                 states ? states[i] : "full-clock" };
        CHECK(kg_bench_decide(&pv[i], m, &per[i], NULL, 0, NULL) == 0);
    }
    CHECK(kg_bench_combine(v, &comb, m, per, pv, n, NULL) == 0);
    CHECK(comb.ci_lo <= comb.median && comb.median <= comb.ci_hi);
    if (comb_out)
        *comb_out = comb;
    return v->decision;
}

static kg_bench_decision combine(const kg_mark *m, const double *shift, size_t n,
                                 kg_bench_verdict *v, const char *const *states, const int *ks)
{
    return combine_obs(m, shift, n, v, states, ks, NULL);
}

static void test_combination(void)
{
    kg_bench_verdict v;
    kg_mark m = mark3(1000.0, 0.003, 3);
    /* Every process IMPROVED: confirmed. */
    const double all_fast[] = { -0.03, -0.031, -0.029 };
    CHECK_MSG(combine(&m, all_fast, 3, &v, NULL, NULL) == KG_BENCH_IMPROVED, "%s", v.why);
    CHECK_MSG(strstr(v.why, "confirmed by 3 of 3"), "%s", v.why);
    CHECK(v.processes == 3 && v.env_lo < v.env_hi && v.run_k == 4);
    /* One process disagrees (the lucky-process case of the issue): not IMPROVED. */
    const double one_lucky[] = { -0.03, -0.031, 0.0 };
    CHECK_MSG(combine(&m, one_lucky, 3, &v, NULL, NULL) == KG_BENCH_SAME, "%s", v.why);
    CHECK_MSG(strstr(v.why, "unconfirmed") && strstr(v.why, "2 of 3"), "%s", v.why);
    CHECK(v.proc_decision[2] == KG_BENCH_SAME && v.proc_decision[0] == KG_BENCH_IMPROVED);
    const double lucky_one[] = { 0.0, 0.001, -0.05 };
    CHECK_MSG(combine(&m, lucky_one, 3, &v, NULL, NULL) == KG_BENCH_SAME, "%s", v.why);
    /* REGRESSED when the combination is; the line says which processes agreed. */
    const double slow[] = { 0.03, 0.031, 0.004 };
    CHECK_MSG(combine(&m, slow, 3, &v, NULL, NULL) == KG_BENCH_REGRESSED, "%s", v.why);
    CHECK_MSG(strstr(v.why, "2 of 3, process(es) 1,2"), "%s", v.why);
    /* Identical code in 3 processes: SAME. */
    const double same[] = { 0.0005, -0.0004, 0.0 };
    CHECK_MSG(combine(&m, same, 3, &v, NULL, NULL) == KG_BENCH_SAME, "%s", v.why);
    /* Processes of different power states or k are no one measurement. */
    const char *const states[] = { "full-clock", "power-capped", "full-clock" };
    CHECK(combine(&m, all_fast, 3, &v, states, NULL) == KG_BENCH_STATE_DIFFERS);
    CHECK_MSG(strstr(v.why, "power-capped"), "%s", v.why);
    /* memory-bound processes of different states are one measurement of time (issue #25) */
    g_combine_compute_bound = false;
    CHECK_MSG(combine(&m, all_fast, 3, &v, states, NULL) == KG_BENCH_IMPROVED, "%s", v.why);
    g_combine_compute_bound = true;
    /* Neighbouring powers of two (separate calibrations) are one measurement; the mark pins the
     * larger. More than a factor 2 apart is not. */
    const int ks[] = { 4, 8, 4 };
    kg_bench_obs comb_k;
    CHECK_MSG(combine_obs(&m, all_fast, 3, &v, NULL, ks, &comb_k) == KG_BENCH_IMPROVED, "%s",
              v.why);
    CHECK(comb_k.k == 8);
    const int ks_far[] = { 4, 16, 4 };
    CHECK(combine(&m, all_fast, 3, &v, NULL, ks_far) == KG_BENCH_UNPROVEN);
    CHECK_MSG(strstr(v.why, "more than a factor 2"), "%s", v.why);
    /* Against a mark of one process, the combination does not decide either. */
    m.runs = 1;
    CHECK(combine(&m, all_fast, 3, &v, NULL, NULL) == KG_BENCH_UNPROVEN);
    /* Without a mark: NO_MARK with the envelope (a candidate of 3 processes). */
    CHECK(combine(NULL, same, 3, &v, NULL, NULL) == KG_BENCH_NO_MARK && v.processes == 3);
    cJSON *j = kg_bench_verdict_json(&v, NULL);
    CHECK(j && cJSON_GetObjectItem(j, "processes")->valuedouble == 3 &&
          cJSON_GetArraySize(cJSON_GetObjectItem(j, "process_medians_us")) == 3 &&
          cJSON_GetObjectItem(j, "env_lo_us") && !cJSON_GetObjectItem(j, "why"));
    cJSON_Delete(j);
    /* One process: its own verdict, unconfirmed. */
    m.runs = 3;
    CHECK(combine(&m, all_fast, 1, &v, NULL, NULL) == KG_BENCH_IMPROVED && v.processes == 1);
    CHECK(strstr(v.why, "unconfirmed"));
    kg_bench_obs comb;
    CHECK(kg_bench_combine(&v, &comb, &m, NULL, NULL, 0, NULL) == KG_EINVAL);
}

int main(void)
{
    test_identical_is_same();
    test_shifts();
    test_wide_noise();
    test_floors_and_direction();
    test_merged_marks();
    test_edges();
    test_issue14_rule();
    test_combination();
    return kg_test_done("test_bench_decision");
}
