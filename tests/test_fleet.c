/* The fleet's pure rules (issue #27 items 2 and 3, gates/core/fleet.c): per-GPU offsets and
 * the class's cross-GPU spread from the run history, the band a GPU that never set the mark is
 * judged with (and the row's note), and a mark's band learned from its setters and the class's
 * history: a mode 15% of processes land in is inside it, a +2% regression still outside. Each
 * rule has a planted defect its check must catch. */
#include <math.h>
#include <string.h>
#include "bench/bench.h"
#include "core/fleet.h"
#include "core/kg_core.h"
#include "kg_test.h"

static bool near(double a, double b) { return fabs(a - b) < 1e-9; }

static void test_offsets(void)
{
    kg_fleet_run r[] = {
        { "GPU-a", 10.0 }, { "GPU-b", 10.2 },  { "GPU-a", 10.01 }, { "GPU-c", 9.0 },
        { "GPU-a", 9.99 }, { "GPU-b", 10.19 }, { "GPU-b", 10.21 }, { "GPU-c", 9.0 },
        { "", 50.0 },      { "GPU-a", 10.0 },  { "GPU-b", 10.2 },  { "GPU-a", 10.0 },
    };
    kg_fleet_gpu g[8];
    size_t n = 0;
    double cls = 0, spread = 0;
    CHECK(kg_fleet_offsets(g, &n, 8, &cls, &spread, r, KG_ARRAY_LEN(r)) == 0);
    CHECK(n == 3 && strcmp(g[0].gpu, "GPU-a") == 0 && g[0].runs == 5 && g[1].runs == 4 &&
          g[2].runs == 2);
    /* one vote per GPU: median(10.0, 10.2, 9.0) = 10.0, the unknown GPU's 50 left out */
    CHECK_MSG(near(cls, 10.0), "class median %g", cls);
    CHECK(near(g[0].offset_rel, 0) && near(g[1].offset_rel, 0.02) && near(g[2].offset_rel, -0.1));
    /* GPU-c has 2 runs (< KG_FLEET_MIN_RUNS): not in the spread; counted it would be 0.12 */
    CHECK_MSG(near(spread, 0.02), "spread %g (GPU-c's 2 runs counted?)", spread);
    /* one GPU: unknown */
    CHECK(kg_fleet_offsets(g, &n, 8, &cls, &spread, r, 1) == 0 && spread < 0 && n == 1);
    /* no GPU known: the class figure of every run, no offsets */
    kg_fleet_run old[] = { { "", 4 }, { NULL, 6 } };
    CHECK(kg_fleet_offsets(g, &n, 8, &cls, &spread, old, 2) == 0 && n == 0 && near(cls, 5) &&
          spread < 0);
}

static void test_xgpu(void)
{
    char note[400];
    CHECK(near(kg_fleet_xgpu_band(note, sizeof note, 0.004, "GPU-a", "GPU-a", 0.02, 3), 0.004) &&
          !note[0]);
    double b = kg_fleet_xgpu_band(note, sizeof note, 0.004, "GPU-a", "GPU-b", 0.02, 3);
    CHECK_MSG(near(b, 0.024) && strstr(note, "never set the mark") && strstr(note, "GPU-b") &&
                  strstr(note, "2.00%"),
              "band %g, note '%s'", b, note);
    b = kg_fleet_xgpu_band(note, sizeof note, 0.004, "GPU-a", "GPU-b", -1, 1);
    CHECK(near(b, 0.004) && strstr(note, "spread is unknown"));
    /* a mark of unknown GPU (written before issue #27): the mark's band, no note */
    CHECK(near(kg_fleet_xgpu_band(note, sizeof note, 0.004, "", "GPU-b", 0.02, 3), 0.004) &&
          !note[0]);
    CHECK(near(kg_fleet_xgpu_band(note, sizeof note, 0.004, NULL, "GPU-b", 0.02, 3), 0.004));
}

/* Would a process at x be REGRESSED against a mark at `mark` (the setters' CI edge) with this
 * band, its own noise 0.1% (bench_decide.c: tolerance = band + run noise)? */
static bool outside(double x, double mark, double band) { return x / mark - 1 > band + 0.001; }

static void test_history_band(void)
{
    double set[3] = { 1.000, 1.0005, 0.9995 }, hist[60];
    /* the bimodal case: 15% of processes (6 of 40) in a +0.9% mode, which the 3 setters
     * missed */
    for (int i = 0; i < 40; i++)
        hist[i] = (i % 20) < 3 ? 1.009 + 0.0001 * (i % 3) : 1.0 + 0.0002 * ((i % 5) - 2);
    double setter_band = 0.002;
    double b = kg_fleet_history_band(setter_band, set, 3, hist, 40);
    CHECK_MSG(b > 0.0085 && b <= KG_FLEET_BAND_MAX, "bimodal band %g", b);
    CHECK_MSG(!outside(1.0092, 1.001, b), "the 15%% mode is outside the band %g", b);
    CHECK_MSG(outside(1.02, 1.001, b), "+2%% is inside the band %g", b);
    /* the planted defect: the setters' band alone calls the mode a regression */
    CHECK(outside(1.0092, 1.001, setter_band));
    /* a tight history never narrows the setters' band */
    for (int i = 0; i < 60; i++)
        hist[i] = 1.0 + 0.0001 * ((i % 3) - 1);
    CHECK(near(kg_fleet_history_band(setter_band, set, 3, hist, 60), setter_band));
    /* too little history: the setters' band */
    for (int i = 0; i < 9; i++)
        hist[i] = i < 3 ? 1.05 : 1.0;
    CHECK(near(kg_fleet_history_band(setter_band, set, 3, hist, 9), setter_band));
    /* a wild history is capped: a regression of KG_FLEET_BAND_MAX is still caught */
    for (int i = 0; i < 60; i++)
        hist[i] = i % 3 ? 1.0 : 1.3;
    b = kg_fleet_history_band(setter_band, set, 3, hist, 60);
    CHECK(near(b, KG_FLEET_BAND_MAX));
    /* only the newest KG_FLEET_HISTORY_N count: an old noisy stretch ages out */
    for (int i = 0; i < 60; i++)
        hist[i] = i < 10 ? 1.03 : 1.0;
    CHECK(near(kg_fleet_history_band(setter_band, set, 3, hist, 60), setter_band));
    double q[] = { 3, 1, 2, 4 };
    CHECK(near(kg_fleet_quantile(q, 4, 0.5), 2.5) && near(kg_fleet_quantile(q, 4, 1), 4));
}

/* Through the bench's real decision: a +2.2% run is REGRESSED on the GPU that set the mark and
 * SAME, with the note, on another GPU of a class whose GPUs differ by 3%. */
static void test_bench_on_gpu(void)
{
    kg_mark mk = { .device_class = "NVIDIA H200/sm_90",
                   .case_id = "c",
                   .metric = "time_us_warm",
                   .direction = KG_LOWER_IS_BETTER,
                   .value = 100,
                   .band_rel = 0.004,
                   .run_median = 100,
                   .ci_lo = 99.9,
                   .ci_hi = 100.1,
                   .samples = 200,
                   .runs = 3,
                   .gpu_uuid = "GPU-a",
                   .xgpu_spread_rel = 0.03,
                   .xgpu_gpus = 3 };
    kg_bench_obs run = { .median = 102.2, .ci_lo = 102.1, .ci_hi = 102.3 };
    kg_decide_opts o = KG_DECIDE_OPTS_INIT;
    kg_bench_verdict v;
    kg_mark tmp;
    char note[400];
    const kg_mark *use = kg_bench_mark_on_gpu(&tmp, &mk, "GPU-a", note, sizeof note);
    CHECK(use == &mk && !note[0]);
    CHECK(kg_bench_decide(&v, use, &run, NULL, 0, &o) == 0 && v.decision == KG_BENCH_REGRESSED);
    use = kg_bench_mark_on_gpu(&tmp, &mk, "GPU-b", note, sizeof note);
    CHECK(use == &tmp && near(tmp.band_rel, 0.034) && strstr(note, "never set the mark"));
    CHECK(kg_bench_decide(&v, use, &run, NULL, 0, &o) == 0 && v.decision == KG_BENCH_SAME);
    /* a +5% regression on the other GPU is still caught */
    kg_bench_obs big = { .median = 105, .ci_lo = 104.9, .ci_hi = 105.1 };
    CHECK(kg_bench_decide(&v, use, &big, NULL, 0, &o) == 0 && v.decision == KG_BENCH_REGRESSED);
    /* a mark without a GPU (written before issue #27): the mark itself */
    mk.gpu_uuid = NULL;
    CHECK(kg_bench_mark_on_gpu(&tmp, &mk, "GPU-b", note, sizeof note) == &mk && !note[0]);
}

int main(void)
{
    test_bench_on_gpu();
    test_offsets();
    test_xgpu();
    test_history_band();
    return kg_test_done("test_fleet");
}
