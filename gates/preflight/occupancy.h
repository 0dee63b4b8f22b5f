/* Theoretical occupancy from per-architecture limits: the CUDA occupancy calculator's rules
 * (register allocation per warp, sub-partitions, shared memory granularity and the per-block
 * reserve), so the preflight can judge a kernel without a GPU and cross-check the runtime's
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor when there is one. */
#ifndef KG_OCCUPANCY_H
#define KG_OCCUPANCY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int arch; /* 90 for sm_90 */
    int warp_size;
    int max_threads_sm;
    int max_blocks_sm;
    int max_threads_block;
    int regs_sm;
    int regs_block;
    int max_regs_thread;     /* 255 */
    int reg_alloc_unit;      /* registers per warp are allocated in units of this (256) */
    int sub_partitions;      /* the register file is split into this many (4) */
    int smem_sm;             /* largest shared memory carveout per SM, bytes */
    int smem_block_optin;    /* most a block may use after opting in, bytes */
    int smem_reserved_block; /* system reserve per block (none on sm_75, 1 KiB from sm_80) */
    int smem_alloc_unit;     /* shared memory granularity per block (256 B sm_75, else 128) */
} kg_arch_limits;

/* Limits of sm_<arch> (75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121); KG_ENOTFOUND, with
 * "sm_NN: no occupancy limits known (known: ...)", for an architecture not in the table. */
int kg_arch_limits_get(kg_arch_limits *out, int arch);
/* The architectures in the table, ascending; returns the count. */
int kg_arch_limits_known(const int **archs);

typedef enum {
    KG_LIMIT_NONE = 0, /* the block cannot launch at all (see words) */
    KG_LIMIT_WARPS,    /* threads/warps per SM */
    KG_LIMIT_BLOCKS,   /* resident blocks per SM */
    KG_LIMIT_REGS,
    KG_LIMIT_SMEM
} kg_limiter;

typedef struct {
    int blocks_per_sm;
    int active_warps;                          /* per SM */
    double occupancy;                          /* active warps / max warps */
    int by_warps, by_blocks, by_regs, by_smem; /* blocks/SM each resource alone allows */
    kg_limiter limiter;
    /* Registers per thread that can still be added before blocks/SM drops (0 when one more
     * register already drops it); -1 when no register count up to the maximum lowers it. */
    int reg_headroom;
    int next_step_blocks; /* blocks/SM after the step (when reg_headroom >= 0) */
    char words[200];      /* "registers: 96/thread caps 2 blocks/SM, ..." */
} kg_occupancy;

/* Occupancy of one launch configuration. Fails with KG_EINVAL on nonsense input; a block that
 * cannot launch (too many threads, registers or shared memory) gives blocks_per_sm 0. */
int kg_occupancy_calc(kg_occupancy *o, const kg_arch_limits *lim, int block_threads,
                      int regs_per_thread, size_t static_smem, size_t dynamic_smem);
const char *kg_limiter_name(kg_limiter l);

#ifdef __cplusplus
}
#endif
#endif
