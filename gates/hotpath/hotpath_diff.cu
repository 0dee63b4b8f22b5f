/* kg_hp_device_diff / kg_hp_device_compare: the byte comparison of two device buffers on the
 * GPU (hotpath_diff.h). Grid-stride over 8-byte words when both pointers are 8-byte aligned
 * (cudaMalloc gives 256), bytes otherwise; the count is summed and the first index min-reduced
 * with atomics only where a thread saw a difference, so equal buffers (the common case) cost
 * one read of each. kg_hp_device_compare also counts the poison elements of the first buffer
 * in the same pass (es = element size; es 0: not counted), summed only where a thread saw one. */
#include "kgate/kgate.h"
#include "hotpath/hotpath_diff.h"

#define HP_DIFF_BLOCK 256
#define HP_DIFF_MAX_GRID 4096

__device__ static void hp_diff_flush(unsigned long long *out, unsigned long long cnt,
                                     unsigned long long first, unsigned long long poison)
{
    if (cnt) {
        atomicAdd(&out[0], cnt);
        atomicMin(&out[1], first);
    }
    if (poison)
        atomicAdd(&out[2], poison);
}

__global__ void __launch_bounds__(HP_DIFF_BLOCK)
    hp_diff_words_kernel(const uint64_t *__restrict__ a, const uint64_t *__restrict__ b,
                         size_t words, unsigned es, kg_dtype dt, unsigned long long *out)
{
    unsigned long long cnt = 0, first = ~0ull, poison = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        const uint64_t wa = a[i], x = wa ^ b[i];
        if (x) {
            cnt += kg_hp_word_diff_bytes(x);
            if (first == ~0ull)
                first = i * 8 + kg_hp_word_first_byte(x);
        }
        if (es)
            poison += kg_hp_word_poison(wa, es, dt);
    }
    hp_diff_flush(out, cnt, first, poison);
}

/* Bytes [from, n); with es, each element starting in that range (at a multiple of es) is
 * classified from its es bytes. */
__global__ void __launch_bounds__(HP_DIFF_BLOCK)
    hp_diff_bytes_kernel(const unsigned char *__restrict__ a, const unsigned char *__restrict__ b,
                         size_t from, size_t n, unsigned es, kg_dtype dt, unsigned long long *out)
{
    unsigned long long cnt = 0, first = ~0ull, poison = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = from + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (a[i] != b[i]) {
            cnt++;
            if (first == ~0ull)
                first = i;
        }
        if (es && i % es == 0 && i + es <= n) {
            uint64_t v = 0;
            for (unsigned k = 0; k < es; k++)
                v |= (uint64_t)a[i + k] << (8 * k);
            poison += kg_hp_elem_poison(v, es, dt);
        }
    }
    hp_diff_flush(out, cnt, first, poison);
}

static unsigned hp_diff_grid(size_t n)
{
    size_t blocks = (n + HP_DIFF_BLOCK - 1) / HP_DIFF_BLOCK;
    return (unsigned)(blocks < 1 ? 1 : blocks < HP_DIFF_MAX_GRID ? blocks : HP_DIFF_MAX_GRID);
}

/* es 0: no poison count (scratch of 2 words), else scratch of 3. */
static int hp_diff_run(const void *a, const void *b, size_t n, unsigned es, kg_dtype dt,
                       unsigned long long *scratch, cudaStream_t s, kg_hp_diff *o)
{
    int rc = 0;
    unsigned long long got[3] = { 0ull, ~0ull, 0ull };
    size_t words = ((uintptr_t)a | (uintptr_t)b) % 8 == 0 ? n / 8 : 0;
    *o = (kg_hp_diff){ .first = SIZE_MAX, .elems = es ? n / es : 0 };
    if (n == 0)
        return 0;
    KG_CUDA_CHECK(cudaMemsetAsync(&scratch[0], 0, sizeof scratch[0], s));
    KG_CUDA_CHECK(cudaMemsetAsync(&scratch[1], 0xff, sizeof scratch[1], s));
    if (es)
        KG_CUDA_CHECK(cudaMemsetAsync(&scratch[2], 0, sizeof scratch[2], s));
    if (words) {
        hp_diff_words_kernel<<<hp_diff_grid(words), HP_DIFF_BLOCK, 0, s>>>((const uint64_t *)a,
                                                                           (const uint64_t *)b,
                                                                           words, es, dt, scratch);
        KG_LAUNCH_CHECK();
    }
    if (words * 8 < n) {
        hp_diff_bytes_kernel<<<hp_diff_grid(n - words * 8), HP_DIFF_BLOCK, 0,
                               s>>>((const unsigned char *)a, (const unsigned char *)b, words * 8,
                                    n, es, dt, scratch);
        KG_LAUNCH_CHECK();
    }
    KG_CUDA_CHECK(
        cudaMemcpyAsync(got, scratch, (es ? 3 : 2) * sizeof got[0], cudaMemcpyDeviceToHost, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    o->count = (size_t)got[0];
    o->first = got[0] ? (size_t)got[1] : SIZE_MAX;
    o->poison = (size_t)got[2];
cleanup:
    return rc;
}

extern "C" int kg_hp_device_diff(const void *a, const void *b, size_t n,
                                 unsigned long long *scratch, cudaStream_t s, size_t *first,
                                 size_t *count)
{
    kg_hp_diff o;
    int rc = hp_diff_run(a, b, n, 0, KG_DTYPE_U8, scratch, s, &o);
    *first = o.first;
    *count = o.count;
    return rc;
}

extern "C" int kg_hp_device_compare(const void *a, const void *b, size_t n, kg_dtype dt,
                                    unsigned long long *scratch, cudaStream_t s, kg_hp_diff *out)
{
    size_t es = kg_dtype_size(dt);
    if (es == 0 || n % es != 0)
        return kg_error_set(KG_EINVAL, __FILE__, __LINE__,
                            "device compare: %zu bytes are not "
                            "whole elements of dtype %d",
                            n, (int)dt);
    return hp_diff_run(a, b, n, (unsigned)es, dt, scratch, s, out);
}
