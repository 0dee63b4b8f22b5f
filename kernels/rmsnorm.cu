/* rmsnorm: y[r,c] = x[r,c] * rsqrt(mean_c(x[r,:]^2) + eps) * gamma[c], bf16 in/out.
 *
 * Storage is bf16, all arithmetic is fp32: the sum of squares, the inverse RMS and the
 * product x * rstd * gamma are fp32, and the only rounding to bf16 is the final store. That
 * promise is what the parity tolerance below is built on (see defects/ for what happens
 * when an intermediate is rounded to bf16 instead).
 *
 * One row per 256-thread block. Thread t handles columns t, t+256, ... (8 at a time through
 * 16-byte loads when cols % 8 == 0, one at a time otherwise), so the reduction order of a
 * row depends on cols only, never on the number of rows or on which block runs it: the
 * kernel is batch invariant by construction (launch_rows just launches fewer blocks).
 * Vectorized rows up to 8192 columns are held in registers (one DRAM read, rmsnorm_row_regs);
 * longer or unaligned rows are read twice (sum of squares, then normalize; the second read
 * mostly hits L2). Device code: rmsnorm_impl.cuh.
 *
 * Alignment: none beyond cudaMalloc's; cols % 8 == 0 takes the vector path (then every
 * row starts 16-byte aligned), any other cols >= 1 the scalar path.
 */
#include <stdlib.h>
#include <math.h>
#include "cases.h"
#include "par_rows.h"
#include "rmsnorm_impl.cuh"

/* In registers up to 8192 columns. Min 8 blocks/SM caps it at 32 registers (no spill): without
 * the cap ptxas takes 40 and the SM holds 6 rows in flight instead of 8. */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK, 8)
    rmsnorm_bf16_kernel(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
                        uint16_t *__restrict__ y, int cols, float eps)
{
    rmsnorm_rows<4>(x, w, y, cols, eps);
}

extern "C" int kg_rmsnorm_launch(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows,
                                 int cols, float eps, cudaStream_t s)
{
    int rc = 0;
    if (rows <= 0)
        return 0;
    rmsnorm_bf16_kernel<<<rows, KG_RMSNORM_BLOCK, 0, s>>>(x, w, y, cols, eps);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- case callbacks -------------------------------------------------------------------- */

extern "C" void kg_rmsnorm_teardown(void *state)
{
    kg_rmsnorm_state *st = (kg_rmsnorm_state *)state;
    if (!st)
        return;
    cudaFree(st->x);
    cudaFree(st->w);
    cudaFree(st->y);
    free(st->x_host);
    free(st->w_host);
    free(st);
}

/* The state and the seed of its inputs: the device holds them (kg_fill_device), the host
 * copy the CPU reference reads is made from the same seed when the reference first runs. */
typedef struct {
    kg_rmsnorm_state st; /* first: the state pointer the case API hands around */
    uint64_t seed;
} rmsnorm_priv;

static uint64_t rmsnorm_seed(uint64_t seed, unsigned buffer)
{
    return seed ^ (uint64_t)buffer * 0x9e3779b97f4a7c15ull;
}

extern "C" int kg_rmsnorm_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const kg_rmsnorm_params *p = (const kg_rmsnorm_params *)args->params;
    rmsnorm_priv *pv = NULL;
    kg_rmsnorm_state *st = NULL;
    size_t n;

    /* rows: one block each (grid.x limit 2^31-1). */
    if (!p || p->rows < 1 || p->cols < 1) {
        rc = kg_error_set(KG_EINVAL, __FILE__, __LINE__, "rmsnorm: rows and cols must be >= 1");
        goto cleanup;
    }
    n = (size_t)p->rows * (size_t)p->cols;
    pv = (rmsnorm_priv *)calloc(1, sizeof(*pv));
    if (!pv) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "rmsnorm: out of host memory");
        goto cleanup;
    }
    st = &pv->st;
    pv->seed = args->seed;
    st->rows = p->rows;
    st->cols = p->cols;
    st->eps = 1e-5f;
    KG_CUDA_CHECK(cudaMalloc((void **)&st->x, n * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->w, (size_t)p->cols * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->y, n * 2));
    /* gamma in [-1,1) keeps |y| < 2 in practice (|x| < 1, rstd ~ sqrt(3)), which the
     * max_abs bound of the parity policy relies on. */
    KG_TRY(kg_fill_device(st->x, KG_DTYPE_BF16, n, rmsnorm_seed(args->seed, 1), KG_FILL_UNIFORM,
                          -1.0, 1.0, args->stream));
    KG_TRY(kg_fill_device(st->w, KG_DTYPE_BF16, (size_t)p->cols, rmsnorm_seed(args->seed, 2),
                          KG_FILL_UNIFORM, -1.0, 1.0, args->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(args->stream));

    io->out = st->y;
    io->out_count = n;
    io->out_dtype = KG_DTYPE_BF16;
    io->rows = (size_t)p->rows;
    *state = st;
    st = NULL;
cleanup:
    kg_rmsnorm_teardown(st);
    return rc;
}

/* The host copies of x and gamma, the same values as the device's (kg_fill_host, same seeds). */
static int rmsnorm_host_inputs(kg_rmsnorm_state *st)
{
    int rc = 0;
    const uint64_t seed = ((rmsnorm_priv *)st)->seed;
    const size_t n = (size_t)st->rows * (size_t)st->cols;
    if (st->x_host)
        return 0;
    if (!(st->x_host = (uint16_t *)malloc(n * 2)) ||
        !(st->w_host = (uint16_t *)malloc((size_t)st->cols * 2))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__,
                          "rmsnorm: out of host memory for the "
                          "reference's inputs (%zu values)",
                          n);
        goto cleanup;
    }
    KG_TRY(kg_fill_host(st->x_host, KG_DTYPE_BF16, n, rmsnorm_seed(seed, 1), KG_FILL_UNIFORM, -1.0,
                        1.0));
    KG_TRY(kg_fill_host(st->w_host, KG_DTYPE_BF16, (size_t)st->cols, rmsnorm_seed(seed, 2),
                        KG_FILL_UNIFORM, -1.0, 1.0));
cleanup:
    if (rc < 0) {
        free(st->x_host);
        free(st->w_host);
        st->x_host = st->w_host = NULL;
    }
    return rc;
}

static int rmsnorm_launch(void *state, cudaStream_t stream)
{
    kg_rmsnorm_state *st = (kg_rmsnorm_state *)state;
    return kg_rmsnorm_launch(st->x, st->w, st->y, st->rows, st->cols, st->eps, stream);
}

static int rmsnorm_launch_rows(void *state, int rows, cudaStream_t stream)
{
    kg_rmsnorm_state *st = (kg_rmsnorm_state *)state;
    if (rows < 0 || rows > st->rows)
        return kg_error_set(KG_EINVAL, __FILE__, __LINE__, "rmsnorm: rows %d out of [0,%d]", rows,
                            st->rows);
    return kg_rmsnorm_launch(st->x, st->w, st->y, rows, st->cols, st->eps, stream);
}

extern "C" int kg_rmsnorm_reference(void *state, cudaStream_t stream, void *ref_host)
{
    kg_rmsnorm_state *st = (kg_rmsnorm_state *)state;
    double *ref = (double *)ref_host;
    (void)stream;
    int rc = rmsnorm_host_inputs(st);
    if (rc < 0)
        return rc;
    kg_par_rows(st->rows, (size_t)st->rows * st->cols, [st, ref](int r0, int r1) {
        for (int r = r0; r < r1; r++) {
            const uint16_t *xr = st->x_host + (size_t)r * st->cols;
            double ss = 0.0;
            for (int c = 0; c < st->cols; c++) {
                const double v = kg_bf16_to_f32(xr[c]);
                ss += v * v;
            }
            const double rstd = 1.0 / sqrt(ss / st->cols + (double)st->eps);
            for (int c = 0; c < st->cols; c++)
                ref[(size_t)r * st->cols + c] = (double)kg_bf16_to_f32(xr[c]) * rstd *
                                                (double)kg_bf16_to_f32(st->w_host[c]);
        }
    });
    return 0;
}

/* ---- cases ----------------------------------------------------------------------------- */

static const kg_kernel_ref rmsnorm_kernels[] = {
    KG_KERNEL(rmsnorm_bf16_kernel, KG_RMSNORM_BLOCK, 0),
};

static const kg_rmsnorm_params rmsnorm_p1 = { 1, 4096 };
static const kg_rmsnorm_params rmsnorm_p3 = { 3, 1000 };
static const kg_rmsnorm_params rmsnorm_podd = { 1000, 1027 };
static const kg_rmsnorm_params rmsnorm_p4k = { 4096, 4096 };
static const kg_rmsnorm_params rmsnorm_pbig = { 16384, 8192 };

/* Parity, bf16 output vs float64. With fp32 math the error is the final bf16 rounding,
 * at most half an ulp: |y| < 2 gives |err| <= 2^-8 = 3.9e-3 (+ ~1e-6 of fp32 error), and
 * the relative L2 error of uniform rounding is ~1.68e-3 (simulated: 1.675e-3..1.679e-3 over
 * cols 100..32768). Rounding one intermediate (e.g. x*rstd) to bf16 as well doubles the
 * worst error (7.7e-3) and raises rel_l2 to ~2.32e-3 (simulated), so:
 * max_abs 5.5e-3 (1.4x above the correct bound, 1.4x below the defect), rel_l2 2.0e-3. */
/* -> KG_RMSNORM_PARITY = (5.5e-3, 2.0e-3, 0.99999), in cases.h. */

#define RMSNORM_CASE(ID, P)                                                               \
    {                                                                                     \
        ID, "rmsnorm", &(P), kg_rmsnorm_setup, rmsnorm_launch, kg_rmsnorm_reference,      \
            kg_rmsnorm_teardown, KG_DTYPE_F64, "cpu-f64",                                 \
            KG_RMSNORM_PARITY, /* bytes: read x, read gamma, write y (bf16) */            \
            4.0 * (double)(P).rows *(double)(P).cols + 2.0 * (double)(P).cols, 0.0,       \
            rmsnorm_kernels, 1, /* .batch_invariant */ 1, rmsnorm_launch_rows, NULL, NULL \
    }

extern "C" const kg_case_desc kg_rmsnorm_cases[] = {
    RMSNORM_CASE("rmsnorm/rows=1,cols=4096/bf16", rmsnorm_p1),
    RMSNORM_CASE("rmsnorm/rows=3,cols=1000/bf16", rmsnorm_p3),
    RMSNORM_CASE("rmsnorm/rows=1000,cols=1027/bf16", rmsnorm_podd),
    RMSNORM_CASE("rmsnorm/rows=4096,cols=4096/bf16", rmsnorm_p4k),
    /* 512 MiB moved per launch: the large-end bandwidth case. */
    RMSNORM_CASE("rmsnorm/rows=16384,cols=8192/bf16", rmsnorm_pbig),
};
extern "C" const size_t kg_rmsnorm_n_cases = sizeof(kg_rmsnorm_cases) / sizeof(kg_rmsnorm_cases[0]);
