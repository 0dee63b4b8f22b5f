/* The parity comparison over host threads (kg_par_for): the same figures, bit for bit, on 1
 * thread and on N; the same as the former serial loop (kept here as the oracle) bit for bit
 * up to one 1 M-element slice, and within rounding of the sums beyond; and kg_par_for runs
 * every slice exactly once whatever the thread count. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "parity/parity.h"
#include "kg_test.h"

/* The serial loop kg_parity_compare ran before it was split (its figures, not its messages). */
static void serial_compare(kg_parity_result *res, const float *out, const double *ref, size_t n,
                           const kg_parity_policy *p)
{
    memset(res, 0, sizeof *res);
    res->n = n;
    res->first_bad = SIZE_MAX;
    double diff2 = 0, ref2 = 0, out2 = 0, dot = 0;
    for (size_t i = 0; i < n; i++) {
        double o = out[i], r = ref[i];
        bool bad = false;
        if (!isfinite(o))
            res->nonfinite_out++, bad = true;
        if (!isfinite(r))
            res->nonfinite_ref++, bad = true;
        if (isfinite(o) && isfinite(r)) {
            double d = fabs(o - r);
            if (d > res->max_abs)
                res->max_abs = d, res->max_abs_at = i;
            if (d > p->max_abs)
                bad = true;
            diff2 += d * d;
            ref2 += r * r;
            out2 += o * o;
            dot += o * r;
        }
        if (bad && res->first_bad == SIZE_MAX)
            res->first_bad = i;
    }
    res->rel_l2 = ref2 > 0 ? sqrt(diff2) / sqrt(ref2) : (diff2 > 0 ? INFINITY : 0.0);
    res->cosine = dot / (sqrt(ref2) * sqrt(out2));
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static double urand(void) /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static kg_parity_result compare_on(int threads, const float *o, const double *r, size_t n,
                                   const kg_parity_policy *p)
{
    char t[8];
    kg_parity_result res;
    snprintf(t, sizeof t, "%d", threads);
    setenv("KGATE_THREADS", t, 1);
    CHECK(kg_par_threads() == threads);
    CHECK(kg_parity_compare(&res, o, KG_DTYPE_F32, r, KG_DTYPE_F64, n, p) == 0);
    return res;
}

static bool rel_close(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* Random output near a random reference, n elements; NaNs planted when `nan`. */
static void check_size(size_t n, bool nan)
{
    float *o = malloc(n * sizeof *o);
    double *r = malloc(n * sizeof *r);
    kg_parity_policy p = KG_PARITY_TOLERANCE_INIT(1e-3, 1e-3, 0.999);
    for (size_t i = 0; i < n; i++) {
        r[i] = urand() * 2 - 1;
        o[i] = (float)(r[i] + (urand() - 0.5) * 1e-4);
    }
    o[n / 3] = (float)(r[n / 3] + 0.25); /* the max, then a tie of it in a later slice */
    o[n - 2] = (float)(r[n - 2] + 0.25);
    if (nan)
        o[n / 2] = NAN, o[n - 1] = NAN;
    kg_parity_result s, one = compare_on(1, o, r, n, &p);
    serial_compare(&s, o, r, n, &p);
    static const int nts[] = { 2, 3, 7, 16 };
    for (size_t k = 0; k < sizeof nts / sizeof nts[0]; k++) {
        kg_parity_result m = compare_on(nts[k], o, r, n, &p);
        CHECK_MSG(memcmp(&m, &one, sizeof m) == 0, "n %zu: %d threads differ from 1", n, nts[k]);
    }
    CHECK(one.nonfinite_out == s.nonfinite_out && one.first_bad == s.first_bad);
    CHECK(one.max_abs == s.max_abs && one.max_abs_at == s.max_abs_at && one.pass == false);
    if (n <= ((size_t)1 << 20)) /* one slice: the serial loop's sums exactly */
        CHECK_MSG(one.rel_l2 == s.rel_l2 && one.cosine == s.cosine,
                  "n %zu: rel_l2 %.17g vs %.17g, cosine %.17g vs %.17g", n, one.rel_l2, s.rel_l2,
                  one.cosine, s.cosine);
    else
        CHECK(rel_close(one.rel_l2, s.rel_l2) && rel_close(one.cosine, s.cosine));
    free(o);
    free(r);
}

static void count_part(void *ctx, size_t i0, size_t i1, size_t part)
{
    unsigned char *seen = ctx;
    (void)part;
    for (size_t i = i0; i < i1; i++)
        seen[i]++;
}

static void check_par_for(void)
{
    enum { N = 1001 };
    static unsigned char seen[N];
    static const char *nts[] = { "1", "4", "16", "99", "junk" };
    for (size_t k = 0; k < sizeof nts / sizeof nts[0]; k++)
        for (size_t parts = 0; parts < 40; parts += 13) {
            setenv("KGATE_THREADS", nts[k], 1);
            memset(seen, 0, sizeof seen);
            kg_par_for(N, parts, count_part, seen);
            size_t once = 0;
            for (size_t i = 0; i < N; i++)
                once += seen[i] == (parts ? 1 : 0);
            CHECK_MSG(once == N, "KGATE_THREADS=%s, %zu parts: %zu of %d indices once", nts[k],
                      parts, once, N);
        }
    setenv("KGATE_THREADS", "99", 1);
    CHECK(kg_par_threads() == 16);
}

int main(void)
{
    check_par_for();
    check_size(1000, false);
    check_size((size_t)1 << 20, true);
    check_size(3 * ((size_t)1 << 20) + 12345, true);
    check_size(5 * ((size_t)1 << 20), false);
    return kg_test_done("test_parity_threads");
}
