/* The preflight's occupancy calculator (gates/occupancy.c): every architecture's limits against
 * the Programming Guide's table and cuda_occupancy.h's own per-architecture constants,
 * hand-derived configurations, a sweep cross-checked against NVIDIA's header-only calculator
 * (cuda_occupancy.h) given the same per-architecture limits, and the static row of an
 * architecture without limits (a warning, never an error). */
#include <string.h>
#include <cuda_occupancy.h>
#include "core/kg_core.h"
#include "kg_test.h"
#include "preflight/occupancy.h"
#include "preflight/preflight_rows.h"

/* The CUDA C++ Programming Guide, "Compute Capabilities", tables 30 and 31 (CUDA 13): resident
 * threads and blocks per SM, shared memory per SM and per block (opt-in), KiB. */
static const struct {
    int arch, thr_sm, blk_sm, smem_sm_kib, optin_kib;
} guide[] = {
    { 75, 1024, 16, 64, 64 },    { 80, 2048, 32, 164, 163 },  { 86, 1536, 16, 100, 99 },
    { 87, 1536, 16, 164, 163 },  { 89, 1536, 24, 100, 99 },   { 90, 2048, 32, 228, 227 },
    { 100, 2048, 32, 228, 227 }, { 103, 2048, 32, 228, 227 }, { 110, 1536, 24, 228, 227 },
    { 120, 1536, 24, 100, 99 },  { 121, 1536, 24, 100, 99 },
};

static cudaOccDeviceProp occ_prop(const kg_arch_limits *L)
{
    cudaOccDeviceProp p;
    memset(&p, 0, sizeof p);
    p.computeMajor = L->arch / 10;
    p.computeMinor = L->arch % 10;
    return p;
}

/* One architecture's row: the guide's figures, and the constants cuda_occupancy.h keeps per
 * architecture (block limit, allocation units, sub-partitions, carveouts). */
static void check_limits(const kg_arch_limits *L)
{
    cudaOccDeviceProp p = occ_prop(L);
    int v = 0;
    size_t carve = (size_t)L->smem_sm;
    size_t gi = 0;
    while (gi < KG_ARRAY_LEN(guide) && guide[gi].arch != L->arch)
        gi++;
    CHECK_MSG(gi < KG_ARRAY_LEN(guide), "sm_%d: not in the guide's table", L->arch);
    if (gi == KG_ARRAY_LEN(guide))
        return;
    CHECK(L->warp_size == 32 && L->max_threads_block == 1024);
    CHECK(L->regs_sm == 65536 && L->regs_block == 65536 && L->max_regs_thread == 255);
    CHECK_MSG(L->max_threads_sm == guide[gi].thr_sm, "sm_%d threads/SM", L->arch);
    CHECK_MSG(L->max_blocks_sm == guide[gi].blk_sm, "sm_%d blocks/SM", L->arch);
    CHECK_MSG(L->smem_sm == guide[gi].smem_sm_kib * 1024, "sm_%d smem/SM", L->arch);
    CHECK_MSG(L->smem_block_optin == guide[gi].optin_kib * 1024, "sm_%d smem/block", L->arch);
    CHECK_MSG(L->smem_reserved_block == (L->arch >= 80 ? 1024 : 0), "sm_%d reserve", L->arch);
    CHECK(cudaOccMaxBlocksPerMultiprocessor(&v, &p) == CUDA_OCC_SUCCESS);
    CHECK_MSG(v == L->max_blocks_sm, "sm_%d: cuda_occupancy.h says %d blocks/SM", L->arch, v);
    CHECK(cudaOccSMemAllocationGranularity(&v, &p) == CUDA_OCC_SUCCESS);
    CHECK_MSG(v == L->smem_alloc_unit, "sm_%d: smem granularity %d", L->arch, v);
    CHECK(cudaOccRegAllocationGranularity(&v, &p) == CUDA_OCC_SUCCESS);
    CHECK_MSG(v == L->reg_alloc_unit, "sm_%d: register unit %d", L->arch, v);
    CHECK(cudaOccSubPartitionsPerMultiprocessor(&v, &p) == CUDA_OCC_SUCCESS);
    CHECK_MSG(v == L->sub_partitions, "sm_%d: %d sub-partitions", L->arch, v);
    CHECK(cudaOccRegAllocationMaxPerThread(&v, &p) == CUDA_OCC_SUCCESS);
    CHECK(L->max_regs_thread <= v);
    /* The largest carveout is one the header knows; one byte more is none. */
    CHECK(cudaOccAlignUpShmemSizeVoltaPlus(&carve, &p) == CUDA_OCC_SUCCESS);
    CHECK_MSG(carve == (size_t)L->smem_sm, "sm_%d: carveout %zu", L->arch, carve);
    carve = (size_t)L->smem_sm + 1;
    CHECK(cudaOccAlignUpShmemSizeVoltaPlus(&carve, &p) != CUDA_OCC_SUCCESS);
    CHECK(L->smem_block_optin + L->smem_reserved_block <= L->smem_sm);
}

/* A static row of a kernel in a hand-made cubin set: an architecture without limits warns and
 * still judges local memory; a known one is judged. */
static void check_static_rows(void)
{
    kg_cubin_kernel ck[] = {
        { "_Z4fastv", "fast", 88, 32, 0, -1, -1, -1, 0, 0, 0, 0 },
        { "_Z5spillv", "spill", 88, 255, 64, -1, -1, -1, 0, 0, 0, 0 },
        { "_Z4fastv", "fast", 120, 32, 0, -1, -1, -1, 0, 0, 0, 0 },
    };
    kg_cubin_set set;
    kg_pf_state st;
    kg_pf_row r;
    kg_kernel_ref fast = { NULL, "fast", 256, 0 }, spill = { NULL, "spill", 256, 0 };
    memset(&set, 0, sizeof set);
    memset(&st, 0, sizeof st);
    set.k = ck;
    set.n = KG_ARRAY_LEN(ck);
    st.cubins = &set;
    st.base_path = "resources.json";
    st.allow_path = "spills.json";

    memset(&r, 0, sizeof r);
    CHECK(kg_pf_static_row(&st, &r, &fast, 88) == 0);
    CHECK_MSG(r.v == KG_VERDICT_WARN, "sm_88: %s: %s", kg_verdict_name(r.v), r.reasons);
    CHECK_MSG(strstr(r.reasons, "sm_88: no occupancy limits known; occupancy not judged"), "%s",
              r.reasons);
    CHECK(strstr(r.occ.words, "sm_88") != NULL && r.blocks_per_sm == 0);
    memset(&r, 0, sizeof r);
    CHECK(kg_pf_static_row(&st, &r, &spill, 88) == 0);
    CHECK_MSG(r.v == KG_VERDICT_FAIL && strstr(r.reasons, "local memory: 64 B"), "%s", r.reasons);
    memset(&r, 0, sizeof r);
    CHECK(kg_pf_static_row(&st, &r, &fast, 120) == 0);
    CHECK_MSG(r.v == KG_VERDICT_WARN && strstr(r.reasons, "not in the resource baseline"), "%s",
              r.reasons);
    CHECK(r.blocks_per_sm == 6 && strstr(r.reasons, "no occupancy limits") == NULL);
}

static int nvidia_blocks(const kg_arch_limits *L, int threads, int regs, size_t smem, size_t dyn)
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
                                      ? (size_t)L->smem_block_optin - smem
                                      : 0;
    a.numBlockBarriers = 1;
    s.cacheConfig = CACHE_PREFER_NONE;
    s.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn) != CUDA_OCC_SUCCESS)
        return -1;
    /* The header's max-blocks limit of sm_90 etc. is its own table; ours must agree. */
    return r.activeBlocksPerMultiprocessor;
}

/* The newer and older architectures of the table (issue #17): sm_75, sm_100, sm_120. */
static void check_other_archs(void)
{
    kg_occupancy o;
    kg_arch_limits L75, L100, L120;
    CHECK(kg_arch_limits_get(&L75, 75) == 0 && kg_arch_limits_get(&L100, 100) == 0 &&
          kg_arch_limits_get(&L120, 120) == 0);
    /* sm_75: 256 threads x 32 regs: 32 warps/SM cap 4 blocks (registers allow 8); 40 KiB
     * of shared memory (no reserve, 256 B granularity) leaves 1 block of 64 KiB; 64 KiB is
     * the whole SM, one byte more cannot launch. */
    CHECK(kg_occupancy_calc(&o, &L75, 256, 32, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 4 && o.limiter == KG_LIMIT_WARPS && o.occupancy == 1.0);
    CHECK(kg_occupancy_calc(&o, &L75, 256, 20, 40960, 0) == 0);
    CHECK(o.blocks_per_sm == 1 && o.limiter == KG_LIMIT_SMEM);
    CHECK(kg_occupancy_calc(&o, &L75, 256, 20, 0, 65536) == 0 && o.blocks_per_sm == 1);
    CHECK(kg_occupancy_calc(&o, &L75, 256, 20, 0, 65537) == 0 && o.blocks_per_sm == 0);
    /* sm_100 as sm_90: 41984 B per block -> 5; sm_120: 24 blocks/SM, 48 warps. */
    CHECK(kg_occupancy_calc(&o, &L100, 256, 20, 40960, 0) == 0 && o.blocks_per_sm == 5);
    CHECK(kg_occupancy_calc(&o, &L120, 32, 16, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 24 && o.limiter == KG_LIMIT_BLOCKS);
    CHECK(kg_occupancy_calc(&o, &L120, 256, 32, 0, 0) == 0);
    CHECK(o.blocks_per_sm == 6 && o.limiter == KG_LIMIT_WARPS);
}

/* sm_90, sm_80 and sm_86 by hand: each limiter, the register headroom, cannot-launch. */
static void check_hand_cases(const kg_arch_limits *l90, const kg_arch_limits *l80,
                             const kg_arch_limits *l86)
{
    kg_arch_limits L90 = *l90, L80 = *l80, L86 = *l86;
    kg_occupancy o;
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
}

/* Sweep against cuda_occupancy.h for every architecture in the table. */
static void check_sweep(void)
{
    kg_occupancy o;
    const int *archs;
    int na = kg_arch_limits_known(&archs), mismatches = 0, compared = 0;
    static const int threads[] = { 1,   32,  33,  64,  96,  128,  192,  256,
                                   320, 384, 512, 640, 768, 1000, 1024, 1025 };
    static const int regs[] = {
        0, 8, 16, 24, 32, 33, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255
    };
    static const size_t smem[] = { 0,      1,      4096,   16384,  32768,  40960,  49152,
                                   65535,  65536,  65537,  100000, 101376, 101377, 160000,
                                   166912, 166913, 230000, 232448, 232449 };
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
                        fprintf(stderr,
                                "sm_%d %d thr %d regs %zu+%zu smem: ours %d, "
                                "cuda_occupancy.h %d\n",
                                L.arch, threads[t], regs[r], st, dyn, o.blocks_per_sm, want);
                }
    }
    CHECK_MSG(compared > 40000, "only %d configurations compared", compared);
    printf("test_preflight_occupancy: %d architectures, %d of %d configurations agree with "
           "cuda_occupancy.h\n",
           na, compared - mismatches, compared);
    CHECK_MSG(mismatches == 0, "%d of %d configurations differ from cuda_occupancy.h", mismatches,
              compared);
}

int main(void)
{
    kg_arch_limits L90, L80, L86;
    CHECK(kg_arch_limits_get(&L90, 90) == 0);
    CHECK(kg_arch_limits_get(&L80, 80) == 0);
    CHECK(kg_arch_limits_get(&L86, 86) == 0);
    CHECK(kg_arch_limits_get(&L90, 88) == KG_ENOTFOUND);
    CHECK(strstr(kg_error_last(), "sm_88: no occupancy limits known") != NULL);
    CHECK(kg_arch_limits_get(&L90, 70) == KG_ENOTFOUND);
    CHECK(kg_arch_limits_get(&L90, 130) == KG_ENOTFOUND);
    CHECK(kg_arch_limits_get(&L90, 90) == 0);
    {
        const int *known;
        int nk = kg_arch_limits_known(&known);
        CHECK_MSG(nk == (int)KG_ARRAY_LEN(guide), "%d architectures known", nk);
        for (int i = 0; i < nk; i++) {
            kg_arch_limits L;
            CHECK(kg_arch_limits_get(&L, known[i]) == 0 && L.arch == known[i]);
            CHECK(i == 0 || known[i] > known[i - 1]);
            check_limits(&L);
        }
    }
    check_static_rows();
    check_other_archs();
    check_hand_cases(&L90, &L80, &L86);
    check_sweep();
    return kg_test_done("test_preflight_occupancy");
}
