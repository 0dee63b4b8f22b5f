/* kg_fill_host: the host side of the counter-based fills (kgate/fill_element.h; the device side
 * is fill.cu). Compiled with -ffp-contract=off (gates/CMakeLists.txt) so no FMA changes a bit. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "kgate/fill_element.h"

int kg_fill_check(kg_dtype dtype, size_t n, kg_fill_dist dist, double a, double b, bool dev);

int kg_fill_check(kg_dtype dtype, size_t n, kg_fill_dist dist, double a, double b, bool dev)
{
    const char *fn = dev ? "kg_fill_device" : "kg_fill_host";
    if (dtype != KG_DTYPE_F32 && dtype != KG_DTYPE_BF16 && dtype != KG_DTYPE_F16 &&
        dtype != KG_DTYPE_I32)
        return KG_ERR(KG_EINVAL, "%s: dtype %s: f32, bf16, f16 or i32", fn, kg_dtype_name(dtype));
    if (dist != KG_FILL_UNIFORM && dist != KG_FILL_NORMAL)
        return KG_ERR(KG_EINVAL, "%s: unknown distribution %d", fn, (int)dist);
    if (dist == KG_FILL_UNIFORM && !(a < b && b - a < 1e300))
        return KG_ERR(KG_EINVAL, "%s: uniform [a, b) needs finite a < b, got [%g, %g)", fn, a, b);
    if (dist == KG_FILL_UNIFORM && dtype == KG_DTYPE_I32 &&
        !(a >= -2147483648.0 && b <= 2147483648.0))
        return KG_ERR(KG_EINVAL, "%s: i32 uniform [%g, %g) beyond int32", fn, a, b);
    if (dist == KG_FILL_NORMAL && !(b > 0 && b < 1e300 && a > -1e300 && a < 1e300))
        return KG_ERR(KG_EINVAL, "%s: normal needs a finite mean and sd > 0, got (%g, %g)", fn, a,
                      b);
    KG_UNUSED(n);
    return 0;
}

/* One slice [i0, i1) of a fill: each element is a function of (seed, its index) alone, so any
 * split over threads writes the same bits as one loop. */
typedef struct {
    void *dst;
    kg_dtype dtype;
    size_t offset, i0, i1;
    uint64_t seed;
    int dist;
    double a, b;
} fl_slice;

static void fl_run(const fl_slice *s)
{
    if (kg_dtype_size(s->dtype) == 4) {
        uint32_t *d = s->dst;
        for (size_t i = s->i0; i < s->i1; i++)
            d[i] = kg_fill_element(s->seed, s->offset + i, s->dtype, s->dist, s->a, s->b);
    } else {
        uint16_t *d = s->dst;
        for (size_t i = s->i0; i < s->i1; i++)
            d[i] = (uint16_t)kg_fill_element(s->seed, s->offset + i, s->dtype, s->dist, s->a, s->b);
    }
}

enum { KG_PAR_MAX_THREADS = 16 };

int kg_par_threads(void)
{
    const char *e = getenv("KGATE_THREADS");
    long hw = sysconf(_SC_NPROCESSORS_ONLN);
    if (e && e[0]) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == '\0' && v >= 1)
            return v > KG_PAR_MAX_THREADS ? KG_PAR_MAX_THREADS : (int)v;
    }
    return hw < 2 ? 1 : hw > KG_PAR_MAX_THREADS ? KG_PAR_MAX_THREADS : (int)hw;
}

/* Thread t runs slices t, t + nt, t + 2 nt, ...: which thread ran a slice changes nothing. */
typedef struct {
    size_t n, parts, first, step;
    kg_par_fn fn;
    void *ctx;
} kg_par_job;

static void *kg_par_run(void *arg)
{
    const kg_par_job *j = arg;
    for (size_t k = j->first; k < j->parts; k += j->step)
        j->fn(j->ctx, j->n * k / j->parts, j->n * (k + 1) / j->parts, k);
    return NULL;
}

void kg_par_for(size_t n, size_t parts, kg_par_fn fn, void *ctx)
{
    size_t nt = (size_t)kg_par_threads();
    nt = nt > parts ? parts : nt;
    kg_par_job job[KG_PAR_MAX_THREADS];
    pthread_t th[KG_PAR_MAX_THREADS];
    bool started[KG_PAR_MAX_THREADS] = { false };
    for (size_t t = 0; t < nt; t++) {
        job[t] = (kg_par_job){ .n = n,
                               .parts = parts,
                               .first = t,
                               .step = nt,
                               .fn = fn,
                               .ctx = ctx };
        started[t] = t > 0 && pthread_create(&th[t], NULL, kg_par_run, &job[t]) == 0;
    }
    for (size_t t = 0; t < nt; t++)
        if (!started[t])
            kg_par_run(&job[t]);
    for (size_t t = 1; t < nt; t++)
        if (started[t])
            pthread_join(th[t], NULL);
}

static void fl_part(void *ctx, size_t i0, size_t i1, size_t part)
{
    fl_slice s = *(const fl_slice *)ctx;
    KG_UNUSED(part);
    s.i0 = i0, s.i1 = i1;
    fl_run(&s);
}

/* Large fills (a reference's host inputs: 134 M values for softmax 32768x4096) over the host
 * threads, one slice each; an element does not depend on the split. */
static void fl_parallel(const fl_slice *all)
{
    size_t parts = all->i1 >= ((size_t)1 << 20) ? (size_t)kg_par_threads() : 1;
    kg_par_for(all->i1, parts, fl_part, (void *)all);
}

int kg_fill_host_at(void *dst, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                    kg_fill_dist dist, double a, double b)
{
    int rc = kg_fill_check(dtype, n, dist, a, b, false);
    if (rc < 0)
        return rc;
    if (n && !dst)
        return KG_ERR(KG_EINVAL, "kg_fill_host: NULL destination");
    if (offset > SIZE_MAX - n)
        return KG_ERR(KG_EINVAL, "kg_fill_host_at: offset %zu + n %zu overflows", offset, n);
    fl_slice all = { .dst = dst,
                     .dtype = dtype,
                     .offset = offset,
                     .i0 = 0,
                     .i1 = n,
                     .seed = seed,
                     .dist = (int)dist,
                     .a = a,
                     .b = b };
    fl_parallel(&all);
    return 0;
}

int kg_fill_host(void *dst, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist, double a,
                 double b)
{
    return kg_fill_host_at(dst, dtype, 0, n, seed, dist, a, b);
}
