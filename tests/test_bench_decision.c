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
    /* The same +1% against a single-process mark stays inside the single-run floor (2%):
     * one process cannot tell 1% from the spread between processes; +3% it can. */
    m.runs = 1;
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_SAME && v.floor_rel == 0.02,
              "+1%% single-run: %s", v.why);
    fill(b, N, 545.0 * 1.03, 0.001, 106);
    CHECK_MSG(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED, "+3%%: %s", v.why);
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
    /* Compute-bound: the 15% floor absorbs the cross-process GEMM modes (+10%) but not +20%. */
    fill(a, N, 1240.0, 0.002, 300);
    kg_mark m = mark_from(a, N);
    fill(b, N, 1240.0 * 1.10, 0.002, 301);
    CHECK(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_SAME && v.floor_rel == 0.15);
    CHECK(decide(&m, b, N, false, NULL, 0, &v) == KG_BENCH_REGRESSED);
    fill(b, N, 1240.0 * 1.20, 0.002, 302);
    CHECK(decide(&m, b, N, true, NULL, 0, &v) == KG_BENCH_REGRESSED);
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
    CHECK(kg_bench_decide(&v, &m, &obs, NULL, 0, NULL) == 0 && v.decision == KG_BENCH_SAME);
    j = kg_bench_verdict_json(&v, &m);
    CHECK(j && cJSON_GetObjectItem(j, "tolerance_rel") && cJSON_GetObjectItem(j, "mark"));
    cJSON_Delete(j);
}

int main(void)
{
    test_identical_is_same();
    test_shifts();
    test_wide_noise();
    test_floors_and_direction();
    test_merged_marks();
    test_edges();
    return kg_test_done("test_bench_decision");
}
