/* The bench gate, the clock probe, blocking and window-stamp kernels (clock_probe.c) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_CLOCK_PROBE_H
#define KG_CLOCK_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Timestamp kernel (clock_probe.c): load it for the current context (idempotent), then
 * launch: one thread spins ~span_ns of %globaltimer and writes {clock64 delta, ns delta}. */
int kg_clock_probe_init(void);
int kg_clock_probe_launch(unsigned long long *dev_out2, unsigned span_ns, cudaStream_t s);
/* The blocking kernel (same library): spins until flag[0] == want or timeout_ns have passed;
 * on a timeout it writes want to flag[1]. flag: a device pointer of host-mapped memory. */
int kg_block_wait_launch(unsigned *flag_dev, unsigned want, unsigned long long timeout_ns,
                         cudaStream_t s);
/* The window stamp (same library): `blocks` one-thread blocks, each writing {%clock64,
 * %globaltimer} of its SM to slots_dev[2 * smid] when smid < n_slots (an SM that no block
 * reached keeps what was there: the engine zeroes the slots first). */
int kg_clock_stamp_launch(unsigned long long *slots_dev, unsigned n_slots, unsigned blocks,
                          cudaStream_t s);
/* Random bf16 in [-1, 1) (never zero) from a seed into device memory (synchronizes s). */
int kg_bench_fill_bf16(uint16_t *dev, size_t n, uint64_t seed, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
