/* Robust statistics for the bench gate and `kgate ab`: medians, spreads, a distribution-free
 * confidence interval of the median (order statistics), a two-sample test (Mann-Whitney U), a
 * seeded bootstrap of the median ratio, and a paired ratio for A/B rounds. Pure CPU code. */
#ifndef KG_STATS_H
#define KG_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Quantile q in [0,1] of sorted data (linear interpolation between order statistics, the
 * "type 7" definition of R and numpy). NaN when n == 0. */
double kg_stats_quantile_sorted(const double *sorted, size_t n, double q);
/* Median of unsorted data (copies; the input is left as is). NaN when n == 0 or no memory. */
double kg_stats_median(const double *x, size_t n);
/* Sort ascending in place. */
void kg_stats_sort(double *x, size_t n);

/* Distribution-free CI of the median from order statistics: the narrowest symmetric pair
 * (x_(j), x_(n+1-j)) whose binomial(n, 1/2) coverage is >= level. With too few samples for the
 * level, [min, max] and its (lower) coverage. 1-based ranks are returned in *j_lo and *j_hi
 * (may be NULL). Returns the achieved coverage (NaN when n == 0). */
double kg_stats_median_ci_sorted(const double *sorted, size_t n, double level, double *lo,
                                 double *hi, size_t *j_lo, size_t *j_hi);

typedef struct {
    size_t n;
    double median;
    double mad;         /* median absolute deviation from the median (unscaled) */
    double q1, q3, iqr; /* quartiles (type 7) and q3 - q1 */
    double min, max, mean;
    double ci_lo, ci_hi; /* CI of the median at ci_level, from order statistics */
    double ci_level;     /* level asked for */
    double ci_coverage;  /* coverage actually achieved (>= ci_level once n is large enough) */
    double ci_rel_width; /* (ci_hi - ci_lo) / median */
} kg_summary;

/* Summary of n samples (n >= 1). Returns 0, KG_EINVAL for n == 0 or a non-finite sample,
 * KG_ENOMEM. */
int kg_stats_summarize(kg_summary *out, const double *x, size_t n, double ci_level);

typedef struct {
    double u;              /* U statistic of sample a */
    double z;              /* normal approximation with tie and continuity corrections */
    double p_two;          /* two-sided p-value */
    double p_greater;      /* one-sided p-value for "a tends to be greater than b" */
    double p_less;         /* one-sided p-value for "a tends to be less than b" */
    double prob_a_greater; /* U / (na * nb): P(A > B) + P(A = B)/2 */
} kg_mwu_result;

/* Mann-Whitney U test (Wilcoxon rank-sum) of a against b. The normal approximation is good
 * for na, nb >= 8; below that the p-values are only indicative. KG_EINVAL when a sample set is
 * empty, KG_ENOMEM. */
int kg_stats_mann_whitney(kg_mwu_result *out, const double *a, size_t na, const double *b,
                          size_t nb);

/* Percentile bootstrap of median(b) / median(a): `iters` resamples from a fixed seed, so the
 * same data always gives the same interval. Returns 0 or KG_EINVAL / KG_ENOMEM. */
int kg_stats_bootstrap_median_ratio(double *ratio, double *lo, double *hi, const double *a,
                                    size_t na, const double *b, size_t nb, int iters, double level,
                                    uint64_t seed);

typedef struct {
    size_t n;
    double median;       /* median of the per-round ratios b_i / a_i */
    double ci_lo, ci_hi; /* order-statistic CI of that median */
    double ci_coverage;
    double geomean;   /* exp(mean(log(b_i / a_i))) */
    int above, below; /* rounds with ratio > 1 and < 1 */
    double p_sign;    /* two-sided sign test of "ratio = 1" */
} kg_paired_ratio;

/* Paired ratio b_i / a_i over n rounds (A and B measured back to back in each round). All
 * values must be finite and > 0. */
int kg_stats_paired_ratio(kg_paired_ratio *out, const double *a, const double *b, size_t n,
                          double level);

/* P(Binomial(n, 1/2) <= k). */
double kg_stats_binom_half_cdf(size_t n, size_t k);

#ifdef __cplusplus
}
#endif
#endif
