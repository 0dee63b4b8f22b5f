/* The bench gate, the CUPTI activity trace of launched kernels (bench_cupti.c) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_CUPTI_H
#define KG_BENCH_CUPTI_H

#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUPTI activity records of the kernels launched between begin and end (no callbacks). */
int kg_kernel_trace_begin(void);
/* Kernels recorded since begin, records flushed (-1 in *n when CUPTI dropped some). */
int kg_kernel_trace_count(int *n);
/* Ends the trace; returns [{name, ns, graph_node_id}] (NULL on error, the error set). */
cJSON *kg_kernel_trace_end(void);

#ifdef __cplusplus
}
#endif
#endif
