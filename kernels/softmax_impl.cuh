/* softmax device code (see softmax.cu for the contract): the general online two-pass row and
 * the register path, templated on the variant knobs so kernels/tools/kernel_speed.cu can time
 * the variants that lost (docs/measurements/h200-kernels.md) with the very same code, and on a policy so the
 * planted parity defect (defects/parity_defects.cu) is the same code with one knob turned. */
#ifndef KGATE_KERNELS_SOFTMAX_IMPL_CUH
#define KGATE_KERNELS_SOFTMAX_IMPL_CUH

#include <math.h>
#include "cases.h"
#include "common.cuh"

/* Policy: whether the row max is subtracted before exp. The reference does (no exp ever
 * overflows); the planted defect computes the textbook exp(x) / sum(exp(x)): its max is
 * pinned to 0, so above x ~ 88 exp overflows and the row becomes inf/inf = NaN and x/inf = 0. */
struct softmax_ref_policy {
    static constexpr bool kSubtractMax = true;
};
struct softmax_no_max_policy {
    static constexpr bool kSubtractMax = false;
};

/* Element and 16-byte vector access for the two storage types. */
static __device__ __forceinline__ float sm_load(const float *p, size_t i) { return p[i]; }
static __device__ __forceinline__ float sm_load(const uint16_t *p, size_t i)
{
    return kg_bf16_to_float(p[i]);
}
static __device__ __forceinline__ void sm_store(float *p, size_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void sm_store(uint16_t *p, size_t i, float v)
{
    p[i] = kg_float_to_bf16(v);
}
static __device__ __forceinline__ void sm_load_vec(const float *p, int i, float (&f)[4])
{
    const float4 v = reinterpret_cast<const float4 *>(p)[i];
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
}
static __device__ __forceinline__ void sm_load_vec(const uint16_t *p, int i, float (&f)[8])
{
    kg_unpack8(reinterpret_cast<const uint4 *>(p)[i], f);
}
static __device__ __forceinline__ void sm_store_vec(float *p, int i, const float (&f)[4])
{
    reinterpret_cast<float4 *>(p)[i] = make_float4(f[0], f[1], f[2], f[3]);
}
static __device__ __forceinline__ void sm_store_vec(uint16_t *p, int i, const float (&f)[8])
{
    reinterpret_cast<uint4 *>(p)[i] = kg_pack8(f);
}

/* Throughput note: with accurate expf and an IEEE division per element the bf16 kernel
 * was instruction-bound (1.7 TB/s on an H200, half of what its bytes allow). __expf
 * (ex2.approx of x*log2(e)) is within ~2 + 1.2|x| ulp, i.e. <= ~1e-6 relative for the
 * |x - max| <= 10 that carry the mass of a row, far inside the parity tolerance; for very
 * negative arguments its relative error grows but the values themselves are ~0.
 *
 * Add one value to a running (max, sum) pair. Only one exp per element: when v is not a
 * new max, add exp(v - m); when it is, rescale the old sum instead and add exp(0) = 1. */
static __device__ __forceinline__ void online_add(float &m, float &s, float v)
{
    if (v > m) {
        s = s * __expf(m - v) + 1.0f; /* m == -inf (empty) gives s = 0 * 0 + 1 */
        m = v;
    } else {
        s += __expf(v - m);
    }
}

/* Pass 1's per-element step under policy P: the online update, or (max pinned at 0) a plain
 * sum of exp(v). */
template <class P> static __device__ __forceinline__ void softmax_add(float &m, float &s, float v)
{
    if constexpr (P::kSubtractMax)
        online_add(m, s, v);
    else
        s += __expf(v);
}

/* Merge two (max, sum) pairs. Written so that two empty pairs (-inf, 0) merge to (-inf, 0)
 * instead of 0 * exp(-inf - -inf) = NaN (threads without columns when cols < 256). */
static __device__ __forceinline__ void online_merge(float &m, float &s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = (m == mm ? s : s * expf(m - mm)) + (m2 == mm ? s2 : s2 * expf(m2 - mm));
    m = mm;
}

/* Raw 16-byte vectors: the register path can hold rows packed (4 registers per vector). */
static __device__ __forceinline__ void sm_unpack(const float4 &v, float (&f)[4])
{
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
}
static __device__ __forceinline__ void sm_unpack(const uint4 &v, float (&f)[8])
{
    kg_unpack8(v, f);
}
template <typename T> struct sm_raw;
template <> struct sm_raw<float> {
    typedef float4 type;
};
template <> struct sm_raw<uint16_t> {
    typedef uint4 type;
};

/* Block-wide max / sum (Op) of NR values at once (one per row of the group), delivered to
 * every thread (as kg_block_allsum in common.cuh), one barrier for all NR rows. */
struct sm_max_op {
    static __device__ __forceinline__ float apply(float a, float b) { return fmaxf(a, b); }
};
struct sm_sum_op {
    static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
};
template <int NR, class Op>
static __device__ __forceinline__ void sm_group_reduce(float (&v)[NR],
                                                       float (*sh)[KG_SOFTMAX_BLOCK / 32])
{
#pragma unroll
    for (int q = 0; q < NR; q++)
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            v[q] = Op::apply(v[q], __shfl_xor_sync(0xffffffffu, v[q], o));
    if ((threadIdx.x & 31) == 0)
#pragma unroll
        for (int q = 0; q < NR; q++)
            sh[q][threadIdx.x >> 5] = v[q];
    __syncthreads();
#pragma unroll
    for (int q = 0; q < NR; q++) {
        v[q] = sh[q][0];
#pragma unroll
        for (int w = 1; w < KG_SOFTMAX_BLOCK / 32; w++)
            v[q] = Op::apply(v[q], sh[q][w]);
    }
}

/* Register path: the block owns NR consecutive rows (row0 = blockIdx.x * NR), each of up to
 * KG_SOFTMAX_BLOCK * R 16-byte vectors, all loaded up front (one DRAM read per element, every
 * load in flight at once); then the exact max, exp(x - max), the sum and the store, with the
 * NR rows sharing the two block barriers. KEEP holds the exp'd values as fp32 for the store
 * (one exp per element, more registers); !KEEP holds only the packed input and evaluates exp
 * again for the store (fewer registers, twice the exps). A row's arithmetic and its reduction
 * order depend on cols only, never on NR or on the other rows of its group. */
template <typename T, int VEC, int R, int NR, bool KEEP, class P = softmax_ref_policy>
static __device__ __forceinline__ void softmax_rows_regs(const T *__restrict__ x, T *__restrict__ y,
                                                         int rows, int cols)
{
    typedef typename sm_raw<T>::type V;
    __shared__ float s_m[NR][KG_SOFTMAX_BLOCK / 32], s_s[NR][KG_SOFTMAX_BLOCK / 32];
    const int nvec = cols / VEC;
    const size_t row0 = (size_t)blockIdx.x * NR;
    V raw[NR][R];
    bool ok[NR][R];
#pragma unroll
    for (int q = 0; q < NR; q++)
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = threadIdx.x + r * KG_SOFTMAX_BLOCK;
            ok[q][r] = row0 + q < (size_t)rows && i < nvec;
            if (ok[q][r])
                raw[q][r] = reinterpret_cast<const V *>(x)[(row0 + q) * nvec + i];
        }
    float m[NR], s[NR];
#pragma unroll
    for (int q = 0; q < NR; q++) {
        m[q] = P::kSubtractMax ? -INFINITY : 0.0f;
        s[q] = 0.0f;
    }
    if constexpr (KEEP) {
        float f[NR][R][VEC];
#pragma unroll
        for (int q = 0; q < NR; q++)
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (ok[q][r]) {
                    sm_unpack(raw[q][r], f[q][r]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        f[q][r][j] = -INFINITY; /* exp(-inf - max) = 0: adds nothing */
                }
                if constexpr (P::kSubtractMax) {
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        m[q] = fmaxf(m[q], f[q][r][j]);
                }
            }
        if constexpr (P::kSubtractMax)
            sm_group_reduce<NR, sm_max_op>(m, s_m);
#pragma unroll
        for (int q = 0; q < NR; q++)
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    f[q][r][j] = __expf(f[q][r][j] - m[q]);
                    s[q] += f[q][r][j];
                }
        sm_group_reduce<NR, sm_sum_op>(s, s_s);
#pragma unroll
        for (int q = 0; q < NR; q++) {
            const float inv = 1.0f / s[q];
#pragma unroll
            for (int r = 0; r < R; r++)
                if (ok[q][r]) {
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        f[q][r][j] *= inv;
                    sm_store_vec(y + (row0 + q) * cols, threadIdx.x + r * KG_SOFTMAX_BLOCK,
                                 f[q][r]);
                }
        }
    } else {
        if constexpr (P::kSubtractMax) {
#pragma unroll
            for (int q = 0; q < NR; q++)
#pragma unroll
                for (int r = 0; r < R; r++)
                    if (ok[q][r]) {
                        float f[VEC];
                        sm_unpack(raw[q][r], f);
#pragma unroll
                        for (int j = 0; j < VEC; j++)
                            m[q] = fmaxf(m[q], f[j]);
                    }
            sm_group_reduce<NR, sm_max_op>(m, s_m);
        }
#pragma unroll
        for (int q = 0; q < NR; q++)
#pragma unroll
            for (int r = 0; r < R; r++)
                if (ok[q][r]) {
                    float f[VEC];
                    sm_unpack(raw[q][r], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        s[q] += __expf(f[j] - m[q]);
                }
        sm_group_reduce<NR, sm_sum_op>(s, s_s);
#pragma unroll
        for (int q = 0; q < NR; q++) {
            const float inv = 1.0f / s[q];
#pragma unroll
            for (int r = 0; r < R; r++)
                if (ok[q][r]) {
                    float f[VEC];
                    sm_unpack(raw[q][r], f);
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        f[j] = __expf(f[j] - m[q]) * inv;
                    sm_store_vec(y + (row0 + q) * cols, threadIdx.x + r * KG_SOFTMAX_BLOCK, f);
                }
        }
    }
}

/* The general path (rows too long for registers, or not 16-byte vectorizable): online
 * (max, sum) pass, then a normalizing pass that re-reads the row. */
template <typename T, int VEC, class P = softmax_ref_policy>
static __device__ __forceinline__ void softmax_row(const T *__restrict__ x, T *__restrict__ y,
                                                   size_t row, int cols)
{
    __shared__ float s_m[KG_SOFTMAX_BLOCK / 32], s_s[KG_SOFTMAX_BLOCK / 32];
    const T *xr = x + row * (size_t)cols;
    T *yr = y + row * (size_t)cols;
    const bool vec = cols % VEC == 0;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    /* Pass 1: per-thread online (max, sum); without the max, (0, sum of exp(x)), which the
     * merge tree below then adds up as plain sums. */
    float m = P::kSubtractMax ? -INFINITY : 0.0f, s = 0.0f;
    if (vec) {
        for (int i = threadIdx.x; i < cols / VEC; i += KG_SOFTMAX_BLOCK) {
            float f[VEC];
            sm_load_vec(xr, i, f);
#pragma unroll
            for (int j = 0; j < VEC; j++)
                softmax_add<P>(m, s, f[j]);
        }
    } else {
        for (int i = threadIdx.x; i < cols; i += KG_SOFTMAX_BLOCK)
            softmax_add<P>(m, s, sm_load(xr, i));
    }
    /* Fixed merge tree: shuffle-down within the warp, then warp 0 merges the 8 warps. */
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_down_sync(0xffffffffu, m, o);
        const float s2 = __shfl_down_sync(0xffffffffu, s, o);
        online_merge(m, s, m2, s2);
    }
    if (lane == 0) {
        s_m[warp] = m;
        s_s[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
        m = lane < KG_SOFTMAX_BLOCK / 32 ? s_m[lane] : -INFINITY;
        s = lane < KG_SOFTMAX_BLOCK / 32 ? s_s[lane] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float m2 = __shfl_down_sync(0xffffffffu, m, o);
            const float s2 = __shfl_down_sync(0xffffffffu, s, o);
            online_merge(m, s, m2, s2);
        }
    }
    __syncthreads(); /* everyone has read s_m/s_s before thread 0 overwrites slot 0 */
    if (threadIdx.x == 0) {
        s_m[0] = m;
        s_s[0] = s;
    }
    __syncthreads();
    const float row_max = s_m[0], row_sum = s_s[0];

    /* Pass 2: normalize. One reciprocal per row instead of a division per element. */
    const float inv_sum = 1.0f / row_sum;
    if (vec) {
        for (int i = threadIdx.x; i < cols / VEC; i += KG_SOFTMAX_BLOCK) {
            float f[VEC];
            sm_load_vec(xr, i, f);
#pragma unroll
            for (int j = 0; j < VEC; j++)
                f[j] = __expf(f[j] - row_max) * inv_sum;
            sm_store_vec(yr, i, f);
        }
    } else {
        for (int i = threadIdx.x; i < cols; i += KG_SOFTMAX_BLOCK)
            sm_store(yr, i, __expf(sm_load(xr, i) - row_max) * inv_sum);
    }
    __syncthreads(); /* all reads of s_m/s_s done before the block's next row writes them */
}

/* The block owns rows blockIdx.x * NR .. + NR - 1 (grid = ceil(rows / NR)). Which path is a
 * function of cols only (uniform per launch), so batch invariance holds. */
template <typename T, int VEC, int R, int NR, bool KEEP, class P = softmax_ref_policy>
static __device__ __forceinline__ void softmax_rows(const T *__restrict__ x, T *__restrict__ y,
                                                    int rows, int cols)
{
    if (cols % VEC == 0 && cols / VEC <= KG_SOFTMAX_BLOCK * R) {
        softmax_rows_regs<T, VEC, R, NR, KEEP, P>(x, y, rows, cols);
        return;
    }
    for (int q = 0; q < NR; q++)
        if ((size_t)blockIdx.x * NR + q < (size_t)rows)
            softmax_row<T, VEC, P>(x, y, (size_t)blockIdx.x * NR + q, cols);
}

/* Variant choice (measured on an H200, docs/measurements/h200-kernels.md): one row per block, exp'd values kept
 * in registers: 32 registers, 8 blocks/SM, ~94% of the copy bandwidth for both dtypes. Two
 * rows per block measured the same for bf16 (52 registers, 4 blocks/SM); recomputing exp
 * for the store instead of keeping it lost 1-5%. */
#define SOFTMAX_F32_NR 1
#define SOFTMAX_BF16_NR 1

/* softmax_f32_kernel's body (in registers up to 4096 columns), under policy P: the planted
 * parity defect is this with softmax_no_max_policy. */
template <class P>
static __device__ __forceinline__ void softmax_f32_rows(const float *__restrict__ x,
                                                        float *__restrict__ y, int rows, int cols)
{
    softmax_rows<float, 4, 4, SOFTMAX_F32_NR, true, P>(x, y, rows, cols);
}

/* An fp32 softmax kernel's launch: one block per SOFTMAX_F32_NR rows, on `s` (host). */
typedef void (*softmax_f32_fn)(const float *, float *, int, int);
static inline int softmax_f32_launch_with(softmax_f32_fn k, const float *x, float *y, int rows,
                                          int cols, cudaStream_t s)
{
    int rc = 0;
    if (rows <= 0)
        return 0;
    k<<<(unsigned)kg_ceil_div((size_t)rows, SOFTMAX_F32_NR), KG_SOFTMAX_BLOCK, 0, s>>>(x, y, rows,
                                                                                       cols);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

#endif /* KGATE_KERNELS_SOFTMAX_IMPL_CUH */
