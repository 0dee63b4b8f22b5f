/* axpy: out = a*x + y in fp32.
 *
 * The simplest memory-bound case: 8 bytes read and 4 written per element, no reuse, so the
 * only thing that matters is issuing wide, coalesced loads. The kernel is OUT-OF-PLACE (it
 * never overwrites x or y), which makes every launch a pure function of the inputs: kgate
 * launches it many times in a row and the output must be the same every time.
 *
 * Alignment: none required from the caller beyond cudaMalloc's (x, y, out are 256-byte
 * aligned, so the float4 main loop is always aligned); n may be any value >= 1, the n % 4
 * leftover elements go through a scalar tail.
 */
#include <stdlib.h>
#include <string.h>
#include "cases.h"
#include "axpy_impl.cuh"

/* Device code: axpy_impl.cuh (shared with the defect twins; this is the reference policy). */
__global__ void __launch_bounds__(KG_AXPY_BLOCK)
    axpy_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                float *__restrict__ out, size_t n)
{
    axpy_body<axpy_ref_policy>(a, x, y, out, n);
}

/* Blocks needed to give every float4 one thread, capped; depends on n only. */
extern "C" unsigned kg_axpy_grid(size_t n)
{
    size_t n4 = n / 4;
    size_t g = kg_ceil_div(n4 > 0 ? n4 : 1, KG_AXPY_BLOCK);
    return (unsigned)(g > KG_AXPY_MAX_GRID ? KG_AXPY_MAX_GRID : g);
}

extern "C" int kg_axpy_launch(float a, const float *x, const float *y, float *out, size_t n,
                              cudaStream_t s)
{
    return axpy_launch_with(axpy_kernel, a, x, y, out, n, s);
}

/* CPU float64 reference: out[i] = a*x[i] + y[i] with the exact fp32 inputs. */
extern "C" void kg_axpy_reference_f64(float a, const float *x, const float *y, double *out,
                                      size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (double)a * (double)x[i] + (double)y[i];
}

/* ---- case callbacks -------------------------------------------------------------------- */

extern "C" void kg_axpy_teardown(void *state)
{
    kg_axpy_state *st = (kg_axpy_state *)state;
    if (!st)
        return;
    cudaFree(st->x);
    cudaFree(st->y);
    cudaFree(st->out);
    free(st->x_host);
    free(st->y_host);
    free(st);
}

/* The state and the seed of its inputs: the device holds x and y (kg_fill_device); the host
 * copies the CPU reference reads are made from the same seeds when it first runs. */
typedef struct {
    kg_axpy_state st; /* first: the state pointer the case API hands around */
    uint64_t seed;
} axpy_priv;

static uint64_t axpy_seed(uint64_t seed, unsigned buffer)
{
    return seed ^ (uint64_t)buffer * 0x9e3779b97f4a7c15ull;
}

extern "C" int kg_axpy_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const kg_axpy_params *p = (const kg_axpy_params *)args->params;
    axpy_priv *pv = NULL;
    kg_axpy_state *st = NULL;
    size_t bytes;

    if (!p || p->n == 0) {
        rc = kg_error_set(KG_EINVAL, __FILE__, __LINE__, "axpy: n must be >= 1");
        goto cleanup;
    }
    pv = (axpy_priv *)calloc(1, sizeof(*pv));
    if (!pv) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "axpy: out of host memory");
        goto cleanup;
    }
    st = &pv->st;
    pv->seed = args->seed;
    st->n = p->n;
    bytes = p->n * sizeof(float);
    /* One seed per buffer so x, y and a are independent of each other and of n. */
    KG_TRY(
        kg_fill_host(&st->a, KG_DTYPE_F32, 1, axpy_seed(args->seed, 3), KG_FILL_UNIFORM, 0.5, 2.0));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->x, bytes));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->y, bytes));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->out, bytes));
    KG_TRY(kg_fill_device(st->x, KG_DTYPE_F32, p->n, axpy_seed(args->seed, 1), KG_FILL_UNIFORM,
                          -1.0, 1.0, args->stream));
    KG_TRY(kg_fill_device(st->y, KG_DTYPE_F32, p->n, axpy_seed(args->seed, 2), KG_FILL_UNIFORM,
                          -1.0, 1.0, args->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(args->stream));

    io->out = st->out;
    io->out_count = st->n;
    io->out_dtype = KG_DTYPE_F32;
    io->rows = 0;
    *state = st;
    st = NULL;
cleanup:
    kg_axpy_teardown(st);
    return rc;
}

/* The host copies of x and y, the device's values (kg_fill_host, same seeds). */
static int axpy_host_inputs(kg_axpy_state *st)
{
    int rc = 0;
    const uint64_t seed = ((axpy_priv *)st)->seed;
    if (st->x_host)
        return 0;
    if (!(st->x_host = (float *)malloc(st->n * sizeof(float))) ||
        !(st->y_host = (float *)malloc(st->n * sizeof(float)))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__,
                          "axpy: out of host memory for the "
                          "reference's inputs (n=%zu)",
                          st->n);
        goto cleanup;
    }
    KG_TRY(kg_fill_host(st->x_host, KG_DTYPE_F32, st->n, axpy_seed(seed, 1), KG_FILL_UNIFORM, -1.0,
                        1.0));
    KG_TRY(kg_fill_host(st->y_host, KG_DTYPE_F32, st->n, axpy_seed(seed, 2), KG_FILL_UNIFORM, -1.0,
                        1.0));
cleanup:
    if (rc < 0) {
        free(st->x_host);
        free(st->y_host);
        st->x_host = st->y_host = NULL;
    }
    return rc;
}

static int axpy_launch(void *state, cudaStream_t stream)
{
    kg_axpy_state *st = (kg_axpy_state *)state;
    return kg_axpy_launch(st->a, st->x, st->y, st->out, st->n, stream);
}

extern "C" int kg_axpy_reference(void *state, cudaStream_t stream, void *ref_host)
{
    kg_axpy_state *st = (kg_axpy_state *)state; /* of kg_axpy_setup */
    (void)stream;
    int rc = axpy_host_inputs(st);
    if (rc < 0)
        return rc;
    kg_axpy_reference_f64(st->a, st->x_host, st->y_host, (double *)ref_host, st->n);
    return 0;
}

/* ---- cases ----------------------------------------------------------------------------- */

static const kg_kernel_ref axpy_kernels[] = { KG_KERNEL(axpy_kernel, KG_AXPY_BLOCK, 0) };

static const kg_axpy_params axpy_p1 = { 1 };
static const kg_axpy_params axpy_p4097 = { 4097 };
static const kg_axpy_params axpy_p1m = { (1u << 20) + 3 };
static const kg_axpy_params axpy_p32m = { (1u << 25) + 1 };

/* Parity: each output is one fp32 FMA of exact fp32 inputs, so |out - ref| <= 0.5 ulp(out)
 * <= 2^-24 * |a*x+y| < 2^-24 * 3 ~ 1.8e-7 (|a| < 2, |x|,|y| < 1). max_abs 1e-6 leaves ~5x
 * margin; the relative L2 error of correctly rounded fp32 is ~3e-8, so 1e-6 is 30x margin
 * and any wrong or missing element (a NaN from the poisoned output) fails. */
/* -> KG_AXPY_PARITY = (max_abs 1e-6, rel_l2 1e-6, cosine 0.9999999), in cases.h. */

#define AXPY_CASE(ID, P)                                                                  \
    {                                                                                     \
        /* .id */ ID, /* .op */ "axpy", /* .params */ &(P), kg_axpy_setup, axpy_launch,   \
            kg_axpy_reference, kg_axpy_teardown, KG_DTYPE_F64, "cpu-f64", KG_AXPY_PARITY, \
            /* bytes: read x and y, write out */ 12.0 * (double)(P).n, /* .flops */ 0.0,  \
            axpy_kernels, 1, 0, NULL, NULL, NULL                                          \
    }

extern "C" const kg_case_desc kg_axpy_cases[] = {
    AXPY_CASE("axpy/n=1/f32", axpy_p1),
    AXPY_CASE("axpy/n=4097/f32", axpy_p4097),
    AXPY_CASE("axpy/n=1048579/f32", axpy_p1m),
    /* 384 MiB moved per launch: the large-end bandwidth case. */
    AXPY_CASE("axpy/n=33554433/f32", axpy_p32m),
};
extern "C" const size_t kg_axpy_n_cases = sizeof(kg_axpy_cases) / sizeof(kg_axpy_cases[0]);
