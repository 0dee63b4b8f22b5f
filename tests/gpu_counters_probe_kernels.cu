// Two toy kernels whose counters follow from first principles (tests/gpu_counters_probe.c):
// a copy of n floats (DRAM read = write = 4n bytes when n*4 exceeds L2), and an FMA loop
// (k FFMA per thread, one 4-byte store per thread), and a wmma loop (k 16x16x16 bf16 MMAs per
// warp, fp32 accumulate: 2*16^3 = 8192 tensor FLOPs each, one 16x16 fp32 tile stored).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

__global__ void kg_probe_copy_kernel(const float *__restrict__ in, float *__restrict__ out,
                                     size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

__global__ void kg_probe_fma_kernel(float *__restrict__ out, float a, float b, int k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = (float)(i & 1023) * 1e-3f;
    for (int j = 0; j < k; j++)
        x = fmaf(x, a, b); // a, b and k are runtime values: nothing folds
    out[i] = x;
}

extern "C" int kg_probe_copy(const float *in, float *out, size_t n, cudaStream_t s)
{
    kg_probe_copy_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(in, out, n);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int kg_probe_fma(float *out, float a, float b, int k, size_t n, cudaStream_t s)
{
    kg_probe_fma_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(out, a, b, k, n);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

// One warp per 16x16 tile of out; a and b are one 16x16 tile each, reused k times.
__global__ void kg_probe_wmma_kernel(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *out,
                                     int k)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    for (int j = 0; j < k; j++) // k is a runtime value: every MMA executes
        wmma::mma_sync(acc, fa, fb, acc);
    size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    wmma::store_matrix_sync(out + warp * 256, acc, 16, wmma::mem_row_major);
}

// warps must be a multiple of 4 (128-thread blocks); out holds warps * 256 floats.
extern "C" int kg_probe_wmma(const void *a, const void *b, float *out, int k, size_t warps,
                             cudaStream_t s)
{
    kg_probe_wmma_kernel<<<(unsigned)(warps / 4), 128, 0, s>>>((const __nv_bfloat16 *)a,
                                                               (const __nv_bfloat16 *)b, out, k);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

// Reads n floats and stores nothing (unless a value is NaN with a sign the fill never makes):
// its DRAM reads say whether the buffer was in the L2, its DRAM writes are the L2's own.
__global__ void kg_probe_read_kernel(const float *__restrict__ in, float *__restrict__ sink,
                                     size_t n)
{
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        acc += in[i];
    if (acc == -12345.678f)
        *sink = acc;
}

extern "C" int kg_probe_read(const float *in, float *sink, size_t n, cudaStream_t s)
{
    kg_probe_read_kernel<<<264, 256, 0, s>>>(in, sink, n);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
