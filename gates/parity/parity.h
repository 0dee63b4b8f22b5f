/* The parity gate's comparison math: pure (no GPU), shared by the gate and its CPU tests. */
#ifndef KG_PARITY_H
#define KG_PARITY_H

#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- parity (the comparison math, used by other gates too) ----------------------------- */

typedef struct {
    size_t n;
    size_t nonfinite_out;    /* NaN/Inf elements in the output */
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
/* Convert element i of a typed buffer to double. */
double kg_value_at(const void *buf, kg_dtype t, size_t i);

#ifdef __cplusplus
}
#endif
#endif
