/* Issue #25, the pure rules: figures above the measured ceilings are an error with the reason,
 * figures at them are not (kg_bench_ceiling_exceeded); a power-state label decides only a
 * compute-bound row (kg_bench_state_decides). */
#include <math.h>
#include <string.h>
#include "bench/bench.h"
#include "kg_test.h"

static kg_ceiling_obs obs(double gbps, double tflops)
{
    kg_ceiling_obs o = { .gbps = gbps,
                         .tflops = tflops,
                         .ci_rel = 0.002,
                         .dram = true,
                         .copy_gbps = 4200,
                         .copy_spread_rel = 0.003,
                         .gemm_tflops = 800,
                         .gemm_spread_rel = 0.004,
                         .gemm_clock_scale = 1.3 };
    return o;
}

static void test_ceilings(void)
{
    char why[480];
    /* the stream-0 GEMM of issue #25: 13874727.9 GB/s */
    kg_ceiling_obs o = obs(13874727.9, NAN);
    CHECK(kg_bench_ceiling_exceeded(why, sizeof why, &o));
    CHECK_MSG(strstr(why, "above the measured copy ceiling 4200 GB/s") != NULL, "why: %s", why);
    CHECK(strstr(why, "another stream") != NULL);
    /* at the ceiling, and at the limit itself: fine */
    o = obs(4200, NAN);
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
    CHECK(why[0] == '\0');
    double lim = 4200 * (1 + 0.002 + 0.003 + KG_CEIL_HEADROOM);
    o = obs(lim * 0.9999, NAN);
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
    o = obs(lim * 1.0001, NAN);
    CHECK(kg_bench_ceiling_exceeded(why, sizeof why, &o));
    /* the H200's DRAM kernels beat the memcpy ceiling by 1.6%: fine */
    o = obs(4270, NAN);
    o.copy_gbps = 4202.7;
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
    /* an L2-resident working set is not bounded by the copy ceiling */
    o = obs(4694 * 3, NAN);
    o.dram = false;
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
    /* no ceiling measured: nothing to say */
    o = obs(1e9, 1e9);
    o.copy_gbps = o.gemm_tflops = 0;
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
}

static void test_gemm(void)
{
    char why[480];
    /* a full-clock GEMM above the capped ceiling but inside its clock scale: fine */
    kg_ceiling_obs o = obs(NAN, 800 * 1.25);
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
    double lim = 800 * 1.3 * (1 + 0.002 + 0.004 + KG_CEIL_HEADROOM);
    o = obs(NAN, lim * 1.001);
    CHECK(kg_bench_ceiling_exceeded(why, sizeof why, &o));
    CHECK_MSG(strstr(why, "bf16 GEMM ceiling 800 TFLOP/s") != NULL, "why: %s", why);
    CHECK(strstr(why, "clock") != NULL);
    /* without a clock scale the ceiling itself is the bound */
    o = obs(NAN, 800 * 1.2);
    o.gemm_clock_scale = NAN;
    CHECK(kg_bench_ceiling_exceeded(why, sizeof why, &o));
    o = obs(NAN, 800);
    o.gemm_clock_scale = 0.5; /* below 1: no scale, never a lower bound */
    CHECK(!kg_bench_ceiling_exceeded(why, sizeof why, &o));
}

static kg_mark mark_fc(void)
{
    kg_mark m;
    memset(&m, 0, sizeof m);
    m.device_class = "GPU/sm_90";
    m.case_id = "softmax/rows=32768,cols=4096/bf16";
    m.metric = "time_us_warm";
    m.direction = KG_LOWER_IS_BETTER;
    m.value = 131.0;
    m.run_median = 130.8;
    m.ci_lo = 130.6;
    m.ci_hi = 131.0;
    m.band_rel = 0.003;
    m.runs = 3;
    m.k = 8;
    m.power_state = "full-clock";
    return m;
}

static kg_bench_decision decide_at(double rel, bool compute_bound, kg_bench_verdict *v)
{
    kg_mark m = mark_fc();
    double med = 131.0 * (1 + rel);
    kg_bench_obs o = { med, med * 0.999, med * 1.001, NULL, 0, compute_bound, 8, "power-capped" };
    CHECK(kg_bench_decide(v, &m, &o, NULL, 0, NULL) == 0);
    return v->decision;
}

/* Mark full-clock, run power-capped: a memory-bound row is decided on its time, a compute-bound
 * one is STATE_DIFFERS (the figures kept either way). */
static void test_state_label(void)
{
    kg_bench_verdict v;
    CHECK(!kg_bench_state_decides(false) && kg_bench_state_decides(true));
    CHECK_MSG(decide_at(-0.0006, false, &v) == KG_BENCH_SAME, "%s", v.why);
    CHECK_MSG(strstr(v.why, "decided on time") && strstr(v.why, "full-clock") &&
                  strstr(v.why, "power-capped"),
              "%s", v.why);
    CHECK(strcmp(v.run_power_state, "power-capped") == 0); /* still recorded */
    CHECK_MSG(decide_at(0.05, false, &v) == KG_BENCH_REGRESSED, "%s", v.why);
    CHECK(kg_bench_decision_fails(v.decision));
    CHECK_MSG(decide_at(-0.05, false, &v) == KG_BENCH_IMPROVED, "%s", v.why);
    CHECK(decide_at(-0.0006, true, &v) == KG_BENCH_STATE_DIFFERS);
    CHECK(decide_at(0.05, true, &v) == KG_BENCH_STATE_DIFFERS &&
          !kg_bench_decision_fails(v.decision));
    CHECK(decide_at(-0.05, true, &v) == KG_BENCH_STATE_DIFFERS);
    CHECK_MSG(strstr(v.why, "STATE_DIFFERS: mark measured full-clock, this run power-capped"), "%s",
              v.why);
}

int main(void)
{
    test_state_label();
    test_ceilings();
    test_gemm();
    return kg_test_done("test_bench_sanity");
}
