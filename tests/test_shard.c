/* --shard I/N (issue #27 item 4): the assignment rule of gates/core/shard.c is stable (the
 * same whatever the case order), complete and disjoint (every case in exactly one shard),
 * balanced longest-first by the marks' expected times, and falls back to the case count
 * without marks; the flag's value is parsed strictly. Each property has a planted defect the
 * check must catch (an assignment that breaks it). */
#include <math.h>
#include <string.h>
#include "core/kg_core.h"
#include "kg_test.h"

#define N 40

static char idbuf[N][32];
static const char *ids[N];
static double w[N];

/* complete and disjoint: every case in 1..count (an int per case gives disjointness), and every
 * shard non-empty when count <= n */
static bool sh_complete(const int *of, size_t n, int count)
{
    int seen[64] = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (of[i] < 1 || of[i] > count)
            return false;
        seen[of[i] - 1]++;
    }
    for (int s = 0; s < count; s++)
        if (!seen[s])
            return false;
    return true;
}

/* the largest shard load over the smallest possible (total / count, or the longest case) */
static double sh_imbalance(const int *of, const double *wt, size_t n, int count)
{
    double load[64] = { 0 }, total = 0, longest = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        double x = KG_SHARD_CASE_COST_S + wt[i];
        load[of[i] - 1] += x;
        total += x;
        longest = x > longest ? x : longest;
    }
    for (int s = 0; s < count; s++)
        most = load[s] > most ? load[s] : most;
    double ideal = total / count > longest ? total / count : longest;
    return most / ideal;
}

static void test_parse(void)
{
    int i = 0, n = 0;
    CHECK(kg_shard_parse("2/4", &i, &n) == 0 && i == 2 && n == 4);
    CHECK(kg_shard_parse("1/1", &i, &n) == 0 && i == 1 && n == 1);
    const char *bad[] = { "0/4", "5/4",  "2/0",  "2",      "2/", "/4",
                          "a/4", "2/4x", "-1/4", "2/2000", "",   " 2/4" };
    for (size_t k = 0; k < KG_ARRAY_LEN(bad); k++) {
        int rc = kg_shard_parse(bad[k], &i, &n);
        CHECK_MSG(rc == KG_EINVAL && strstr(kg_error_last(), "--shard"), "'%s' accepted", bad[k]);
    }
}

static void test_assign(void)
{
    int of[N], of2[N], of_rev[N];
    const char *rev_ids[N];
    double rev_w[N];
    for (int i = 0; i < N; i++) {
        snprintf(idbuf[i], sizeof idbuf[i], "op%02d/n=%d", (i * 7) % N, i);
        ids[i] = idbuf[i];
        /* a heavy tail: a few cases of tens of seconds, most under one; 5 without a mark */
        w[i] = i % 5 == 0 ? 30.0 + i : i % 8 == 3 ? 0 : 0.05 * (i + 1);
    }
    for (int count = 1; count <= 8; count++) {
        CHECK(kg_shard_assign(of, ids, w, N, count) == 0);
        CHECK_MSG(sh_complete(of, N, count), "count %d: not complete", count);
        /* LPT is within 4/3 of the optimum; the bound of the ideal is below it */
        double im = sh_imbalance(of, w, N, count);
        CHECK_MSG(im < 1.34, "count %d: imbalance %.3f", count, im);
        /* stable: the same assignment from the reversed case list */
        for (int i = 0; i < N; i++) {
            rev_ids[i] = ids[N - 1 - i];
            rev_w[i] = w[N - 1 - i];
        }
        CHECK(kg_shard_assign(of_rev, rev_ids, rev_w, N, count) == 0);
        bool same = true;
        for (int i = 0; i < N; i++)
            same &= of_rev[N - 1 - i] == of[i];
        CHECK_MSG(same, "count %d: the assignment depends on the case order", count);
        CHECK(kg_shard_assign(of2, ids, w, N, count) == 0 && memcmp(of, of2, sizeof of) == 0);
    }
    /* planted defects the checks catch: a case in no shard, a shard with everything */
    CHECK(kg_shard_assign(of, ids, w, N, 4) == 0);
    of[5] = 0;
    CHECK(!sh_complete(of, N, 4));
    for (int i = 0; i < N; i++)
        of[i] = 1;
    CHECK(sh_imbalance(of, w, N, 4) > 2);
    /* balanced by the marks: the heavy cases spread over the shards (one each, 8 of them over
     * 4 shards: two each), not by count */
    CHECK(kg_shard_assign(of, ids, w, N, 4) == 0);
    int heavy[4] = { 0 };
    for (int i = 0; i < N; i++)
        if (w[i] >= 30)
            heavy[of[i] - 1]++;
    CHECK(heavy[0] == 2 && heavy[1] == 2 && heavy[2] == 2 && heavy[3] == 2);
    /* without marks: by case count, round robin over the sorted ids */
    CHECK(kg_shard_assign(of, ids, NULL, N, 4) == 0);
    int per[4] = { 0 };
    for (int i = 0; i < N; i++)
        per[of[i] - 1]++;
    CHECK(per[0] == 10 && per[1] == 10 && per[2] == 10 && per[3] == 10);
}

static void test_hash(void)
{
    char a[65], b[65];
    const char *x[] = { "b", "a", "c" }, *y[] = { "c", "b", "a" }, *z[] = { "a", "b", "d" };
    CHECK(kg_shard_hash_ids(a, x, 3) == 0 && kg_shard_hash_ids(b, y, 3) == 0);
    CHECK(strcmp(a, b) == 0 && strlen(a) == 64);
    CHECK(kg_shard_hash_ids(b, z, 3) == 0 && strcmp(a, b) != 0);
}

int main(void)
{
    test_parse();
    test_assign();
    test_hash();
    return kg_test_done("test_shard");
}
