/* The bench gate, NVML: clocks, power, energy (bench_nvml.c) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_NVML_H
#define KG_BENCH_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include "bench/bench_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kg_nvml kg_nvml;
/* NULL (and no error) when libnvidia-ml.so.1 is absent. */
kg_nvml *kg_nvml_open(const char *uuid);
void kg_nvml_close(kg_nvml *n);
/* NVML's total energy since the driver loaded (mJ): nvmlDeviceGetTotalEnergyConsumption's
 * return code (0 success, 3 NVML_ERROR_NOT_SUPPORTED, ...), KG_NVML_NO_LIBRARY without NVML or
 * the symbol. */
#define KG_NVML_NO_LIBRARY (-1)
#define KG_NVML_NOT_SUPPORTED 3
#define KG_NVML_COUNTER_BACK (-2) /* the counter read lower after a replay than before it */
#define KG_NVML_IMPLAUSIBLE (-3)  /* the deltas imply more power than the board can draw */
/* Energy per launch over measured time per launch is a power: one above the board's enforced
 * limit x KG_ENERGY_LIMIT_MARGIN (bench_engine.h; 1500 W when unknown) cannot be true (a counter that updates more slowly than a
 * sample gives such deltas): such a figure is dropped, never decided on (pure). */
bool kg_bench_energy_plausible(double per_launch_mj, double measured_us, double power_limit_w,
                               double *implied_w);
int kg_nvml_energy_mj(kg_nvml *n, unsigned long long *mj);
/* Why a row has no energy figure, from its energy_rc and summary ("" when it has one). */
void kg_bench_energy_note(char *buf, size_t n, int energy_rc, const kg_energy_summary *e);
/* The maximum SM clock in MHz, or NaN. */
double kg_nvml_sm_max_clock(kg_nvml *n);
/* The maximum SM clock the drop threshold is relative to (device attribute, else NVML; MHz,
 * 0 when unknown). */
double kg_bench_env_max_clock_mhz(const kg_bench_env *e);
cJSON *kg_nvml_snapshot(kg_nvml *n);
/* One poll (SM and memory clock, reasons, power, temperature) at time t_s; ok = false without
 * NVML or when the SM clock or the reasons did not answer. */
void kg_nvml_poll(kg_nvml *n, kg_power_poll *p, double t_s);

#ifdef __cplusplus
}
#endif
#endif
