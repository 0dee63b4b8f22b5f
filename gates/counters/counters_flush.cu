/* Leave the L2 clean and cold before a profiled pass, as `ncu --cache-control all` does
 * (without it axpy n=33554433 counted 137.3 MB of DRAM writes where ncu counts
 * 115.9 MB: dirty lines of earlier work were written back inside the range).
 *
 * The CUDA runtime has no "flush and invalidate L2" call (cudaCtxResetPersistingL2Cache only
 * demotes persisting lines to normal ones). Writing a scratch buffer of L2 size would evict
 * the earlier lines but leave the L2 full of *dirty* scratch lines, whose write-backs then
 * land inside the range as soon as the profiled kernel's misses evict them: the same error.
 * So the flush only READS: every miss of a read allocates a clean line and evicts an older
 * one, and an evicted dirty line is written back then, during this kernel, before the range
 * starts (the caller synchronizes before it opens the range). Once enough has been read, the
 * L2 holds only clean scratch lines: the profiled kernel's own evictions cost no write-back
 * and its data is cold, as after ncu's invalidate. The scratch is 4x the L2, not 1x: the
 * replacement is not strict LRU, the address hash spreads lines unevenly over the slices,
 * and GH100's two L2 partitions can both hold a line; 4x of a 50 MiB L2 is ~0.2 GB, ~60 us
 * a pass at ~4 TB/s. The scratch is zeroed once when allocated (its lines are written back
 * by the first flush's reads), so the store below never runs but keeps the loads alive. */
#include <cuda_runtime.h>
#include "kgate/kgate.h"

__global__ void kg_ct_flush_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(p + i); /* L2 only: no L1 allocation */
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) /* never with a zeroed scratch; the compiler cannot know */
        *sink = acc;
}

extern "C" int kg_ct_l2_flush(const void *scratch, size_t bytes, unsigned *sink,
                              cudaStream_t stream)
{
    int rc = 0;
    size_t n = bytes / sizeof(uint4);
    int sms = 0, dev = 0;
    KG_CUDA_CHECK(cudaGetDevice(&dev));
    KG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KG_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    kg_ct_flush_kernel<<<(unsigned)(sms > 0 ? 8 * sms : 1024), 512, 0, stream>>>((const uint4 *)
                                                                                     scratch,
                                                                                 n, sink);
    KG_LAUNCH_CHECK();
    /* every stream: the write-backs of the evicted lines are done before the range opens */
    KG_CUDA_CHECK(cudaDeviceSynchronize());
cleanup:
    return rc;
}
