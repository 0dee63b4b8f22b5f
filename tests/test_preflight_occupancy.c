/* The preflight's occupancy calculator (gates/occupancy.c): hand-derived configurations, and a
 * sweep cross-checked against NVIDIA's header-only calculator (cuda_occupancy.h) given the
 * same per-architecture limits. */
#include <string.h>
#include <cuda_occupancy.h>
#include "core/kg_core.h"
#include "kg_test.h"
#include "preflight/occupancy.h"

static int nvidia_blocks(const kg_arch_limits *L, int threads, int regs, size_t smem,
                         size_t dyn)
{
    cudaOccDeviceProp p;
    cudaOccFuncAttributes a;
    cudaOccDeviceState s;
    cudaOccResult r;
    memset(&p, 0, sizeof p);
    memset(&a, 0, sizeof a);
    memset(&s, 0, sizeof s);
    memset(&r, 0, sizeof r);
    p.computeMajor = L->arch / 10;
    p.computeMinor = L->arch % 10;
    p.maxThreadsPerBlock = L->max_threads_block;
    p.maxThreadsPerMultiprocessor = L->max_threads_sm;
    p.regsPerBlock = L->regs_block;
    p.regsPerMultiprocessor = L->regs_sm;
    p.warpSize = L->warp_size;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerMultiprocessor = (size_t)L->smem_sm;
    p.numSms = 132;
    p.sharedMemPerBlockOptin = (size_t)L->smem_block_optin;
    p.reservedSharedMemPerBlock = (size_t)L->smem_reserved_block;
    a.maxThreadsPerBlock = L->max_threads_block;
    a.numRegs = regs;
    a.sharedSizeBytes = smem;
    a.partitionedGCConfig = PARTITIONED_GC_OFF;
    /* The static path assumes the kernel opted in to the largest dynamic shared memory. */
    a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a.maxDynamicSharedSizeBytes = (size_t)L->smem_block_optin > smem
                                      ? (size_t)L->smem_block_optin - smem : 0;
    a.numBlockBarriers = 1;
    s.cacheConfig = CACHE_PREFER_NONE;
    s.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn) != CUDA_OCC_SUCCESS)
        return -1;
    /* The header's max-blocks limit of sm_90 etc. is its own table; ours must agree. */
    return r.activeBlocksPerMultiprocessor;
}

int main(void)
{
    kg_arch_limits L90, L80, L86;
    kg_occupancy o;
    CHECK(kg_arch_limits_get(&L90, 90) == 0);
    CHECK(kg_arch_limits_get(&L80, 80) == 0);
    CHECK(kg_arch_limits_get(&L86, 86) == 0);
    CHECK(kg_arch_limits_get(&L90, 75) == KG_ENOTFOUND);
    CHECK(strstr(kg_error_last(), "sm_75") != NULL);
    CHECK(kg_arch_limits_get(&L90, 90) == 0);

    /* 256 threads, 96 regs: 3072 regs/warp, 5 warps per 16384-register sub-partition, 20
     * warps/SM -> 2 blocks of 8 warps, register-limited; up to 128 regs keeps 4 warps per
     * sub-partition (2 blocks); 129+ (136 allocated) gives 3 -> 1 block: headroom 32. */
    CHECK(kg_occupancy_calc(&o, &L90, 256, 96, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 2 && o.limiter == KG_LIMIT_REGS);
    CHECK(o.reg_headroom == 32 && o.next_step_blocks == 1);
    CHECK(o.active_warps == 16);
    CHECK_MSG(strstr(o.words, "registers: 96/thread caps 2 blocks/SM") != NULL, "%s", o.words);
    /* 256 threads, 32 regs: 8 blocks, warps and registers both at the limit (registers named
     * first); one more register (40 allocated) drops to 6 blocks: headroom 0. */
    CHECK(kg_occupancy_calc(&o, &L90, 256, 32, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 8 && o.reg_headroom == 0 && o.next_step_blocks == 6);
    /* 40 KiB static shared memory + 1 KiB reserve = 41984 B: 233472/41984 = 5 on sm_90,
     * 167936/41984 = 4 on sm_80. */
    CHECK(kg_occupancy_calc(&o, &L90, 256, 20, 40960, 0) == 0);
    CHECK(o.blocks_per_sm == 5 && o.limiter == KG_LIMIT_SMEM);
    CHECK(kg_occupancy_calc(&o, &L80, 256, 20, 40960, 0) == 0);
    CHECK(o.blocks_per_sm == 4 && o.limiter == KG_LIMIT_SMEM);
    /* Small blocks: the per-SM block limit (32 on sm_90, 16 on sm_86). */
    CHECK(kg_occupancy_calc(&o, &L90, 32, 16, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 32 && o.limiter == KG_LIMIT_BLOCKS);
    CHECK(kg_occupancy_calc(&o, &L86, 32, 16, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 16);
    /* Cannot launch: 1024 threads x 72 regs > 65536 registers per block; too much shared
     * memory; too many threads. */
    CHECK(kg_occupancy_calc(&o, &L90, 1024, 72, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 0 && o.limiter == KG_LIMIT_NONE);
    CHECK(strstr(o.words, "cannot launch") != NULL);
    CHECK(kg_occupancy_calc(&o, &L80, 128, 32, 0, 200 * 1024) == 0);
    CHECK(o.blocks_per_sm == 0);
    CHECK(kg_occupancy_calc(&o, &L90, 2048, 16, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 0);
    CHECK(kg_occupancy_calc(&o, &L90, 0, 16, 0, 0) == KG_EINVAL);

    /* Sweep against cuda_occupancy.h for every architecture in the table. */
    const int *archs;
    int na = kg_arch_limits_known(&archs), mismatches = 0, compared = 0;
    static const int threads[] = { 32, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024 };
    static const int regs[] = { 0, 8, 16, 24, 32, 33, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200,
                                255 };
    static const size_t smem[] = { 0, 1, 4096, 16384, 40960, 49152, 65536, 100000, 160000,
                                    230000 };
    for (int ai = 0; ai < na; ai++) {
        kg_arch_limits L;
        CHECK(kg_arch_limits_get(&L, archs[ai]) == 0);
        for (size_t t = 0; t < KG_ARRAY_LEN(threads); t++)
            for (size_t r = 0; r < KG_ARRAY_LEN(regs); r++)
                for (size_t m = 0; m < KG_ARRAY_LEN(smem); m++) {
                    size_t st = smem[m] / 2, dyn = smem[m] - st;
                    int want = nvidia_blocks(&L, threads[t], regs[r], st, dyn);
                    if (want < 0)
                        continue;
                    CHECK(kg_occupancy_calc(&o, &L, threads[t], regs[r], st, dyn) == 0);
                    compared++;
                    if (o.blocks_per_sm != want && mismatches++ < 10)
                        fprintf(stderr, "sm_%d %d thr %d regs %zu+%zu smem: ours %d, "
                                "cuda_occupancy.h %d\n", L.arch, threads[t], regs[r], st, dyn,
                                o.blocks_per_sm, want);
                }
    }
    CHECK_MSG(compared > 1000, "only %d configurations compared", compared);
    CHECK_MSG(mismatches == 0, "%d of %d configurations differ from cuda_occupancy.h",
              mismatches, compared);
    return kg_test_done("test_preflight_occupancy");
}
