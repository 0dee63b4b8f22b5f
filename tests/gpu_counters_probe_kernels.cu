// Two toy kernels whose counters follow from first principles (tests/gpu_counters_probe.c):
// a copy of n floats (DRAM read = write = 4n bytes when n*4 exceeds L2), and an FMA loop
// (k FFMA per thread, one 4-byte store per thread).
#include <cuda_runtime.h>

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
