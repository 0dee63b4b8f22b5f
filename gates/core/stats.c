/* Robust statistics (see stats.h). Everything here is distribution-free or rank-based because
 * GPU timings are skewed (a floor plus a tail of slow samples), never normal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/stats.h"

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void kg_stats_sort(double *x, size_t n)
{
    if (n > 1)
        qsort(x, n, sizeof *x, cmp_double);
}

double kg_stats_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return s[0];
    if (q >= 1)
        return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t i = (size_t)floor(h);
    double f = h - (double)i;
    return i + 1 < n ? s[i] + f * (s[i + 1] - s[i]) : s[i];
}

double kg_stats_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, x, n * sizeof *c);
    kg_stats_sort(c, n);
    double m = kg_stats_quantile_sorted(c, n, 0.5);
    free(c);
    return m;
}

double kg_stats_binom_half_cdf(size_t n, size_t k)
{
    if (k >= n)
        return 1.0;
    /* Sum of pmf terms in log space: 2^-n underflows for n > ~1070. */
    double ln2n = (double)n * log(2.0), lgn = lgamma((double)n + 1.0), s = 0.0;
    for (size_t i = 0; i <= k; i++)
        s += exp(lgn - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0) - ln2n);
    return s > 1.0 ? 1.0 : s;
}

double kg_stats_median_ci_sorted(const double *s, size_t n, double level, double *lo, double *hi,
                                 size_t *j_lo, size_t *j_hi)
{
    if (n == 0) {
        *lo = *hi = NAN;
        return NAN;
    }
    /* Largest j with P(B <= j-1) <= (1-level)/2, B ~ Bin(n, 1/2): then the median lies in
     * [x_(j), x_(n+1-j)] with probability 1 - 2 P(B <= j-1) >= level. */
    double alpha2 = (1.0 - level) / 2.0, tail = 0.0, ln2n = (double)n * log(2.0);
    double lgn = lgamma((double)n + 1.0), cdf = 0.0;
    size_t j = 1;
    for (size_t i = 0; i + 1 <= n / 2; i++) {
        cdf += exp(lgn - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0) - ln2n);
        if (cdf > alpha2)
            break;
        j = i + 1; /* P(B <= j-1) = cdf <= alpha2 */
        tail = cdf;
    }
    *lo = s[j - 1];
    *hi = s[n - j];
    if (j_lo)
        *j_lo = j;
    if (j_hi)
        *j_hi = n + 1 - j;
    if (j == 1)
        tail = ldexp(1.0, -(int)(n < 1000 ? n : 1000)); /* P(B = 0) */
    return 1.0 - 2.0 * tail;
}

int kg_stats_summarize(kg_summary *out, const double *x, size_t n, double ci_level)
{
    int rc = 0;
    double *s = NULL, *d = NULL;
    memset(out, 0, sizeof *out);
    if (n == 0)
        return KG_ERR(KG_EINVAL, "statistics of an empty sample set");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return KG_ERR(KG_EINVAL, "statistics: sample %zu is not finite", i);
    s = malloc(n * sizeof *s);
    d = malloc(n * sizeof *d);
    if (!s || !d) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for statistics of %zu samples", n);
        goto cleanup;
    }
    memcpy(s, x, n * sizeof *s);
    kg_stats_sort(s, n);
    out->n = n;
    out->median = kg_stats_quantile_sorted(s, n, 0.5);
    out->q1 = kg_stats_quantile_sorted(s, n, 0.25);
    out->q3 = kg_stats_quantile_sorted(s, n, 0.75);
    out->iqr = out->q3 - out->q1;
    out->min = s[0];
    out->max = s[n - 1];
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += s[i];
        d[i] = fabs(s[i] - out->median);
    }
    out->mean = sum / (double)n;
    kg_stats_sort(d, n);
    out->mad = kg_stats_quantile_sorted(d, n, 0.5);
    out->ci_level = ci_level;
    out->ci_coverage = kg_stats_median_ci_sorted(s, n, ci_level, &out->ci_lo, &out->ci_hi, NULL,
                                                 NULL);
    out->ci_rel_width = out->median != 0 ? (out->ci_hi - out->ci_lo) / fabs(out->median) : INFINITY;
cleanup:
    free(s);
    free(d);
    return rc;
}

typedef struct {
    double v;
    int from_a;
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return (a->v > b->v) - (a->v < b->v);
}

int kg_stats_mann_whitney(kg_mwu_result *out, const double *a, size_t na, const double *b,
                          size_t nb)
{
    memset(out, 0, sizeof *out);
    if (na == 0 || nb == 0)
        return KG_ERR(KG_EINVAL, "Mann-Whitney U: empty sample set (%zu, %zu)", na, nb);
    size_t N = na + nb;
    ranked *r = malloc(N * sizeof *r);
    if (!r)
        return KG_ERR(KG_ENOMEM, "out of memory for a rank test of %zu samples", N);
    for (size_t i = 0; i < na; i++)
        r[i] = (ranked){ a[i], 1 };
    for (size_t i = 0; i < nb; i++)
        r[na + i] = (ranked){ b[i], 0 };
    qsort(r, N, sizeof *r, cmp_ranked);
    double rank_a = 0, ties = 0;
    for (size_t i = 0; i < N;) {
        size_t j = i;
        while (j + 1 < N && r[j + 1].v == r[i].v)
            j++;
        double avg = (double)(i + j) / 2.0 + 1.0, t = (double)(j - i + 1);
        for (size_t k = i; k <= j; k++)
            if (r[k].from_a)
                rank_a += avg;
        ties += t * t * t - t;
        i = j + 1;
    }
    free(r);
    double n1 = (double)na, n2 = (double)nb, Nd = (double)N;
    out->u = rank_a - n1 * (n1 + 1) / 2.0;
    out->prob_a_greater = out->u / (n1 * n2);
    double mu = n1 * n2 / 2.0;
    double var = n1 * n2 / 12.0 * ((Nd + 1.0) - ties / (Nd * (Nd - 1.0)));
    if (!(var > 0)) { /* every value tied: no evidence either way */
        out->z = 0;
        out->p_two = out->p_greater = out->p_less = 1.0;
        return 0;
    }
    double sd = sqrt(var), d = out->u - mu;
    double cc = d > 0 ? 0.5 : (d < 0 ? -0.5 : 0.0);
    out->z = (d - cc) / sd;
    out->p_two = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
    out->p_greater = 0.5 * erfc(((d - 0.5) / sd) / sqrt(2.0));
    out->p_less = 0.5 * erfc((-(d + 0.5) / sd) / sqrt(2.0));
    return 0;
}

static double resample_median(kg_rng *g, const double *x, size_t n, double *buf)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = x[kg_rng_next(g) % n];
    kg_stats_sort(buf, n);
    return kg_stats_quantile_sorted(buf, n, 0.5);
}

int kg_stats_bootstrap_median_ratio(double *ratio, double *lo, double *hi, const double *a,
                                    size_t na, const double *b, size_t nb, int iters, double level,
                                    uint64_t seed)
{
    int rc = 0;
    double *ba = NULL, *bb = NULL, *rs = NULL;
    kg_rng g;
    if (na == 0 || nb == 0 || iters < 10)
        return KG_ERR(KG_EINVAL, "bootstrap: empty sample set or fewer than 10 resamples");
    double ma = kg_stats_median(a, na), mb = kg_stats_median(b, nb);
    if (!(ma > 0) || !(mb > 0))
        return KG_ERR(KG_EINVAL, "bootstrap: medians must be > 0 (got %g, %g)", ma, mb);
    ba = malloc(na * sizeof *ba);
    bb = malloc(nb * sizeof *bb);
    rs = malloc((size_t)iters * sizeof *rs);
    if (!ba || !bb || !rs) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for a bootstrap");
        goto cleanup;
    }
    kg_rng_seed(&g, seed, 0x626f6f74 /* "boot" */);
    for (int i = 0; i < iters; i++)
        rs[i] = resample_median(&g, b, nb, bb) / resample_median(&g, a, na, ba);
    kg_stats_sort(rs, (size_t)iters);
    *ratio = mb / ma;
    *lo = kg_stats_quantile_sorted(rs, (size_t)iters, (1.0 - level) / 2.0);
    *hi = kg_stats_quantile_sorted(rs, (size_t)iters, 1.0 - (1.0 - level) / 2.0);
cleanup:
    free(ba);
    free(bb);
    free(rs);
    return rc;
}

int kg_stats_paired_ratio(kg_paired_ratio *out, const double *a, const double *b, size_t n,
                          double level)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return KG_ERR(KG_EINVAL, "paired ratio: no rounds");
    double *r = malloc(n * sizeof *r);
    if (!r)
        return KG_ERR(KG_ENOMEM, "out of memory for a paired ratio");
    double lsum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(a[i] > 0) || !(b[i] > 0) || !isfinite(a[i]) || !isfinite(b[i])) {
            free(r);
            return KG_ERR(KG_EINVAL,
                          "paired ratio: round %zu has a non-positive or non-finite "
                          "value (%g, %g)",
                          i, a[i], b[i]);
        }
        r[i] = b[i] / a[i];
        lsum += log(r[i]);
        out->above += r[i] > 1.0;
        out->below += r[i] < 1.0;
    }
    kg_stats_sort(r, n);
    out->n = n;
    out->median = kg_stats_quantile_sorted(r, n, 0.5);
    out->ci_coverage = kg_stats_median_ci_sorted(r, n, level, &out->ci_lo, &out->ci_hi, NULL, NULL);
    out->geomean = exp(lsum / (double)n);
    size_t m = (size_t)(out->above + out->below),
           k = (size_t)(out->above < out->below ? out->above : out->below);
    out->p_sign = m ? fmin(1.0, 2.0 * kg_stats_binom_half_cdf(m, k)) : 1.0;
    free(r);
    return 0;
}
