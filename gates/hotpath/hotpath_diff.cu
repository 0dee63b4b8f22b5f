/* kg_hp_device_diff: the byte comparison of two device buffers on the GPU (hotpath_diff.h).
 * Grid-stride over 8-byte words when both pointers are 8-byte aligned (cudaMalloc gives 256),
 * bytes otherwise; the count is summed and the first index min-reduced with atomics only where
 * a thread saw a difference, so equal buffers (the common case) cost one read of each. */
#include "kgate/kgate.h"
#include "hotpath/hotpath_diff.h"

#define HP_DIFF_BLOCK 256
#define HP_DIFF_MAX_GRID 4096

__global__ void __launch_bounds__(HP_DIFF_BLOCK)
hp_diff_words_kernel(const uint64_t *__restrict__ a, const uint64_t *__restrict__ b,
                     size_t words, unsigned long long *out)
{
    unsigned long long cnt = 0, first = ~0ull;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        const uint64_t x = a[i] ^ b[i];
        if (x) {
            cnt += kg_hp_word_diff_bytes(x);
            if (first == ~0ull)
                first = i * 8 + kg_hp_word_first_byte(x);
        }
    }
    if (cnt) {
        atomicAdd(&out[0], cnt);
        atomicMin(&out[1], first);
    }
}

__global__ void __launch_bounds__(HP_DIFF_BLOCK)
hp_diff_bytes_kernel(const unsigned char *__restrict__ a, const unsigned char *__restrict__ b,
                     size_t from, size_t n, unsigned long long *out)
{
    unsigned long long cnt = 0, first = ~0ull;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = from + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (a[i] != b[i]) {
            cnt++;
            if (first == ~0ull)
                first = i;
        }
    if (cnt) {
        atomicAdd(&out[0], cnt);
        atomicMin(&out[1], first);
    }
}

static unsigned hp_diff_grid(size_t n)
{
    size_t blocks = (n + HP_DIFF_BLOCK - 1) / HP_DIFF_BLOCK;
    return (unsigned)(blocks < 1 ? 1 : blocks < HP_DIFF_MAX_GRID ? blocks : HP_DIFF_MAX_GRID);
}

extern "C" int kg_hp_device_diff(const void *a, const void *b, size_t n,
                                 unsigned long long *scratch, cudaStream_t s, size_t *first,
                                 size_t *count)
{
    int rc = 0;
    unsigned long long got[2] = { 0ull, ~0ull };
    size_t words = ((uintptr_t)a | (uintptr_t)b) % 8 == 0 ? n / 8 : 0;
    *first = SIZE_MAX;
    *count = 0;
    if (n == 0)
        return 0;
    KG_CUDA_CHECK(cudaMemsetAsync(&scratch[0], 0, sizeof scratch[0], s));
    KG_CUDA_CHECK(cudaMemsetAsync(&scratch[1], 0xff, sizeof scratch[1], s));
    if (words) {
        hp_diff_words_kernel<<<hp_diff_grid(words), HP_DIFF_BLOCK, 0, s>>>(
            (const uint64_t *)a, (const uint64_t *)b, words, scratch);
        KG_LAUNCH_CHECK();
    }
    if (words * 8 < n) {
        hp_diff_bytes_kernel<<<hp_diff_grid(n - words * 8), HP_DIFF_BLOCK, 0, s>>>(
            (const unsigned char *)a, (const unsigned char *)b, words * 8, n, scratch);
        KG_LAUNCH_CHECK();
    }
    KG_CUDA_CHECK(cudaMemcpyAsync(got, scratch, sizeof got, cudaMemcpyDeviceToHost, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    *count = (size_t)got[0];
    *first = got[0] ? (size_t)got[1] : SIZE_MAX;
cleanup:
    return rc;
}
