/* The CPU references' row loop over host threads (rmsnorm, softmax): one helper, host code. */
#ifndef KG_PAR_ROWS_H
#define KG_PAR_ROWS_H

#include <thread>
#include <vector>

/* Rows of the CPU reference split over host threads (each row computed exactly as alone, so
 * the reference is the same bits); serial below ~4M values or when a thread cannot start. */
template <typename F>
static inline void kg_par_rows(int rows, size_t values, F f)
{
    unsigned hw = std::thread::hardware_concurrency();
    int nt = values < ((size_t)1 << 22) ? 1 : (int)(hw < 2 ? 1 : hw > 16 ? 16 : hw);
    nt = nt > rows ? rows : nt;
    std::vector<std::thread> ts;
    int k = 1;
    for (; k < nt; k++) {
        int r0 = (int)((long long)rows * k / nt), r1 = (int)((long long)rows * (k + 1) / nt);
        try {
            ts.emplace_back(f, r0, r1);
        } catch (...) {
            break;
        }
    }
    f(0, (int)((long long)rows / (nt > 0 ? nt : 1)));
    for (int j = k; j < nt; j++) /* chunks whose thread did not start */
        f((int)((long long)rows * j / nt), (int)((long long)rows * (j + 1) / nt));
    for (auto &t : ts)
        t.join();
}

#endif
