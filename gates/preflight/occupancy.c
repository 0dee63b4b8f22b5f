/* Theoretical occupancy from per-architecture limits (CUDA C++ Programming Guide, "Compute
 * Capabilities", tables 30-32 "Technical Specifications per Compute Capability"; allocation rules
 * as in the toolkit's cuda_occupancy.h, which the unit test cross-checks for every row below).
 * Default shared-memory carveout: the largest one, as the driver picks it when the kernel needs
 * it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "core/kg_core.h"
#include "preflight/occupancy.h"

#define KIB 1024

/* Per row, from the guide: threads, blocks and (threads / 32) warps per SM, 64 K registers per SM
 * and per block, 255 registers per thread, shared memory per SM (the largest carveout) and per
 * block (opt-in). From cuda_occupancy.h: register allocation unit 256 per warp and 4
 * sub-partitions (every major >= 7), shared memory granularity (256 B on sm_7x, 128 B from sm_80),
 * the per-block reserve (reservedSharedMemPerBlock: none on sm_75, 1 KiB from sm_80). sm_110 is
 * Jetson Thor (sm_101 before CUDA 13), sm_121 DGX Spark (GB10). */
static const kg_arch_limits arch_table[] = {
    /* arch warp thr/SM blk/SM thr/blk regs/SM regs/blk maxreg unit subp smem/SM optin rsv gran */
    { 75, 32, 1024, 16, 1024, 65536, 65536, 255, 256, 4, 64 * KIB, 64 * KIB, 0, 256 },
    { 80, 32, 2048, 32, 1024, 65536, 65536, 255, 256, 4, 164 * KIB, 163 * KIB, KIB, 128 },
    { 86, 32, 1536, 16, 1024, 65536, 65536, 255, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 },
    { 87, 32, 1536, 16, 1024, 65536, 65536, 255, 256, 4, 164 * KIB, 163 * KIB, KIB, 128 },
    { 89, 32, 1536, 24, 1024, 65536, 65536, 255, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 },
    { 90, 32, 2048, 32, 1024, 65536, 65536, 255, 256, 4, 228 * KIB, 227 * KIB, KIB, 128 },
    { 100, 32, 2048, 32, 1024, 65536, 65536, 255, 256, 4, 228 * KIB, 227 * KIB, KIB, 128 },
    { 103, 32, 2048, 32, 1024, 65536, 65536, 255, 256, 4, 228 * KIB, 227 * KIB, KIB, 128 },
    { 110, 32, 1536, 24, 1024, 65536, 65536, 255, 256, 4, 228 * KIB, 227 * KIB, KIB, 128 },
    { 120, 32, 1536, 24, 1024, 65536, 65536, 255, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 },
    { 121, 32, 1536, 24, 1024, 65536, 65536, 255, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 },
};
static const int arch_list[] = { 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121 };

int kg_arch_limits_get(kg_arch_limits *out, int arch)
{
    for (size_t i = 0; i < KG_ARRAY_LEN(arch_table); i++)
        if (arch_table[i].arch == arch) {
            *out = arch_table[i];
            return 0;
        }
    return KG_ERR(KG_ENOTFOUND,
                  "sm_%d: no occupancy limits known (known: sm_75, sm_80, sm_86, "
                  "sm_87, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121)",
                  arch);
}

int kg_arch_limits_known(const int **archs)
{
    *archs = arch_list;
    return (int)KG_ARRAY_LEN(arch_list);
}

const char *kg_limiter_name(kg_limiter l)
{
    switch (l) {
    case KG_LIMIT_NONE: return "none";
    case KG_LIMIT_WARPS: return "warps";
    case KG_LIMIT_BLOCKS: return "blocks";
    case KG_LIMIT_REGS: return "registers";
    case KG_LIMIT_SMEM: return "shared memory";
    }
    return "?";
}

static int round_up(int v, int unit) { return (v + unit - 1) / unit * unit; }
static int imin(int a, int b) { return a < b ? a : b; }

static int blocks_by_regs(const kg_arch_limits *L, int warps_per_block, int regs)
{
    if (regs <= 0)
        return INT_MAX;
    if (regs > L->max_regs_thread)
        return 0;
    int per_warp = round_up(regs * L->warp_size, L->reg_alloc_unit);
    /* The hardware checks the per-block limit as if every sub-partition got the block's warps. */
    if (per_warp * round_up(warps_per_block, L->sub_partitions) > L->regs_block ||
        per_warp * warps_per_block > L->regs_block)
        return 0;
    int warps_per_sub = (L->regs_sm / L->sub_partitions) / per_warp;
    return warps_per_sub * L->sub_partitions / warps_per_block;
}

static int blocks_by_smem(const kg_arch_limits *L, size_t static_smem, size_t dynamic_smem)
{
    size_t total = static_smem + dynamic_smem + (size_t)L->smem_reserved_block;
    size_t alloc = (size_t)round_up((int)total, L->smem_alloc_unit);
    /* The static path assumes the case opted in (cudaFuncSetAttribute) when it needs > 48 KiB;
     * like the toolkit's calculator, the allocation (reserve included) is compared with the
     * opt-in limit plus the reserve. */
    if (alloc > (size_t)L->smem_block_optin + (size_t)L->smem_reserved_block)
        return 0;
    return alloc ? (int)((size_t)L->smem_sm / alloc) : INT_MAX;
}

int kg_occupancy_calc(kg_occupancy *o, const kg_arch_limits *L, int block_threads,
                      int regs_per_thread, size_t static_smem, size_t dynamic_smem)
{
    memset(o, 0, sizeof *o);
    if (block_threads <= 0 || regs_per_thread < 0)
        return KG_ERR(KG_EINVAL, "occupancy: block of %d threads with %d registers/thread",
                      block_threads, regs_per_thread);
    int warps_per_block = (block_threads + L->warp_size - 1) / L->warp_size;
    int max_warps = L->max_threads_sm / L->warp_size;
    o->by_warps = block_threads > L->max_threads_block ? 0 : max_warps / warps_per_block;
    o->by_blocks = L->max_blocks_sm;
    o->by_regs = blocks_by_regs(L, warps_per_block, regs_per_thread);
    o->by_smem = blocks_by_smem(L, static_smem, dynamic_smem);
    o->blocks_per_sm = imin(imin(o->by_warps, o->by_blocks), imin(o->by_regs, o->by_smem));
    o->active_warps = o->blocks_per_sm * warps_per_block;
    o->occupancy = (double)o->active_warps / max_warps;
    /* Name one limiter: the first resource, in this order, that alone gives the minimum. */
    if (o->blocks_per_sm == 0)
        o->limiter = KG_LIMIT_NONE;
    else if (o->by_regs == o->blocks_per_sm)
        o->limiter = KG_LIMIT_REGS;
    else if (o->by_smem == o->blocks_per_sm)
        o->limiter = KG_LIMIT_SMEM;
    else if (o->by_warps == o->blocks_per_sm)
        o->limiter = KG_LIMIT_WARPS;
    else
        o->limiter = KG_LIMIT_BLOCKS;

    /* Register headroom: how many registers/thread can be added before blocks/SM drops. */
    o->reg_headroom = -1;
    o->next_step_blocks = o->blocks_per_sm;
    for (int r = regs_per_thread + 1; o->blocks_per_sm > 0 && r <= L->max_regs_thread; r++) {
        int b = imin(imin(o->by_warps, o->by_blocks),
                     imin(blocks_by_regs(L, warps_per_block, r), o->by_smem));
        if (b < o->blocks_per_sm) {
            o->reg_headroom = r - 1 - regs_per_thread;
            o->next_step_blocks = b;
            break;
        }
    }

    char head[96];
    if (o->reg_headroom >= 0)
        snprintf(head, sizeof head, "%d register%s below the step to %d block%s/SM",
                 o->reg_headroom, o->reg_headroom == 1 ? "" : "s", o->next_step_blocks,
                 o->next_step_blocks == 1 ? "" : "s");
    else
        snprintf(head, sizeof head, "no register step below %d/thread", L->max_regs_thread);
    switch (o->limiter) {
    case KG_LIMIT_NONE:
        snprintf(o->words, sizeof o->words,
                 "cannot launch: %d threads, %d registers/thread, %zu B shared memory per block "
                 "exceed sm_%d limits",
                 block_threads, regs_per_thread, static_smem + dynamic_smem, L->arch);
        break;
    case KG_LIMIT_REGS:
        snprintf(o->words, sizeof o->words, "registers: %d/thread caps %d block%s/SM, %s",
                 regs_per_thread, o->blocks_per_sm, o->blocks_per_sm == 1 ? "" : "s", head);
        break;
    case KG_LIMIT_SMEM:
        snprintf(o->words, sizeof o->words,
                 "shared memory: %zu B/block (+%d B reserved) caps %d block%s/SM; %s",
                 static_smem + dynamic_smem, L->smem_reserved_block, o->blocks_per_sm,
                 o->blocks_per_sm == 1 ? "" : "s", head);
        break;
    case KG_LIMIT_WARPS:
        snprintf(o->words, sizeof o->words, "warps: %d threads/block caps %d block%s/SM; %s",
                 block_threads, o->blocks_per_sm, o->blocks_per_sm == 1 ? "" : "s", head);
        break;
    case KG_LIMIT_BLOCKS:
        snprintf(o->words, sizeof o->words, "blocks: the sm_%d limit of %d blocks/SM; %s", L->arch,
                 o->blocks_per_sm, head);
        break;
    }
    return 0;
}
