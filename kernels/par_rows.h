/* The CPU references' loops over host threads (rmsnorm, softmax, the defects): kg_par_for, the
 * threads kg_fill_host runs on (kgate/fill.h), with a C++ lambda. Host code. */
#ifndef KG_PAR_ROWS_H
#define KG_PAR_ROWS_H

#include "kgate/kgate.h"

template <typename F> static void kg_par_rows_part(void *ctx, size_t r0, size_t r1, size_t part)
{
    (void)part;
    (*(F *)ctx)((int)r0, (int)r1);
}

/* Serial below ~4M values (threads would cost more). */
static inline size_t kg_par_parts(size_t values)
{
    return values < ((size_t)1 << 22) ? 1 : (size_t)kg_par_threads();
}

/* f(r0, r1) over slices of the rows; each row is computed exactly as alone, so the reference
 * is the same bits however it is split. */
template <typename F> static inline void kg_par_rows(int rows, size_t values, F f)
{
    kg_par_for((size_t)(rows > 0 ? rows : 0), kg_par_parts(values), kg_par_rows_part<F>, &f);
}

template <typename F> static void kg_par_range_part(void *ctx, size_t i0, size_t i1, size_t part)
{
    (void)part;
    (*(F *)ctx)(i0, i1);
}

/* f(i0, i1) over slices of [0, n): an elementwise loop with no rows of its own. */
template <typename F> static inline void kg_par_range(size_t n, F f)
{
    kg_par_for(n, kg_par_parts(n), kg_par_range_part<F>, &f);
}

#endif
