/* The parity gate's comparison math: pure (no GPU), shared by the gate and its CPU tests. */
#ifndef KG_PARITY_H
#define KG_PARITY_H

#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gate (parity_gate.c): its typed result is a kg_parity_outputs, in-process and (whole,
 * names cleared) from an isolation worker. */
struct kg_gate;
extern const struct kg_gate kg_gate_parity;

/* ---- parity (the comparison math, used by other gates too) ----------------------------- */

typedef struct {
    size_t n;
    size_t nonfinite_out; /* NaN/Inf elements in the output */
    size_t nonfinite_ref;
    size_t first_bad;        /* first element breaking the policy (or SIZE_MAX) */
    size_t mismatched_bytes; /* bitwise: differing elements */
    double max_abs;
    size_t max_abs_at;
    double rel_l2;
    double cosine;
    bool pass;
    char reason[160];
} kg_parity_result;

/* Compare n elements: out (dtype od) against ref (dtype rd) under policy p. */
int kg_parity_compare(kg_parity_result *res, const void *out, kg_dtype od, const void *ref,
                      kg_dtype rd, size_t n, const kg_parity_policy *p);
/* Every output of a case (kg_case_io.outputs), each under its own policy. */
typedef struct {
    kg_parity_result worst; /* first: the gate's columns read it. A copy of out[worst_i] */
    int n, worst_i;         /* worst: the first failing output, else the largest rel_l2 */
    kg_parity_result out[KG_MAX_OUTPUTS];
    const char *name[KG_MAX_OUTPUTS];
    kg_dtype dtype[KG_MAX_OUTPUTS];
    kg_parity_policy policy[KG_MAX_OUTPUTS];
    bool pass; /* every output passed */
} kg_parity_outputs;

/* The reference dtype of output o: its own (has_ref_dtype), else the case's. */
kg_dtype kg_parity_ref_dtype(const kg_output *o, kg_dtype case_ref_dtype);
/* *bytes = the size of reference()'s buffer for these outputs; KG_EINVAL for an output whose
 * reference dtype is not a kg_dtype. */
int kg_parity_ref_bytes(size_t *bytes, const kg_output *outs, int n, kg_dtype ref_dtype);
/* Compare n outputs: out_host holds them back to back (outs[i].count elements of
 * outs[i].dtype each), ref_host each one's count elements of its reference dtype
 * (kg_parity_ref_dtype) back to back (what reference() fills). Output i is judged by
 * *outs[i].parity, else by `policy`. */
int kg_parity_compare_outputs(kg_parity_outputs *res, const void *out_host, const void *ref_host,
                              kg_dtype ref_dtype, const kg_output *outs, int n,
                              const kg_parity_policy *policy);

/* Convert element i of a typed buffer to double. */
double kg_value_at(const void *buf, kg_dtype t, size_t i);

#ifdef __cplusplus
}
#endif
#endif
