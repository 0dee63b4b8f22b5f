/* What users pay (issue #25 item 8): a power-capped compute-bound row decided on its replay-
 * clock-normalised time is also gated on its measured time and energy per launch against the
 * mark's. Each branch of the rule (measured, energy, both, within the spreads, not significant,
 * an old mark, another basis, no decision, combined processes), the zeros-vs-random scenario
 * measured on the H200, and the energy summary's bases. */
#include <math.h>
#include <string.h>
#include "bench/bench.h"
#include "core/kg_core.h"
#include "kg_test.h"

#define NORM "power-capped" KG_STATE_NORMALISED_SUFFIX

/* A capped GEMM's mark from 3 processes: normalised 1120 us +-0.3%, measured 1300 us +-0.5%,
 * 700 mJ per launch +-1%. */
static kg_mark pay_mark(bool with_pay)
{
    kg_mark m;
    memset(&m, 0, sizeof m);
    m.device_class = "NVIDIA H200/sm_90";
    m.case_id = "gemm_bf16/m=8192,n=8192,k=8192";
    m.metric = "time_us_warm";
    m.direction = KG_LOWER_IS_BETTER;
    m.value = m.run_median = 1120.0;
    m.ci_lo = 1118.0;
    m.ci_hi = 1122.0;
    m.band_rel = 0.003;
    m.samples = 60;
    m.runs = 3;
    m.k = 4;
    m.power_state = NORM;
    if (with_pay) {
        m.measured_median_us = 1300.0;
        m.measured_spread_rel = 0.005;
        m.energy_per_launch_mj = 700.0;
        m.energy_spread_rel = 0.01;
    }
    return m;
}

/* A run: normalised median `norm` (CI +-0.2%), measured `meas` (+-0.5%), energy `mj` (+-1%). */
static kg_bench_obs pay_obs(double norm, double meas, double mj, const char *state, bool cb)
{
    kg_bench_obs o = { norm,
                       norm * 0.998,
                       norm * 1.002,
                       NULL,
                       0,
                       cb,
                       4,
                       state,
                       .measured_median = meas,
                       .measured_spread_rel = 0.005,
                       .energy_mj = mj,
                       .energy_spread_rel = 0.01 };
    return o;
}

static kg_bench_verdict decide(const kg_mark *m, kg_bench_obs o)
{
    kg_bench_verdict v;
    kg_decide_opts d = KG_DECIDE_OPTS_INIT;
    CHECK(kg_bench_decide(&v, m, &o, NULL, 0, &d) == 0);
    return v;
}

static bool has(const kg_bench_verdict *v, const char *s)
{
    bool ok = strstr(v->why, s) != NULL;
    CHECK_MSG(ok, "why lacks '%s': %s", s, v->why);
    return ok;
}

/* The H200 measurement: cuBLAS 8192^3 on all-zero inputs (the mark) against random inputs (the
 * run): wall time 0.858x the other way round, decided basis 1.003x. Same cycles, more power, a
 * lower capped clock: the normalised rule says SAME, what users pay says REGRESSED. */
static void test_zeros_vs_random(void)
{
    kg_mark m = pay_mark(true);
    kg_bench_verdict v = decide(&m, pay_obs(1120.0 * 1.003, 1300.0 / 0.858, 700.0, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_REGRESSED, "%s: %s",
              kg_bench_decision_name(v.decision), v.why);
    CHECK(fabs(v.delta_rel - 0.003) < 1e-9); /* the decided basis moved 0.3% */
    CHECK(fabs(v.measured_change_rel - (1 / 0.858 - 1)) < 1e-9 && v.measured_significant);
    CHECK(fabs(v.measured_tol_rel - 0.015) < 1e-12); /* mark 0.5% x (3+1)/(3-1) + run 0.5% */
    has(&v, "WARNING what users pay regressed (measured time;");
    has(&v, "SAME: +0.30%");                     /* the rule's own line stays */
    CHECK(!kg_bench_decision_fails(v.decision)); /* reported, not gating (thermal state) */
}

static void test_branches(void)
{
    kg_mark m = pay_mark(true);
    kg_bench_verdict v;
    /* within both spreads: SAME, gated and within */
    v = decide(&m, pay_obs(1120.0, 1300.0 * 1.004, 700.0 * 1.015, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_WITHIN, "%s", v.why);
    has(&v, "measured time +0.40%");
    has(&v, "energy per launch +1.50%");
    /* energy only: the same measured time, 10% more energy */
    v = decide(&m, pay_obs(1120.0, 1300.0, 770.0, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_REGRESSED, "%s", v.why);
    has(&v, "WARNING what users pay regressed (energy per launch;");
    CHECK(fabs(v.energy_tol_rel - 0.03) < 1e-12 && fabs(v.energy_change_rel - 0.1) < 1e-9);
    /* both */
    v = decide(&m, pay_obs(1120.0, 1400.0, 770.0, NORM, true));
    CHECK(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_REGRESSED);
    has(&v, "(measured time and energy per launch;");
    /* the mark's spread widened for one more process: spreads of 1% each, r = 3, band
     * 2 x 1% + 1% = 3%. +2.01%: its interval touches the mark's (not significant), SAME;
     * +2.5%: significant but inside the widened band, still SAME; +3.1%: REGRESSED */
    kg_mark w = m;
    w.measured_spread_rel = 0.01;
    kg_bench_obs o = pay_obs(1120.0, 1300.0 * 1.0201, 700.0, NORM, true);
    o.measured_spread_rel = 0.01; /* 1.0201 x 0.99 = 1.00990 < 1.01: not disjoint */
    v = decide(&w, o);
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_WITHIN && !v.measured_significant,
              "%s", v.why);
    has(&v, "not significant");
    CHECK(fabs(v.measured_tol_rel - 0.03) < 1e-12);
    o.measured_median = 1300.0 * 1.025; /* 1.025 x 0.99 = 1.01475 > 1.01: significant */
    v = decide(&w, o);
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.measured_significant, "%s", v.why);
    o.measured_median = 1300.0 * 1.031;
    v = decide(&w, o);
    CHECK_MSG(v.pay_gate == KG_PAY_REGRESSED && v.measured_significant, "%s", v.why);
    /* the floor: no spreads at all, +0.4% < the 0.5% band floor */
    w = m;
    w.measured_spread_rel = 0;
    o = pay_obs(1120.0, 1300.0 * 1.004, 700.0, NORM, true);
    o.measured_spread_rel = 0;
    v = decide(&w, o);
    CHECK_MSG(v.decision == KG_BENCH_SAME && fabs(v.measured_tol_rel - 0.005) < 1e-12, "%s", v.why);
    /* a run without an energy figure (NOT_SUPPORTED): gated on the measured time alone */
    o = pay_obs(1120.0, 1300.0, 0, NORM, true);
    v = decide(&m, o);
    CHECK(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_WITHIN && isnan(v.energy_tol_rel));
    has(&v, "energy per launch not gated (this run has none)");
}

/* Where the pay gate does not apply: said in the why (or silent off the normalised basis). */
static void test_not_gated(void)
{
    kg_mark old = pay_mark(false), m = pay_mark(true);
    kg_bench_verdict v;
    /* a mark from before issue #25 */
    v = decide(&old, pay_obs(1120.0, 1300.0 / 0.858, 770.0, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_NOT_GATED, "%s", v.why);
    has(&v, "not gated (the mark has no measured time or energy per launch");
    CHECK(isnan(v.measured_change_rel));
    /* a full-clock row (measured basis): decided on its time alone, the change still reported */
    kg_mark f = m;
    f.power_state = "full-clock";
    v = decide(&f, pay_obs(1120.0, 1300.0 / 0.858, 770.0, "full-clock", true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_NOT_GATED, "%s", v.why);
    CHECK(v.measured_change_rel > 0.16 && !strstr(v.why, "what users pay"));
    /* not compute-bound: not gated */
    v = decide(&m, pay_obs(1120.0, 1300.0 / 0.858, 770.0, NORM, false));
    CHECK(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_NOT_GATED);
    /* no decision: an UNPROVEN mark, a mark of another state */
    kg_mark u = m;
    u.runs = 1;
    v = decide(&u, pay_obs(1120.0, 1300.0 / 0.858, 770.0, NORM, true));
    CHECK(v.decision == KG_BENCH_UNPROVEN && v.pay_gate == KG_PAY_NOT_GATED);
    has(&v, "not gated (no decision)");
    kg_mark sd = m;
    sd.power_state = "thermal" KG_STATE_NORMALISED_SUFFIX;
    v = decide(&sd, pay_obs(1120.0, 1300.0 / 0.858, 770.0, NORM, true));
    CHECK(v.decision == KG_BENCH_STATE_DIFFERS && v.pay_gate == KG_PAY_WITHIN); /* below */
    /* no mark: the figures, no gate */
    v = decide(NULL, pay_obs(1120.0, 1300.0, 700.0, NORM, true));
    CHECK(v.decision == KG_BENCH_NO_MARK && v.run_energy == 700.0 && v.run_measured == 1300.0);
    CHECK(kg_bench_state_normalised(NORM) && !kg_bench_state_normalised("power-capped") &&
          !kg_bench_state_normalised(NULL) &&
          !kg_bench_state_normalised(KG_STATE_NORMALISED_SUFFIX));
}

/* Processes as the production step combines them: their obs carry the decided figures only,
 * their verdicts what users pay; the combination gates the median of the processes'. */
static void test_combined(void)
{
    kg_mark m = pay_mark(true);
    kg_decide_opts d = KG_DECIDE_OPTS_INIT;
    kg_bench_obs per[3], comb;
    kg_bench_verdict pv[3], v;
    const double meas[3] = { 1510.0, 1516.0, 1522.0 };
    for (int i = 0; i < 3; i++) {
        kg_bench_obs full = pay_obs(1121.0 + i, meas[i], 700.0, NORM, true);
        CHECK(kg_bench_decide(&pv[i], &m, &full, NULL, 0, &d) == 0);
        per[i] = full;
        per[i].measured_median = per[i].energy_mj = 0; /* as production builds them */
        per[i].measured_spread_rel = per[i].energy_spread_rel = 0;
    }
    CHECK(kg_bench_combine(&v, &comb, &m, per, pv, 3, &d) == 0);
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_REGRESSED, "%s", v.why);
    CHECK(comb.measured_median == 1516.0 && v.run_measured == 1516.0 && v.run_energy == 700.0);
    /* spread: max(median of 0.5%, half the range 6/1516) */
    CHECK(fabs(v.run_measured_spread - 0.005) < 1e-12);
    has(&v, "over 3 processes");
    /* one process without the figure: the combination has none, and is not gated on it */
    pv[1].run_measured = 0;
    CHECK(kg_bench_combine(&v, &comb, &m, per, pv, 3, &d) == 0);
    CHECK(comb.measured_median == 0 && v.decision == KG_BENCH_SAME);
    /* one process (a diagnostic run): its verdict's figures */
    CHECK(kg_bench_combine(&v, &comb, &m, per, pv, 1, &d) == 0);
    CHECK(v.pay_gate == KG_PAY_REGRESSED && comb.measured_median == 1510.0);
    /* the report figures */
    cJSON *j = kg_bench_verdict_json(&v, &m);
    CHECK(j && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "energy_per_launch_mj")) == 700.0);
    CHECK(j && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "pay_gate")), "regressed") == 0);
    CHECK(j && cJSON_GetObjectItem(j, "measured_time_change_rel") &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "mark"),
                                                   "energy_per_launch_mj")) == 700.0);
    cJSON_Delete(j);
}

/* The energy summary: per sample, per placement below 100 mJ, none. */
static void test_energy_summary(void)
{
    double mj[12];
    unsigned char drop[12] = { 0 };
    size_t starts[3] = { 0, 4, 8 };
    kg_energy_summary e;
    for (int i = 0; i < 12; i++)
        mj[i] = 2800.0 + 10.0 * (i % 4); /* k = 4: 700..707.5 mJ per launch */
    CHECK(kg_bench_energy_summarize(&e, mj, drop, 12, starts, 3, 4, 0.95) == 0);
    CHECK_MSG(e.basis == KG_ENERGY_PER_SAMPLE && e.units == 12 &&
                  fabs(e.per_launch_mj - 703.75) < 1e-9 && e.spread_rel > 0 && e.spread_rel < 0.02,
              "basis %d units %zu median %g spread %g", e.basis, e.units, e.per_launch_mj,
              e.spread_rel);
    /* a dropped sample's NaN does not matter; a kept one's does */
    mj[5] = NAN;
    drop[5] = 1;
    CHECK(kg_bench_energy_summarize(&e, mj, drop, 12, starts, 3, 4, 0.95) == 0 &&
          e.basis == KG_ENERGY_PER_SAMPLE && e.units == 11);
    drop[5] = 0;
    CHECK(kg_bench_energy_summarize(&e, mj, drop, 12, starts, 3, 4, 0.95) == 0 &&
          e.basis == KG_ENERGY_NONE && e.per_launch_mj == 0);
    /* a coarse counter: most samples read 0, some one tick of 500 mJ -> per placement */
    for (int i = 0; i < 12; i++)
        mj[i] = (i % 2) ? 500.0 : 0.0;
    CHECK(kg_bench_energy_summarize(&e, mj, drop, 12, starts, 3, 4, 0.95) == 0);
    CHECK_MSG(e.basis == KG_ENERGY_PER_PLACEMENT && e.units == 3 &&
                  fabs(e.per_launch_mj - 62.5) < 1e-9 &&       /* 1000 mJ / (4 samples x 4) */
                  fabs(e.spread_rel - 2.0 / sqrt(6.0)) < 1e-9, /* 3000 / 500 = 6 ticks */
              "basis %d units %zu median %g spread %g", e.basis, e.units, e.per_launch_mj,
              e.spread_rel);
    /* nothing reached 100 mJ: none, and the note says why */
    for (int i = 0; i < 12; i++)
        mj[i] = 5.0;
    CHECK(kg_bench_energy_summarize(&e, mj, drop, 12, starts, 3, 4, 0.95) == 0 &&
          e.basis == KG_ENERGY_NONE);
    char note[200];
    kg_bench_energy_note(note, sizeof note, 0, &e);
    CHECK_MSG(strstr(note, "less than 100 mJ"), "%s", note);
    kg_bench_energy_note(note, sizeof note, KG_NVML_NOT_SUPPORTED, &e);
    CHECK_MSG(strstr(note, "NVML_ERROR_NOT_SUPPORTED"), "%s", note);
    kg_bench_energy_note(note, sizeof note, KG_NVML_NO_LIBRARY, &e);
    CHECK_MSG(strstr(note, "no NVML"), "%s", note);
    kg_bench_energy_note(note, sizeof note, 999, &e);
    CHECK_MSG(strstr(note, "nvmlReturn_t 999"), "%s", note);
    /* without NVML at all: KG_NVML_NO_LIBRARY, never a number */
    unsigned long long v = 1;
    CHECK(kg_nvml_energy_mj(NULL, &v) == KG_NVML_NO_LIBRARY && v == 0);
    CHECK(strcmp(kg_energy_basis_name(KG_ENERGY_PER_PLACEMENT), "per-placement") == 0);
}

/* A figure that implies more power than the board can draw is refused: the H200's counter gave
 * 4559 mJ per launch of a 1414 us GEMM (3.2 kW, limit 700 W); 850 mJ is 601 W. */
static void test_energy_plausible(void)
{
    double w = 0;
    CHECK(!kg_bench_energy_plausible(4559.0, 1414.26, 700.0, &w) && fabs(w - 3223.6) < 1);
    CHECK(kg_bench_energy_plausible(850.0, 1414.26, 700.0, &w) && fabs(w - 601.0) < 1);
    CHECK(kg_bench_energy_plausible(850.0, 1414.26, NAN, &w)); /* limit unknown: 1500 W */
    CHECK(!kg_bench_energy_plausible(2200.0, 1414.26, NAN, &w));
    CHECK(!kg_bench_energy_plausible(850.0, 0, 700.0, &w) && isnan(w));
    CHECK(!kg_bench_energy_plausible(0, 1414.26, 700.0, &w)); /* no energy at all */
    /* the margin: 1.2x a 700 W limit on average is a controller's excursion, 1.3x is not */
    CHECK(kg_bench_energy_plausible(840.0 * 1.41426, 1414.26, 700.0, &w));
    CHECK(!kg_bench_energy_plausible(910.0 * 1.41426, 1414.26, 700.0, &w));
    char note[256];
    kg_energy_summary e = { .implied_w = 3223.6 };
    kg_bench_energy_note(note, sizeof note, KG_NVML_IMPLAUSIBLE, &e);
    CHECK_MSG(strstr(note, "imply 3224 W") != NULL, "%s", note);
}

/* The pay floor: beyond the bands and beyond KG_PAY_FLOOR (25%) what users pay FAILs the row.
 * The H200 figures of this session's probe (cuBLAS 8192^3 bf16, capped, 2 s windows): random
 * inputs 1141 mJ per launch at 1.624 ms, zeros 570 mJ at 1.404 ms: energy +100%, time +15.7%. */
static void test_pay_floor(void)
{
    kg_mark m = pay_mark(true);
    m.energy_per_launch_mj = 570.0;
    m.measured_median_us = 1404.0;
    kg_bench_verdict v = decide(&m, pay_obs(1120.0 * 1.003, 1624.0, 1141.0, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_SAME && v.pay_gate == KG_PAY_FAILED, "%s: %s",
              kg_bench_decision_name(v.decision), v.why);
    CHECK(kg_bench_verdict_fails(&v) && !kg_bench_decision_fails(v.decision));
    has(&v, "FAIL what users pay regressed (measured time and energy per launch) beyond the "
            "bands and the 25% pay floor");
    CHECK(strcmp(kg_bench_pay_gate_name(v.pay_gate), "failed") == 0);
    /* +20% energy: beyond the band, within the floor: a WARNING, the row passes */
    m = pay_mark(true);
    v = decide(&m, pay_obs(1120.0, 1300.0, 840.0, NORM, true));
    CHECK_MSG(v.pay_gate == KG_PAY_REGRESSED && !kg_bench_verdict_fails(&v), "%s", v.why);
    has(&v, "within the 25% pay floor");
    /* +30% measured time, significant, same energy: FAILED on the time */
    v = decide(&m, pay_obs(1120.0, 1300.0 * 1.30, 700.0, NORM, true));
    CHECK_MSG(v.pay_gate == KG_PAY_FAILED && kg_bench_verdict_fails(&v), "%s", v.why);
    has(&v, "regressed (measured time) beyond");
    /* the floor is an option: at 50% the same +30% is a WARNING */
    kg_decide_opts d = KG_DECIDE_OPTS_INIT;
    d.pay_floor = 0.5;
    kg_bench_obs o = pay_obs(1120.0, 1300.0 * 1.30, 700.0, NORM, true);
    CHECK(kg_bench_decide(&v, &m, &o, NULL, 0, &d) == 0 && v.pay_gate == KG_PAY_REGRESSED);
    /* not significant (the intervals overlap) never fails, whatever the change */
    o = pay_obs(1120.0, 1300.0 * 1.30, 700.0, NORM, true);
    o.measured_spread_rel = 0.3;
    v = decide(&m, o);
    CHECK_MSG(v.pay_gate != KG_PAY_FAILED, "%s", v.why);
}

/* Across power states (STATE_DIFFERS) the energy per launch is still what users pay: gated at
 * the pay floor alone, the time not at all. The H200's cold start: the zeros twin's mark was set
 * at full clock (uncapped), the random inputs ran capped at twice its energy per launch. */
static void test_across_states(void)
{
    kg_mark m = pay_mark(true);
    m.power_state = "full-clock";
    m.energy_per_launch_mj = 570.0;
    m.measured_median_us = 1250.0;
    kg_bench_verdict v = decide(&m, pay_obs(1120.0, 1624.0, 1141.0, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_STATE_DIFFERS && v.pay_gate == KG_PAY_FAILED, "%s: %s",
              kg_bench_decision_name(v.decision), v.why);
    CHECK(kg_bench_verdict_fails(&v) && fabs(v.energy_tol_rel - 0.25) < 1e-12);
    has(&v, "FAIL what users pay regressed (energy per launch)");
    has(&v, "measured time not gated (another power state)");
    has(&v, "(another power state: the 25% pay floor alone) REGRESSED");
    /* the same code warmer: +18% energy, +30% measured time (a lower capped clock): within */
    v = decide(&m, pay_obs(1120.0, 1250.0 * 1.30, 570.0 * 1.18, NORM, true));
    CHECK_MSG(v.decision == KG_BENCH_STATE_DIFFERS && v.pay_gate == KG_PAY_WITHIN &&
                  !kg_bench_verdict_fails(&v),
              "%s", v.why);
    CHECK(isnan(v.measured_tol_rel) && v.measured_change_rel > 0.29);
    /* +25% exactly is not beyond the floor */
    v = decide(&m, pay_obs(1120.0, 1250.0, 570.0 * 1.25, NORM, true));
    CHECK_MSG(v.pay_gate == KG_PAY_WITHIN, "%s", v.why);
    /* no energy in the run or the mark: not gated, as before */
    v = decide(&m, pay_obs(1120.0, 1624.0, 0, NORM, true));
    CHECK(v.decision == KG_BENCH_STATE_DIFFERS && v.pay_gate == KG_PAY_NOT_GATED);
    has(&v, "not gated (no decision)");
    /* the run at full clock against a capped mark: not on the normalised basis, not gated */
    kg_mark c = pay_mark(true);
    v = decide(&c, pay_obs(1120.0, 1300.0, 1400.0, "full-clock", true));
    CHECK_MSG(v.decision == KG_BENCH_STATE_DIFFERS && v.pay_gate == KG_PAY_NOT_GATED, "%s", v.why);
}

/* The energy window: whole update periods of the counter (100 ms on the H200). */
static void test_energy_window(void)
{
    kg_energy_summary e;
    double t[8], mj[8];
    for (int i = 0; i < 8; i++) { /* 700 W, 70 J a period, +-1 J */
        t[i] = 10.0 + 0.1 * i;
        mj[i] = 1e6 + 70000.0 * i + (i % 2 ? 1000.0 : 0.0);
    }
    kg_bench_energy_window(&e, t, mj, 6, 1624.0, 700.0);
    CHECK_MSG(e.basis == KG_ENERGY_WINDOW && e.units == 5 &&
                  fabs(e.per_launch_mj - 700.0 * 1624.0 * 1e-3 * (350000.0 + 0.0) / 350000.0) <
                      0.03 * 1136.8,
              "basis %d units %zu mj %g", e.basis, e.units, e.per_launch_mj);
    CHECK(fabs(e.implied_w - (mj[5] - mj[0]) / 0.5 * 1e-3) < 1e-6);
    CHECK(fabs(e.period_max_w - 710.0) < 1e-6);
    CHECK(e.spread_rel > 0 && e.spread_rel < 0.05);
    CHECK(strcmp(kg_energy_basis_name(e.basis), "window") == 0);
    /* two periods only: no figure */
    kg_bench_energy_window(&e, t, mj, 3, 1624.0, 700.0);
    CHECK(e.basis == KG_ENERGY_NONE && e.per_launch_mj == 0);
    /* no launch time: no figure */
    kg_bench_energy_window(&e, t, mj, 6, 0, 700.0);
    CHECK(e.basis == KG_ENERGY_NONE);
    /* a counter that went back */
    mj[3] -= 100000.0;
    kg_bench_energy_window(&e, t, mj, 6, 1624.0, 700.0);
    CHECK(e.basis == KG_ENERGY_NONE && e.implied_w == 0);
    mj[3] += 100000.0;
}

/* A capped GEMM on a 700 W board as a cold H100 read it (2026-12-07): periods of 770-804 W
 * between periods below the limit, which the former per-period limit + 10% refused; the
 * window's power is what the board drew on average. Beyond it, what cannot be true. */
static void test_energy_window_limit(void)
{
    static const double w[] = { 804.0, 655.0, 771.0, 690.0, 784.0, 640.0 };
    double t[7], mj[7];
    kg_energy_summary e;
    t[0] = 5.0, mj[0] = 2e6;
    for (int i = 0; i < 6; i++) { /* edges 100 ms apart, +-0.2 ms of polling */
        t[i + 1] = t[i] + 0.1 + (i % 2 ? 2e-4 : -2e-4);
        mj[i + 1] = mj[i] + w[i] * (t[i + 1] - t[i]) * 1e3;
    }
    kg_bench_energy_window(&e, t, mj, 7, 1400.0, 700.0);
    CHECK_MSG(e.basis == KG_ENERGY_WINDOW && fabs(e.implied_w - 724.0) < 1.0 &&
                  fabs(e.period_max_w - 804.0) < 1.0,
              "basis %d power %g max %g", e.basis, e.implied_w, e.period_max_w);
    CHECK(fabs(e.per_launch_mj - e.implied_w * 1400.0 * 1e-3) < 1e-9);
    /* the whole window at 1.3x the limit: refused, its power kept for the note */
    for (int i = 1; i < 7; i++)
        mj[i] = mj[0] + 910.0 * (t[i] - t[0]) * 1e3;
    kg_bench_energy_window(&e, t, mj, 7, 1400.0, 700.0);
    CHECK_MSG(e.basis == KG_ENERGY_NONE && fabs(e.implied_w - 910.0) < 1.0, "%g", e.implied_w);
    char note[256];
    kg_bench_energy_note(note, sizeof note, KG_NVML_IMPLAUSIBLE, &e);
    CHECK_MSG(strstr(note, "imply 910 W") != NULL, "%s", note);
    /* one period that jumps 100 J (a glitch): 1.7 kW in it, refused though the mean (867 W)
     * is within 1.25x */
    for (int i = 1; i < 7; i++)
        mj[i] = mj[0] + 700.0 * (t[i] - t[0]) * 1e3 + (i >= 3 ? 100000.0 : 0.0);
    kg_bench_energy_window(&e, t, mj, 7, 1400.0, 700.0);
    CHECK_MSG(e.basis == KG_ENERGY_NONE && e.implied_w > 1600.0, "%g", e.implied_w);
    /* no enforced limit read: 1500 W bounds the mean */
    for (int i = 1; i < 7; i++)
        mj[i] = mj[0] + 1400.0 * (t[i] - t[0]) * 1e3;
    kg_bench_energy_window(&e, t, mj, 7, 1400.0, NAN);
    CHECK(e.basis == KG_ENERGY_WINDOW);
    for (int i = 1; i < 7; i++)
        mj[i] = mj[0] + 1600.0 * (t[i] - t[0]) * 1e3;
    kg_bench_energy_window(&e, t, mj, 7, 1400.0, NAN);
    CHECK(e.basis == KG_ENERGY_NONE);
}

int main(void)
{
    test_energy_plausible();
    test_zeros_vs_random();
    test_branches();
    test_not_gated();
    test_combined();
    test_energy_summary();
    test_pay_floor();
    test_across_states();
    test_energy_window();
    test_energy_window_limit();
    return kg_test_done("test_bench_pay");
}
