/* The CPU references' row loop over host threads (rmsnorm, softmax): kg_par_for, the threads
 * kg_fill_host runs on (kgate/fill.h), with a C++ lambda. Host code. */
#ifndef KG_PAR_ROWS_H
#define KG_PAR_ROWS_H

#include "kgate/kgate.h"

template <typename F> static void kg_par_rows_part(void *ctx, size_t r0, size_t r1, size_t part)
{
    (void)part;
    (*(F *)ctx)((int)r0, (int)r1);
}

/* f(r0, r1) over slices of the rows; each row is computed exactly as alone, so the reference
 * is the same bits however it is split. Serial below ~4M values (threads would cost more). */
template <typename F> static inline void kg_par_rows(int rows, size_t values, F f)
{
    size_t parts = values < ((size_t)1 << 22) ? 1 : (size_t)kg_par_threads();
    kg_par_for((size_t)(rows > 0 ? rows : 0), parts, kg_par_rows_part<F>, &f);
}

#endif
