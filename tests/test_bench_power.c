/* Launch count and power state as pure functions (bench_power.c, issue #14): the k chooser's
 * precedence and its power-of-two rounding, the steady-state detector over synthetic NVML poll
 * sequences (ramp then cap: steady only after the cap; flapping: never), the hold tracker, and
 * the reason-bit labels. */
#include <math.h>
#include <string.h>
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
    kg_power_poll ramp[] = { poll(1980, 0), poll(1980, 0), poll(1890, cap), poll(1770, cap),
                             poll(1650, cap), poll(1605, cap), poll(1600, cap), poll(1605, cap),
                             poll(1600, cap) };
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
    kg_power_poll wander[] = { poll(1600, cap), poll(1650, cap), poll(1590, cap),
                               poll(1660, cap), poll(1600, cap) };
    CHECK(first_steady(wander, 5) == 0);
    /* a poll NVML did not answer breaks the window */
    kg_power_poll hole[] = { poll(1980, 0), poll(1980, 0), poll(1980, 0) };
    hole[1].ok = false;
    CHECK(!kg_power_steady(hole, 3));
}

static void test_track(void)
{
    const unsigned long long cap = KG_POWER_SW_POWER_CAP;
    kg_power_state ps;
    kg_power_track *t = calloc(1, sizeof *t);
    kg_power_poll w[] = { poll(1600, cap), poll(1605, cap), poll(1600, cap) };
    /* held: the same reasons, clocks within 1% */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    CHECK(ps.steady && ps.held && strcmp(ps.label, "power-capped") == 0);
    double s1[] = { 1600, 1590, 1610, 1605 };
    for (size_t i = 0; i < 4; i++) {
        kg_power_poll p = poll(s1[i], cap);
        kg_power_track_add(t, &p);
    }
    kg_power_track_end(t);
    CHECK(ps.held && ps.polls == 4 && ps.sm_min == 1590 && ps.sm_max == 1610);
    CHECK(fabs(ps.sm_median - 1602.5) < 1e-9);
    /* the cap lifted mid-sampling: did not hold */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_poll lift = poll(1980, 0);
    kg_power_track_add(t, &lift);
    kg_power_track_end(t);
    CHECK(ps.steady && !ps.held && ps.reasons_seen == 0);
    /* the clock leaving the band with the same reasons: did not hold */
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_poll low = poll(1500, cap);
    kg_power_track_add(t, &low);
    kg_power_track_end(t);
    CHECK(!ps.held);
    /* a warm-up that never got steady never holds */
    kg_power_poll f[] = { poll(1980, 0), poll(1700, cap), poll(1980, 0) };
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, f, 3);
    kg_power_poll p0 = poll(1980, 0);
    kg_power_track_add(t, &p0);
    kg_power_track_end(t);
    CHECK(!ps.steady && !ps.held && strcmp(ps.label, "full-clock") == 0);
    /* no NVML: unknown, neither steady nor held */
    kg_power_poll none[] = { poll(NAN, 0), poll(NAN, 0), poll(NAN, 0) };
    for (size_t i = 0; i < 3; i++)
        none[i].ok = false;
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, none, 3);
    kg_power_track_end(t);
    CHECK(!ps.nvml && !ps.steady && !ps.held && strcmp(ps.label, "unknown") == 0);
    free(t);
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
    kg_power_label(b, sizeof b, false, KG_POWER_SW_POWER_CAP);
    CHECK(strcmp(b, "unknown") == 0);
    CHECK(strcmp(kg_power_reason_name(2), "sw_power_cap") == 0);
    CHECK(kg_power_reason_name(9) == NULL);
}

/* The report object: what the schema requires, the note without NVML. */
static void test_json(void)
{
    kg_power_state ps;
    kg_power_track *t = calloc(1, sizeof *t);
    kg_power_poll w[] = { poll(1600, KG_POWER_SW_POWER_CAP), poll(1600, KG_POWER_SW_POWER_CAP),
                          poll(1600, KG_POWER_SW_POWER_CAP) };
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, w, 3);
    kg_power_track_add(t, &w[0]);
    kg_power_track_end(t);
    cJSON *o = kg_power_state_json(&ps);
    CHECK(o && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "label")), "power-capped") == 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "steady")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "held")));
    CHECK(cJSON_GetObjectItem(o, "warmup_s") && !cJSON_GetObjectItem(o, "note"));
    const cJSON *r = cJSON_GetObjectItem(o, "reasons");
    CHECK(cJSON_GetArraySize(r) == 1 &&
          strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(r, 0)), "sw_power_cap") == 0);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "sm_mhz_median")) == 1600);
    cJSON_Delete(o);
    memset(&ps, 0, sizeof ps);
    kg_power_track_begin(t, &ps, NULL, 0);
    kg_power_track_end(t);
    o = kg_power_state_json(&ps);
    CHECK(o && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "label")), "unknown") == 0);
    CHECK(cJSON_GetObjectItem(o, "note") && !cJSON_GetObjectItem(o, "sm_mhz_median"));
    cJSON_Delete(o);
    free(t);
}

int main(void)
{
    test_choose_k();
    test_steady();
    test_track();
    test_labels();
    test_json();
    return kg_test_done("test_bench_power");
}
