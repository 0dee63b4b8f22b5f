/* Launch count and power state as pure functions (bench_power.c, issue #14): the k chooser's
 * precedence and its power-of-two rounding; NVML's steady detector over synthetic polls (ramp
 * then cap: steady only after the cap; flapping: never), its hold tracker and reason labels;
 * and (round 2) the probe-clock warm-up rule over synthetic probe sequences (the H200's
 * recovery ramp 1515 -> 1734 -> 1949 -> 1980 is steady only at 1980; a capped plateau at 1469
 * is steady, held and power-capped; a heavy case is never accepted before its minimum), the
 * label bands and the report object; (round 3) the placements rule, the shim sizes and the
 * clock normalisation over the H200's own gemm_bf16 8192^3 samples. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "bench/bench.h"
#include "kg_test.h"

static void test_choose_k(void)
{
    kg_k_source src;
    /* the mark's k wins over the flag and calibration */
    CHECK(kg_bench_choose_k(&src, 96, 32, false, 0.003, 1.0) == 96 && src == KG_K_MARK);
    /* the flag when the mark has none */
    CHECK(kg_bench_choose_k(&src, 0, 32, false, 0.003, 1.0) == 32 && src == KG_K_FLAG);
    /* calibrated: ceil(1 / 0.003) = 334 -> 256, and every estimate in [~2.0, 3.9] us too */
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 0.003, 1.0) == 256 && src == KG_K_CALIBRATED);
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 0.0026, 1.0) == 256);
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 0.0039, 1.0) == 256);
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 0.0041, 1.0) == 128);
    /* ceil exactly a power of two stays it */
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 1.0 / 64, 1.0) == 64);
    /* the cap, and a launch already longer than the replay */
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 1e-6, 1.0) == KG_MAX_K);
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 2.0, 1.0) == 1 && src == KG_K_CALIBRATED);
    CHECK(kg_bench_choose_k(&src, 0, 0, false, 0, 1.0) == 1);
    CHECK(kg_bench_choose_k(&src, 0, 5000, false, 0.003, 1.0) == KG_MAX_K);
    /* every calibrated k is a power of two */
    for (double est = 1e-5; est < 2.0; est *= 1.37) {
        int k = kg_bench_choose_k(&src, 0, 0, false, est, 1.0);
        double want = ceil(1.0 / est);
        bool down = want <= 1 ? k == 1 : (k <= want && (2 * k > want || k == KG_MAX_K));
        CHECK_MSG(k >= 1 && (k & (k - 1)) == 0 && down, "est %g ms: k %d", est, k);
    }
    /* cold is always 1 */
    CHECK(kg_bench_choose_k(&src, 96, 32, true, 0.003, 1.0) == 1 && src == KG_K_COLD);
    CHECK(strcmp(kg_bench_k_source_name(KG_K_MARK), "mark") == 0);
    CHECK(strcmp(kg_bench_k_source_name(KG_K_FLAG), "flag") == 0);
    CHECK(strcmp(kg_bench_k_source_name(KG_K_CALIBRATED), "calibrated") == 0);
    CHECK(strcmp(kg_bench_k_source_name(KG_K_COLD), "cold") == 0);
}

static kg_power_poll poll(double mhz, unsigned long long reasons)
{
    kg_power_poll p = { 0, mhz, 2619, 500, 50, reasons, true };
    return p;
}

/* The first n at which the sequence is steady (0 = never). */
static size_t first_steady(const kg_power_poll *p, size_t n)
{
    for (size_t i = 1; i <= n; i++)
        if (kg_power_steady(p, i))
            return i;
    return 0;
}

static void test_steady(void)
{
    const unsigned long long cap = KG_POWER_SW_POWER_CAP;
    /* boost at 1980, heats, the power cap pulls the clock down to ~1600 and it stays there */
    kg_power_poll ramp[] = { poll(1980, 0),   poll(1980, 0),   poll(1890, cap),
                             poll(1770, cap), poll(1650, cap), poll(1605, cap),
                             poll(1600, cap), poll(1605, cap), poll(1600, cap) };
    size_t n = KG_ARRAY_LEN(ramp);
    /* not steady at the start either: 1980, 1980, 1890 differ in reasons and clock */
    /* steady first when a whole window is on the plateau (1605, 1600, 1605) */
    CHECK_MSG(first_steady(ramp, n) == 8, "ramp then cap: steady at poll %zu, want 8",
              first_steady(ramp, n));
    /* short kernel at full clock: steady after one window */
    kg_power_poll flat[] = { poll(1980, 0), poll(1980, KG_POWER_GPU_IDLE), poll(1972, 0) };
    CHECK(first_steady(flat, 3) == 3);
    CHECK(!kg_power_steady(flat, 2));
    /* flapping between capped and not: never steady */
    kg_power_poll flap[12];
    for (size_t i = 0; i < 12; i++)
        flap[i] = i % 2 ? poll(1980, 0) : poll(1700, cap);
    CHECK(first_steady(flap, 12) == 0);
    /* the reasons flapping at one clock: never steady either */
    for (size_t i = 0; i < 12; i++)
        flap[i] = poll(1980, i % 2 ? 0 : cap);
    CHECK(first_steady(flap, 12) == 0);
    /* the same reasons but the clock wandering by more than 1%: not steady */
    kg_power_poll wander[] = { poll(1600, cap), poll(1650, cap), poll(1590, cap), poll(1660, cap),
                               poll(1600, cap) };
    CHECK(first_steady(wander, 5) == 0);
    /* a poll NVML did not answer breaks the window */
    kg_power_poll hole[] = { poll(1980, 0), poll(1980, 0), poll(1980, 0) };
    hole[1].ok = false;
    CHECK(!kg_power_steady(hole, 3));
}

/* NVML's side (context since round 2): nvml_held, nvml_label, the figures. */
static void test_track(void)
{
    const unsigned long long cap = KG_POWER_SW_POWER_CAP;
    kg_power_state ps;
    kg_power_track *t = calloc(1, sizeof *t);
    kg_power_poll w[] = { poll(1600, cap), poll(1605, cap), poll(1600, cap) };
    /* held: the same reasons, clocks within 1% */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    CHECK(ps.nvml_steady && ps.nvml_held && strcmp(ps.nvml_label, "power-capped") == 0);
    CHECK(ps.reasons_seen == cap && !ps.nvml_near_limit);
    double s1[] = { 1600, 1590, 1610, 1605 };
    for (size_t i = 0; i < 4; i++) {
        kg_power_poll p = poll(s1[i], cap);
        kg_power_track_add(t, &p);
    }
    kg_power_track_end(t);
    CHECK(ps.nvml_held && ps.polls == 4 && ps.nvml_sm_min == 1590 && ps.nvml_sm_max == 1610);
    CHECK(fabs(ps.nvml_sm_median - 1602.5) < 1e-9);
    /* the cap lifted mid-sampling: did not hold; the warm-up's reasons stay seen */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_poll lift = poll(1980, 0);
    kg_power_track_add(t, &lift);
    kg_power_track_end(t);
    CHECK(ps.nvml_steady && !ps.nvml_held && ps.reasons_seen == cap);
    /* the clock leaving the band with the same reasons: did not hold */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_poll low = poll(1500, cap);
    kg_power_track_add(t, &low);
    kg_power_track_end(t);
    CHECK(!ps.nvml_held);
    /* power at 96% of the limit: near it */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_poll hot = poll(1980, 0);
    hot.power_w = 672;
    hot.power_limit_w = 700;
    kg_power_track_add(t, &hot);
    kg_power_track_end(t);
    CHECK(ps.nvml_near_limit && ps.power_limit_w == 700);
    /* a warm-up that never got steady never holds */
    kg_power_poll f[] = { poll(1980, 0), poll(1700, cap), poll(1980, 0) };
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, f, 3);
    kg_power_poll p0 = poll(1980, 0);
    kg_power_track_add(t, &p0);
    kg_power_track_end(t);
    CHECK(!ps.nvml_steady && !ps.nvml_held && strcmp(ps.nvml_label, "full-clock") == 0);
    /* no NVML: unknown, neither steady nor held */
    kg_power_poll none[] = { poll(NAN, 0), poll(NAN, 0), poll(NAN, 0) };
    for (size_t i = 0; i < 3; i++)
        none[i].ok = false;
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, none, 3);
    kg_power_track_end(t);
    CHECK(!ps.nvml && !ps.nvml_steady && !ps.nvml_held && strcmp(ps.nvml_label, "unknown") == 0);
    free(t);
}

/* Probe readings every dt s from t = dt, the clocks given. */
static size_t readings(kg_clock_reading *r, const double *mhz, size_t n, double dt)
{
    for (size_t i = 0; i < n; i++) {
        r[i].t_s = dt * (double)(i + 1);
        r[i].mhz = mhz[i];
    }
    return n;
}

/* The first reading at which the warm-up stops (0 = never), and whether it was steady. */
static size_t first_done(const kg_clock_reading *r, size_t n, const kg_warm_rule *w, bool *steady,
                         double *ref)
{
    for (size_t i = 1; i <= n; i++)
        if (kg_probe_warm_done(r, i, w, steady, ref))
            return i;
    *steady = false;
    return 0;
}

/* The H200's residual throttle after the GEMM: 1515 -> 1734 -> 1949 -> 1980 MHz in plateaus
 * (each held ~100 ms, 5 ms chunks). A light case is steady only at 1980. */
static void test_probe_recovery(void)
{
    static kg_clock_reading r[400];
    double mhz[400];
    size_t n = 0;
    const double steps[] = { 1515, 1734, 1949, 1980 };
    for (size_t s = 0; s < 4; s++)
        for (size_t i = 0; i < 20; i++)
            mhz[n++] = steps[s] + (i % 2 ? 0.5 : -0.5);
    while (n < 60 + 20 + 10)
        mhz[n++] = 1980;
    readings(r, mhz, n, 0.005);
    kg_warm_rule w = kg_warm_rule_for(1980, 1.2, false, -1);
    CHECK(!w.heavy && w.min_s == 0 && w.max_s == KG_POWER_WARMUP_MAX_S);
    bool steady = false;
    double ref = NAN;
    size_t at = first_done(r, n, &w, &steady, &ref);
    /* the 1980 plateau starts at reading 61 (t = 0.305 s); a 20 ms window needs 5 readings */
    CHECK_MSG(steady && at == 65 && fabs(ref - 1980) < 1, "recovery: done at %zu (%s, %.1f)", at,
              steady ? "steady" : "not steady", ref);
    /* no window on a lower plateau passes: not at 1515, 1734 or 1949 */
    for (size_t i = 1; i < 61; i++)
        CHECK_MSG(!kg_probe_steady(r, i, &w, &ref), "steady at reading %zu (%.0f MHz)", i,
                  r[i - 1].mhz);
    /* a light case stuck on a low plateau for longer than 0.5 s is steady there, and labelled
     * throttled (not its own cap) unless NVML names a reason */
    for (size_t i = 0; i < 150; i++)
        mhz[i] = 1515;
    readings(r, mhz, 150, 0.005);
    at = first_done(r, 150, &w, &steady, &ref);
    CHECK_MSG(steady && at == 101, "low plateau: done at %zu", at);
    /* a ramp never settles: the cap ends the warm-up, not steady */
    for (size_t i = 0; i < 400; i++)
        mhz[i] = 1500 + 1.5 * (double)i;
    readings(r, mhz, 320, 0.005);
    at = first_done(r, 320, &w, &steady, &ref);
    CHECK_MSG(!steady && at == 300 && isnan(ref), "ramp: done at %zu, %s", at,
              steady ? "steady" : "not steady");
    /* the full-clock band: 1% */
    double wob[] = { 1980, 1955, 1980, 1955, 1980, 1955, 1980 };
    readings(r, wob, 7, 0.005);
    CHECK(!kg_probe_steady(r, 7, &w, &ref));
    /* too few readings or too short a span */
    double flat[] = { 1980, 1980, 1980, 1980 };
    readings(r, flat, 4, 0.005);
    CHECK(!kg_probe_steady(r, 4, &w, &ref)); /* 15 ms */
    readings(r, flat, 2, 0.030);
    CHECK(!kg_probe_steady(r, 2, &w, &ref)); /* 30 ms but 2 readings */
    readings(r, flat, 3, 0.010);
    CHECK(kg_probe_steady(r, 3, &w, &ref) && ref == 1980); /* 3 readings over 20 ms */
    /* a NaN reading breaks the window */
    double hole[] = { 1980, 1980, NAN, 1980, 1980, 1980, 1980, 1980 };
    readings(r, hole, 8, 0.005);
    CHECK(!kg_probe_steady(r, 7, &w, &ref) && kg_probe_steady(r, 8, &w, &ref));
    /* within 1% of each other but not of the max: not the full-clock window */
    double near[] = { 1949, 1950, 1949, 1950, 1949, 1950 };
    readings(r, near, 6, 0.005);
    CHECK(!kg_probe_steady(r, 6, &w, &ref));
}

/* gemm_bf16 8192^3 on the H200: heavy, its cap engages within ~0.1 s and settles at ~1469 MHz
 * (1498-1515 for the ceiling: the controller dithers ~1.1%). */
static void test_probe_heavy(void)
{
    static kg_clock_reading r[400];
    double mhz[400];
    size_t n = 0;
    kg_warm_rule w = kg_warm_rule_for(1980, 1651, false, -1);
    CHECK(w.heavy && w.min_s == KG_HEAVY_WARMUP_MIN_S);
    CHECK(kg_warm_rule_for(1980, 21.75, true, -1).heavy); /* compute-bound */
    CHECK(!kg_warm_rule_for(1980, 49.9, false, -1).heavy);
    /* 40 ms at 1980 before the cap, a ramp down, then the capped plateau */
    for (; n < 6; n++)
        mhz[n] = 1980;
    for (double m = 1900; m > 1480; m -= 60)
        mhz[n++] = m;
    for (; n < 300; n++)
        mhz[n] = (n % 7 < 3) ? 1469 + 0.5 * (double)(n % 2) : 1480; /* ~0.75% dither */
    readings(r, mhz, n, 0.0066);                                    /* 4 GEMMs per chunk */
    bool steady = false;
    double ref = NAN;
    size_t at = first_done(r, n, &w, &steady, &ref);
    const double heavy_ref = ref;
    CHECK_MSG(steady && r[at - 1].t_s >= KG_HEAVY_WARMUP_MIN_S - 1e-9 && ref > 1465 && ref < 1485,
              "heavy: done at %zu (t %.3f s), %s, %.1f MHz", at, at ? r[at - 1].t_s : 0.0,
              steady ? "steady" : "not steady", ref);
    /* never accepted before the minimum: the first 40 ms at full clock would pass the full
     * window, and so would the plateau right after the ramp */
    for (size_t i = 1; i <= n && r[i - 1].t_s < KG_HEAVY_WARMUP_MIN_S - 1e-9; i++)
        CHECK_MSG(!kg_probe_steady(r, i, &w, &ref), "heavy accepted at %.3f s", r[i - 1].t_s);
    kg_warm_rule light = kg_warm_rule_for(1980, 10, false, -1);
    CHECK(kg_probe_steady(r, 6, &light, &ref) && ref == 1980); /* what a light rule takes */
    /* --warmup-min overrides, both ways; the cap grows with it */
    kg_warm_rule o = kg_warm_rule_for(1980, 1651, false, 0);
    CHECK(o.heavy && o.min_s == 0 && kg_probe_steady(r, 6, &o, &ref));
    o = kg_warm_rule_for(1980, 1.2, false, 3.0);
    CHECK(!o.heavy && o.min_s == 3.0 && o.max_s == 3.0);
    /* the capped plateau as a full state, labelled and held */
    kg_power_state ps;
    memset(&ps, 0, sizeof ps);
    ps.steady = true;
    ps.ref_mhz = heavy_ref;
    ps.max_mhz = 1980;
    ps.heavy = true;
    double smp[] = { 1469.5, 1468.7, 1470.1, 1480, 1469.5 };
    kg_power_finish(&ps, smp, 5);
    CHECK_MSG(ps.probe && ps.held && strcmp(ps.label, "power-capped") == 0, "%s held %d", ps.label,
              ps.held);
    CHECK(fabs(ps.sm_median - 1469.5) < 1e-9 && ps.sm_min == 1468.7 && ps.sm_max == 1480);
    /* the clock leaving the 2% band while sampling: did not hold, still power-capped */
    smp[2] = 1420;
    kg_power_finish(&ps, smp, 5);
    CHECK(!ps.held && strcmp(ps.label, "power-capped") == 0);
    /* not steady: never held */
    ps.steady = false;
    smp[2] = 1470;
    kg_power_finish(&ps, smp, 5);
    CHECK(!ps.held);
    /* a small case at full clock right after: held in 1%, full-clock; 1.5% off: not held */
    memset(&ps, 0, sizeof ps);
    ps.steady = true;
    ps.ref_mhz = 1980;
    ps.max_mhz = 1980;
    double full[] = { 1980.4, 1976.5, 1978.45, NAN, 1980.2 };
    kg_power_finish(&ps, full, 5);
    CHECK(ps.probe && ps.held && strcmp(ps.label, "full-clock") == 0);
    full[1] = 1950;
    kg_power_finish(&ps, full, 5);
    CHECK(!ps.held && strcmp(ps.label, "full-clock") == 0);
    /* no probe clock at all: unknown */
    double none[] = { NAN, NAN };
    kg_power_finish(&ps, none, 2);
    CHECK(!ps.probe && !ps.held && strcmp(ps.label, "unknown") == 0);
}

/* The label bands: what the decision compares. */
static void test_probe_labels(void)
{
    char b[64];
    const unsigned long long cap = KG_POWER_SW_POWER_CAP;
    kg_power_label_probe(b, sizeof b, 1980.4, 1980, false, 0, false);
    CHECK(strcmp(b, "full-clock") == 0);
    /* 98% exactly is full; just below is not */
    kg_power_label_probe(b, sizeof b, 0.98 * 1980, 1980, false, 0, false);
    CHECK(strcmp(b, "full-clock") == 0);
    kg_power_label_probe(b, sizeof b, 0.979 * 1980, 1980, true, 0, false);
    CHECK(strcmp(b, "power-capped") == 0);
    /* full clock whatever NVML's (stale) reasons say */
    kg_power_label_probe(b, sizeof b, 1976.5, 1980, false, cap, true);
    CHECK(strcmp(b, "full-clock") == 0);
    /* a heavy case below: power-capped, NVML confirming or not (it read "no reasons") */
    kg_power_label_probe(b, sizeof b, 1469.5, 1980, true, 0, false);
    CHECK(strcmp(b, "power-capped") == 0);
    kg_power_label_probe(b, sizeof b, 1513.7, 1980, true, cap, false);
    CHECK(strcmp(b, "power-capped") == 0);
    /* a light case below: power-capped only with NVML's cap or power near the limit */
    kg_power_label_probe(b, sizeof b, 1561, 1980, false, cap | KG_POWER_GPU_IDLE, false);
    CHECK(strcmp(b, "power-capped") == 0);
    kg_power_label_probe(b, sizeof b, 1561, 1980, false, 0, true);
    CHECK(strcmp(b, "power-capped") == 0);
    kg_power_label_probe(b, sizeof b, 1561, 1980, false, KG_POWER_GPU_IDLE, false);
    CHECK_MSG(strcmp(b, "throttled") == 0, "%s", b);
    /* thermal wins, a hardware slowdown is throttled */
    kg_power_label_probe(b, sizeof b, 1400, 1980, true, cap | KG_POWER_HW_THERMAL, true);
    CHECK(strcmp(b, "thermal") == 0);
    kg_power_label_probe(b, sizeof b, 1400, 1980, true, cap | KG_POWER_HW_SLOWDOWN, false);
    CHECK(strcmp(b, "throttled") == 0);
    /* no probe clock, or no max: unknown */
    kg_power_label_probe(b, sizeof b, NAN, 1980, true, cap, true);
    CHECK(strcmp(b, "unknown") == 0);
    kg_power_label_probe(b, sizeof b, 1500, 0, true, cap, true);
    CHECK(strcmp(b, "unknown") == 0);
    /* the run's rows (bench_run1.txt) by their probe medians: one label per band */
    const double rows[][2] = { { 1515.3, 0 }, { 1734.7, 0 }, { 1949.2, 0 }, { 1980.2, 1 },
                               { 1976.5, 0 }, { 1513.7, 1 }, { 1469.5, 1 } };
    const char *want[] = { "throttled",  "throttled",    "full-clock",  "full-clock",
                           "full-clock", "power-capped", "power-capped" };
    for (size_t i = 0; i < KG_ARRAY_LEN(rows); i++) {
        kg_power_label_probe(b, sizeof b, rows[i][0], 1980, rows[i][1] > 0, 0, false);
        CHECK_MSG(strcmp(b, want[i]) == 0, "%.1f MHz: %s, want %s", rows[i][0], b, want[i]);
    }
}

static void test_labels(void)
{
    char b[64];
    kg_power_label(b, sizeof b, true, 0);
    CHECK(strcmp(b, "full-clock") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_GPU_IDLE | KG_POWER_APP_CLOCKS);
    CHECK(strcmp(b, "full-clock") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_SW_POWER_CAP);
    CHECK(strcmp(b, "power-capped") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_SW_POWER_CAP | KG_POWER_GPU_IDLE);
    CHECK(strcmp(b, "power-capped") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_HW_THERMAL);
    CHECK(strcmp(b, "thermal") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_SW_THERMAL | KG_POWER_SW_POWER_CAP);
    CHECK(strcmp(b, "thermal") == 0);
    kg_power_label(b, sizeof b, true, KG_POWER_HW_SLOWDOWN);
    CHECK_MSG(strcmp(b, "other:hw_slowdown") == 0, "%s", b);
    kg_power_label(b, sizeof b, true, KG_POWER_SW_POWER_CAP | KG_POWER_HW_SLOWDOWN | 0x80ULL);
    CHECK_MSG(strcmp(b, "other:sw_power_cap+hw_slowdown+hw_power_brake") == 0, "%s", b);
    kg_power_label(b, sizeof b, true, 1ULL << 40);
    CHECK_MSG(strcmp(b, "other:bit40") == 0, "%s", b);
    /* too many reasons for the label: it is cut at a whole name, never inside one (without
     * hw_thermal, hw_power_brake is the name that no longer fits) */
    const unsigned long long many[] = { ~0ULL, ~0ULL & ~KG_POWER_HW_THERMAL };
    for (size_t k = 0; k < 2; k++) {
        kg_power_label(b, sizeof b, true, many[k]);
        CHECK_MSG(strncmp(b, "other:", 6) == 0 && strlen(b) < sizeof b, "%s", b);
        for (char *tok = strtok(b + 6, "+"); tok; tok = strtok(NULL, "+")) {
            bool known = strncmp(tok, "bit", 3) == 0 && atoi(tok + 3) >= 9 && atoi(tok + 3) < 64;
            for (unsigned i = 0; i < 9 && !known; i++)
                known = kg_power_reason_name(i) && strcmp(tok, kg_power_reason_name(i)) == 0;
            CHECK_MSG(known, "a cut name in the label: '%s'", tok);
        }
    }
    kg_power_label(b, sizeof b, false, KG_POWER_SW_POWER_CAP);
    CHECK(strcmp(b, "unknown") == 0);
    CHECK(strcmp(kg_power_reason_name(2), "sw_power_cap") == 0);
    CHECK(kg_power_reason_name(9) == NULL);
}

/* The report object: what the schema requires, the probe's figures, NVML's beside them, the
 * notes without either. */
static void test_json(void)
{
    kg_power_state ps;
    kg_power_track *t = calloc(1, sizeof *t);
    kg_power_poll w[] = { poll(1980, 0), poll(1980, 0), poll(1980, 0) };
    memset(&ps, 0, sizeof ps);
    ps.steady = true;
    ps.ref_mhz = 1470;
    ps.max_mhz = 1980;
    ps.heavy = true;
    ps.warmup_min_s = 0.3;
    ps.warmup_readings = 48;
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_track_add(t, &w[0]);
    kg_power_track_end(t);
    double smp[] = { 1469, 1470, 1471 };
    kg_power_finish(&ps, smp, 3);
    cJSON *o = kg_power_state_json(&ps);
    /* NVML said full-clock with no reasons (stale): the probe's label wins, NVML's is beside */
    CHECK(o && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "label")), "power-capped") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "nvml_label")), "full-clock") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "clock_source")), "probe") == 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "steady")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "held")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "heavy")));
    CHECK(cJSON_GetObjectItem(o, "warmup_s") && !cJSON_GetObjectItem(o, "note"));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "sm_mhz_median")) == 1470);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "nvml_sm_mhz_median")) == 1980);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "steady_sm_mhz")) == 1470);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "warmup_readings")) == 48);
    CHECK(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "clock_frac")) - 1470.0 / 1980) < 1e-12);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "reasons")) == 0);
    cJSON_Delete(o);
    /* neither probe nor NVML: unknown, with the note */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, NULL, 0);
    kg_power_track_end(t);
    kg_power_finish(&ps, NULL, 0);
    o = kg_power_state_json(&ps);
    CHECK(o && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "label")), "unknown") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "clock_source")), "none") == 0);
    CHECK(cJSON_GetObjectItem(o, "note") && !cJSON_GetObjectItem(o, "nvml_label"));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "sm_mhz_median")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "steady_sm_mhz"))); /* not 0 when never steady */
    cJSON_Delete(o);
    free(t);
}

static void test_placements(void)
{
    kg_bench_opts o = KG_BENCH_OPTS_INIT;
    const double capped = 1440, full = 1980, max = 1980;
    CHECK(kg_bench_placements_for(&o, 1600, capped, max) == 1); /* memory-bound: one */
    o.compute_bound = true;
    CHECK(kg_bench_placements_for(&o, 1600, capped, max) == KG_BENCH_PLACEMENTS);
    CHECK(kg_bench_placements_for(&o, 1600, NAN, max) == KG_BENCH_PLACEMENTS); /* unsettled */
    CHECK(kg_bench_placements_for(&o, 2100, full, max) == 1);  /* fma_chain_1ms: full clock */
    CHECK(kg_bench_placements_for(&o, 1600, capped, 0) == 1);  /* max clock unknown */
    CHECK(kg_bench_placements_for(&o, 6.6, capped, max) == 1); /* gemm 300x200x200: short */
    o.mode = 1;
    CHECK(kg_bench_placements_for(&o, 1600, capped, max) == 1); /* cold: one launch/sample */
    o.placements = 5;
    CHECK(kg_bench_placements_for(&o, 1, full, max) == 5); /* the flag wins */
    o.placements = 99;
    CHECK(kg_bench_placements_for(&o, 1, full, max) == KG_BENCH_MAX_PLACEMENTS);
    /* the placement-level interval: fa16 of the H200 proof (1249, 1246, 1223 us normalised):
     * 2.576 x sd 14.2 / sqrt 3 = 21.1 us, 1.7% of 1241.5 */
    const double pm[] = { 1249, 1246, 1223 };
    double h = kg_bench_placement_half(pm, 3, 1241.5);
    CHECK_MSG(fabs(h - 2.576 * 14.2244 / sqrt(3) / 1241.5) < 1e-4, "half %.5f", h);
    CHECK(kg_bench_placement_half(pm, 1, 1241.5) == 0);
    /* placement medians over the kept values: 3 placements of 4 samples; placement 2 dropped
     * whole (throttled below the floor, as in the H200 proof's fa3), one of placement 1 too */
    unsigned char dr[12] = { 0, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1 };
    /* sample:             0  1  2  3 | 4  5  6  7 | 8  9 10 11 -> kept 10 12 11 13 | 20 21 22 */
    const double kept2[] = { 10, 12, 11, 13, 20, 21, 22 };
    const size_t starts[] = { 0, 4, 8 };
    double med3[3];
    CHECK(kg_bench_placement_medians(med3, kept2, dr, 12, starts, 3) == 2);
    CHECK(med3[0] == 11.5 && med3[1] == 21 && isnan(med3[2]));
    const double same[] = { 164, 164, 164 };
    CHECK(kg_bench_placement_half(same, 3, 164) == 0);
    /* shims: 2..512 MiB in 2 MiB steps, reproducible, different per placement and seed */
    size_t a = kg_bench_shim_bytes(11, 1), b = kg_bench_shim_bytes(11, 2);
    CHECK(a == kg_bench_shim_bytes(11, 1) && a != b && a != kg_bench_shim_bytes(12, 1));
    for (int p = 1; p < 64; p++) {
        size_t z = kg_bench_shim_bytes((uint64_t)p * 7919, p);
        CHECK_MSG(z >= (2u << 20) && z <= (512u << 20) && z % (2u << 20) == 0, "shim %zu", z);
    }
}

/* Samples of gemm_bf16 8192^3 in one H200 process (call 1 of round 3, p7): the cap stepped the
 * clock 1485 -> 1393 -> 1288 MHz (the window clocks here are those steps). Each sample is scaled
 * by its own window clock; a dropped one is left out. */
static void test_clock_normalise(void)
{
    const double us[] = { 1648, 1660, 1687, 1732, 1724, 1827, 1857, 1858 };
    const double win[] = { 1485, 1487, 1440, 1395, 1395, 1340, 1290, 1290 };
    unsigned char drop[8] = { 0 };
    double out[8];
    drop[6] = 1;
    size_t m = kg_bench_clock_normalise(out, us, win, drop, 8, 1980);
    CHECK(m == 7);
    CHECK(fabs(out[0] - 1648 * 1485 / 1980.0) < 1e-9);
    CHECK(fabs(out[2] - 1687 * 1440 / 1980.0) < 1e-9);
    CHECK(fabs(out[6] - 1858 * 1290 / 1980.0) < 1e-9); /* after the drop: the next sample's */
    double raw_lo = 1e9, raw_hi = 0, lo = 1e9, hi = 0;
    for (size_t i = 0, j = 0; i < 8; i++) {
        if (drop[i])
            continue;
        raw_lo = fmin(raw_lo, us[i]), raw_hi = fmax(raw_hi, us[i]);
        lo = fmin(lo, out[j]), hi = fmax(hi, out[j]);
        j++;
    }
    CHECK_MSG((raw_hi - raw_lo) / raw_lo > 0.12 && (hi - lo) / lo < 0.04,
              "raw spread %.3f, normalised %.3f", (raw_hi - raw_lo) / raw_lo, (hi - lo) / lo);
}

/* The clock floor applied after sampling: a sample below it (probe) is dropped again, one
 * without a probe clock is kept, and an earlier drop that is now above it is kept. */
static void test_refloor(void)
{
    const double us[] = { 1630, 1780, 1660, 1650, 1700 };
    const double mhz[] = { 1454, 1336, NAN, 1470, 1385.9 };
    unsigned char drop[5] = { 1, 0, 0, 0, 0 };
    double kept[5];
    size_t m = kg_bench_refloor(kept, drop, us, mhz, 5, 1386);
    CHECK(m == 3 && kept[0] == 1630 && kept[1] == 1660 && kept[2] == 1650);
    CHECK(!drop[0] && drop[1] && !drop[2] && !drop[3] && drop[4]);
    m = kg_bench_refloor(kept, drop, us, mhz, 5, 0); /* no floor: every sample */
    CHECK(m == 5 && kept[4] == 1700 && !drop[1] && !drop[4]);
}

/* The window clock: each SM's cycles over its ns between the two stamps; the highest SM (one
 * idle in the window may count fewer cycles); slots that a stamp did not reach (zero) or that
 * went backwards are left out. */
static void test_window_mhz(void)
{
    /* slot j = {cycles, ns}: SM 0 1.5e6 cycles in 1 ms (1500 MHz), SM 1 2.4e6 in 2 ms (1200: it
     * idled); SM 2 unstamped before (zero); SM 3 garbage (its time went backwards) */
    unsigned long long before[8] = { 1000, 5000000, 7, 9000000, 0, 0, 10, 8000000 };
    unsigned long long after[8] = { 1501000, 6000000, 2400007, 11000000, 100, 999, 20, 7000000 };
    double f = kg_clock_window_mhz(before, after, 4);
    CHECK_MSG(fabs(f - 1500.0) < 1e-9, "window %.6f MHz", f);
    CHECK(fabs(kg_clock_window_mhz(before + 2, after + 2, 1) - 1200.0) < 1e-9);
    unsigned long long z[8] = { 0 };
    CHECK(isnan(kg_clock_window_mhz(z, after, 4)) && isnan(kg_clock_window_mhz(z, z, 4)));
}

/* A later placement's NVML view joins the first's: a thermal reason seen only there counts. */
static void test_fold(void)
{
    kg_power_state a = { 0 }, b = { 0 };
    a.reasons_seen = KG_POWER_SW_POWER_CAP, a.polls = 4, a.nvml_held = true;
    a.nvml_sm_min = 1980, a.nvml_sm_max = 1980, a.warmup_s = 0.3, a.temp_c = 58;
    b.reasons_seen = KG_POWER_SW_THERMAL, b.polls = 2, b.nvml_held = false,
    b.nvml_near_limit = true;
    b.nvml_sm_min = 1755, b.nvml_sm_max = NAN, b.warmup_s = 0.1, b.temp_c = 61;
    kg_power_state_fold(&a, &b);
    CHECK(a.reasons_seen == (KG_POWER_SW_POWER_CAP | KG_POWER_SW_THERMAL));
    CHECK(a.polls == 6 && !a.nvml_held && a.nvml_near_limit);
    CHECK(a.nvml_sm_min == 1755 && a.nvml_sm_max == 1980 && a.temp_c == 61);
    CHECK(fabs(a.warmup_s - 0.4) < 1e-12);
    char lbl[64]; /* the label now sees the thermal reason */
    kg_power_label_probe(lbl, sizeof lbl, 1500, 1980, true, a.reasons_seen, a.nvml_near_limit);
    CHECK_MSG(strcmp(lbl, "thermal") == 0, "%s", lbl);
}

int main(void)
{
    test_choose_k();
    test_steady();
    test_track();
    test_probe_recovery();
    test_probe_heavy();
    test_probe_labels();
    test_labels();
    test_json();
    test_placements();
    test_clock_normalise();
    test_window_mhz();
    test_refloor();
    test_fold();
    return kg_test_done("test_bench_power");
}
