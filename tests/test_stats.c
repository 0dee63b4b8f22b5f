/* Statistics on known vectors: quantiles, MAD, the order-statistic CI of the median (against
 * binomial tables), Mann-Whitney U, the seeded bootstrap and the paired ratio. */
#include <math.h>
#include <string.h>
#include "core/kg_core.h"
#include "kg_test.h"
#include "core/stats.h"

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_quantiles(void)
{
    double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 4, 1, 3, 2 };
    CHECK(kg_stats_median(odd, 5) == 3.0);
    CHECK(kg_stats_median(even, 4) == 2.5);
    CHECK(odd[0] == 5); /* input untouched */
    CHECK(isnan(kg_stats_median(odd, 0)));
    double s[] = { 1, 2, 3, 4, 5 };
    CHECK(kg_stats_quantile_sorted(s, 5, 0.25) == 2.0);
    CHECK(kg_stats_quantile_sorted(s, 5, 0.75) == 4.0);
    CHECK(NEAR(kg_stats_quantile_sorted(s, 5, 0.1), 1.4, 1e-12));
    CHECK(kg_stats_quantile_sorted(s, 5, 0) == 1 && kg_stats_quantile_sorted(s, 5, 1) == 5);

    kg_summary sm;
    double x[] = { 1, 2, 3, 4, 100 };
    CHECK(kg_stats_summarize(&sm, x, 5, 0.95) == 0);
    CHECK(sm.median == 3 && sm.mad == 1 && sm.q1 == 2 && sm.q3 == 4 && sm.iqr == 2);
    CHECK(sm.min == 1 && sm.max == 100 && NEAR(sm.mean, 22, 1e-12));
    CHECK(sm.ci_lo == 1 && sm.ci_hi == 100 && NEAR(sm.ci_coverage, 1 - 2.0 / 32, 1e-12));
    CHECK(kg_stats_summarize(&sm, x, 0, 0.95) == KG_EINVAL);
    double bad[] = { 1, NAN, 2 };
    CHECK(kg_stats_summarize(&sm, bad, 3, 0.95) == KG_EINVAL);
}

static void test_median_ci(void)
{
    double s[200];
    double lo, hi;
    size_t jl, jh;
    for (int i = 0; i < 200; i++)
        s[i] = i + 1;
    /* n = 10, 95%: ranks 2 and 9, coverage 1 - 2 * 11/1024. */
    double cov = kg_stats_median_ci_sorted(s, 10, 0.95, &lo, &hi, &jl, &jh);
    CHECK(lo == 2 && hi == 9 && jl == 2 && jh == 9);
    CHECK(NEAR(cov, 1 - 22.0 / 1024, 1e-12));
    /* n = 100, 95%: ranks 40 and 61 (standard tables). */
    cov = kg_stats_median_ci_sorted(s, 100, 0.95, &lo, &hi, &jl, &jh);
    CHECK_MSG(jl == 40 && jh == 61, "n=100: ranks %zu..%zu, want 40..61", jl, jh);
    CHECK(cov >= 0.95 && cov < 0.97);
    /* n = 15 (the engine's minimum), 95%: ranks 4 and 12. */
    cov = kg_stats_median_ci_sorted(s, 15, 0.95, &lo, &hi, &jl, &jh);
    CHECK_MSG(jl == 4 && jh == 12 && cov >= 0.95, "n=15: ranks %zu..%zu cov %g", jl, jh, cov);
    /* n = 5: too few for 95%: [min, max], coverage 15/16. */
    cov = kg_stats_median_ci_sorted(s, 5, 0.95, &lo, &hi, NULL, NULL);
    CHECK(lo == 1 && hi == 5 && NEAR(cov, 0.9375, 1e-12));
    /* Large n: coverage stays near the level (log-space binomial, no underflow). */
    double big[3000];
    for (int i = 0; i < 3000; i++)
        big[i] = i;
    cov = kg_stats_median_ci_sorted(big, 3000, 0.95, &lo, &hi, &jl, &jh);
    CHECK_MSG(cov >= 0.95 && cov < 0.96 && jl > 1400 && jh < 1600, "n=3000: %zu..%zu cov %g", jl,
              jh, cov);
    CHECK(NEAR(kg_stats_binom_half_cdf(10, 1), 11.0 / 1024, 1e-15));
    CHECK(kg_stats_binom_half_cdf(10, 10) == 1.0);
}

static void test_mann_whitney(void)
{
    kg_mwu_result u;
    double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
    CHECK(kg_stats_mann_whitney(&u, a, 5, b, 5) == 0);
    CHECK(u.u == 0 && u.prob_a_greater == 0);
    /* z = (0 - 12.5 + 0.5) / sqrt(25 * 11 / 12); two-sided p = 0.01219 (scipy, asymptotic). */
    CHECK_MSG(NEAR(u.p_two, 0.012186, 2e-5), "p_two %g", u.p_two);
    CHECK(u.p_less < 0.01 && u.p_greater > 0.99);
    CHECK(kg_stats_mann_whitney(&u, b, 5, a, 5) == 0 && u.u == 25 && u.p_greater < 0.01);
    double t[] = { 3, 3, 3, 3 };
    CHECK(kg_stats_mann_whitney(&u, t, 4, t, 4) == 0 && u.p_two == 1.0);
    CHECK(kg_stats_mann_whitney(&u, a, 0, b, 5) == KG_EINVAL);
    /* Ties across the sets get average ranks: {1,2,2} vs {2,3}: U_a = 0 + 0.5 + 0.5 = 1. */
    double c[] = { 1, 2, 2 }, d[] = { 2, 3 };
    CHECK(kg_stats_mann_whitney(&u, c, 3, d, 2) == 0 && NEAR(u.u, 1.0, 1e-12));
}

static void fill(double *x, size_t n, double centre, double noise, uint64_t seed)
{
    kg_rng g;
    kg_rng_seed(&g, seed, 7);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < 4; k++)
            s += (double)(kg_rng_next(&g) >> 11) * 0x1p-53 - 0.5;
        x[i] = centre * (1 + noise * s);
    }
}

static void test_bootstrap_and_paired(void)
{
    double a[60], b[60], r1, l1, h1, r2, l2, h2;
    fill(a, 60, 100, 0.01, 1);
    fill(b, 60, 110, 0.01, 2);
    CHECK(kg_stats_bootstrap_median_ratio(&r1, &l1, &h1, a, 60, b, 60, 1000, 0.95, 42) == 0);
    CHECK(kg_stats_bootstrap_median_ratio(&r2, &l2, &h2, a, 60, b, 60, 1000, 0.95, 42) == 0);
    CHECK(r1 == r2 && l1 == l2 && h1 == h2); /* fixed seed: reproducible */
    CHECK_MSG(l1 <= r1 && r1 <= h1 && l1 > 1.09 && h1 < 1.11, "ratio %g [%g, %g]", r1, l1, h1);
    CHECK(kg_stats_bootstrap_median_ratio(&r1, &l1, &h1, a, 0, b, 60, 1000, 0.95, 1) == KG_EINVAL);

    kg_paired_ratio p;
    double pa[10], pb[10];
    for (int i = 0; i < 10; i++) {
        pa[i] = 100 + i;
        pb[i] = pa[i] * (1.05 + 0.001 * (i % 3));
    }
    CHECK(kg_stats_paired_ratio(&p, pa, pb, 10, 0.95) == 0);
    CHECK(p.n == 10 && p.above == 10 && p.below == 0);
    CHECK(NEAR(p.median, 1.051, 1e-9) && p.ci_lo > 1.0 && p.ci_hi < 1.06);
    CHECK(NEAR(p.p_sign, 2.0 / 1024, 1e-12));
    CHECK(p.geomean > 1.05 && p.geomean < 1.052);
    pb[3] = 0;
    CHECK(kg_stats_paired_ratio(&p, pa, pb, 10, 0.95) == KG_EINVAL);
}

int main(void)
{
    test_quantiles();
    test_median_ci();
    test_mann_whitney();
    test_bootstrap_and_paired();
    return kg_test_done("test_stats");
}
