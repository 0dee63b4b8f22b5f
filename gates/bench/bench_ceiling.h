/* The bench gate, the ceilings measured on the device (bench_ceiling.c) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_CEILING_H
#define KG_BENCH_CEILING_H

#include "bench/bench_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ceilings measured on this device in this run. */
typedef struct {
    double copy_gbps; /* device-to-device copy, bytes read + written per second / 1e9 */
    double copy_bytes;
    double gemm_tflops; /* bf16 cuBLAS GEMM, dense 2*M*N*K per second / 1e12 */
    int gemm_m, gemm_n, gemm_k;
    double copy_spread_rel; /* half the range of its samples / median (kg_ceiling_obs) */
    double gemm_spread_rel;
    double gemm_clock_scale; /* max SM clock / the GEMM's probe clock median (1: unknown) */
    cJSON *detail;           /* samples, clocks, kernel names */
} kg_bench_ceilings;
int kg_bench_measure_ceilings(kg_bench_ceilings *c, kg_bench_env *env, uint64_t seed,
                              const kg_bench_opts *o);
void kg_bench_ceilings_free(kg_bench_ceilings *c);

#ifdef __cplusplus
}
#endif
#endif
