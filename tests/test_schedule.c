/* The multi-GPU plan (issue #27 item 5, gates/core/schedule.c): every (gate, case) once; a
 * device runs one task at a time; a case's gates in table order; bench (exclusive) never
 * overlaps any other task on any GPU and stays on the first GPU; parity, preflight, hotpath and
 * counters of different cases run at once, so 2 GPUs finish well before 1; --devices parsed
 * strictly. The checker catches the planted bad plans. */
#include <string.h>
#include "core/kg_core.h"
#include "core/schedule.h"
#include "kg_test.h"

#define NC 12
static const kg_sched_gate gates[] = { { "parity", false },
                                       { "preflight", false },
                                       { "hotpath", false },
                                       { "bench", true },
                                       { "counters", false } };
#define NG (sizeof gates / sizeof gates[0])

static bool overlap(const kg_sched_task *a, const kg_sched_task *b)
{
    return a->start_s < b->end_s && b->start_s < a->end_s && a->end_s > a->start_s &&
           b->end_s > b->start_s;
}

/* The plan's rules; false (and why) when one is broken. */
static bool valid(const kg_sched_plan *p, const double *cost, int first_dev, const char **why)
{
    int seen[NG][NC] = { { 0 } };
    for (size_t i = 0; i < p->n; i++) {
        const kg_sched_task *a = &p->tasks[i];
        seen[a->gate][a->case_ix]++;
        if (gates[a->gate].exclusive && a->device != first_dev)
            return *why = "bench off the first GPU", false;
        for (size_t j = 0; j < p->n; j++) {
            const kg_sched_task *b = &p->tasks[j];
            if (i == j)
                continue;
            if (a->device == b->device && overlap(a, b))
                return *why = "two tasks at once on one GPU", false;
            if (gates[a->gate].exclusive && overlap(a, b))
                return *why = "bench overlaps another task", false;
            if (a->case_ix == b->case_ix && a->gate < b->gate && a->end_s > b->start_s + 1e-12)
                return *why = "a case's gates out of order", false;
        }
    }
    for (size_t g = 0; g < NG; g++)
        for (size_t c = 0; c < NC; c++)
            if (seen[g][c] != (cost[g * NC + c] >= 0))
                return *why = "a (gate, case) missing or twice", false;
    return true;
}

static void test_plan(void)
{
    char idb[NC][16];
    const char *ids[NC];
    double cost[NG * NC];
    for (size_t c = 0; c < NC; c++) {
        snprintf(idb[c], sizeof idb[c], "case%02zu", c);
        ids[c] = idb[c];
        for (size_t g = 0; g < NG; g++)
            cost[g * NC + c] = g == 3 ? 2.0 + (double)c : 0.5 + 0.25 * (double)((c * 7 + g) % 5);
    }
    cost[2 * NC + 4] = -1; /* hotpath skips one case (a bench variant) */
    int d1[] = { 0 }, d2[] = { 0, 1 }, d4[] = { 3, 1, 2, 0 };
    kg_sched_plan p1, p2, p4, again;
    const char *why = "";
    CHECK(kg_sched_make(&p1, gates, NG, ids, cost, NC, d1, 1) == 0);
    CHECK(kg_sched_make(&p2, gates, NG, ids, cost, NC, d2, 2) == 0);
    CHECK(kg_sched_make(&p4, gates, NG, ids, cost, NC, d4, 4) == 0);
    CHECK_MSG(valid(&p1, cost, 0, &why), "1 GPU: %s", why);
    CHECK_MSG(valid(&p2, cost, 0, &why), "2 GPUs: %s", why);
    CHECK_MSG(valid(&p4, cost, 3, &why), "4 GPUs: %s", why);
    CHECK(p1.makespan_s == p1.serial_s && p2.serial_s == p1.serial_s);
    /* bench (2+..+13 = 90 s) is serial everywhere; the rest (about 66 s) splits over the GPUs */
    double bench = 0, rest = p1.serial_s;
    for (size_t c = 0; c < NC; c++)
        bench += cost[3 * NC + c];
    rest -= bench;
    CHECK_MSG(p2.makespan_s < bench + 0.6 * rest, "2 GPUs: %.1f s of %.1f", p2.makespan_s,
              p1.serial_s);
    CHECK_MSG(p4.makespan_s < bench + 0.4 * rest && p4.makespan_s < p2.makespan_s, "4 GPUs: %.1f s",
              p4.makespan_s);
    CHECK(kg_sched_make(&again, gates, NG, ids, cost, NC, d2, 2) == 0 && again.n == p2.n &&
          memcmp(again.tasks, p2.tasks, p2.n * sizeof *p2.tasks) == 0);
    printf("plan: 1 GPU %.1f s, 2 GPUs %.1f s, 4 GPUs %.1f s (bench %.1f s serial)\n",
           p1.makespan_s, p2.makespan_s, p4.makespan_s, bench);
    /* planted: a bench task moved onto another GPU at the same time as a hotpath task */
    for (size_t i = 0; i < p2.n; i++)
        if (gates[p2.tasks[i].gate].exclusive) {
            p2.tasks[i].start_s = 0;
            p2.tasks[i].end_s = 1;
            break;
        }
    CHECK(!valid(&p2, cost, 0, &why));
    /* planted: one task dropped */
    again.n--;
    CHECK(!valid(&again, cost, 0, &why));
    kg_sched_free(&p1);
    kg_sched_free(&p2);
    kg_sched_free(&p4);
    kg_sched_free(&again);
}

static void test_devices(void)
{
    int d[KG_SCHED_MAX_DEVICES];
    size_t n = 0;
    CHECK(kg_devices_parse("0,1,3", d, &n) == 0 && n == 3 && d[0] == 0 && d[2] == 3);
    CHECK(kg_devices_parse("7", d, &n) == 0 && n == 1 && d[0] == 7);
    const char *bad[] = { "", "0,", ",0", "0,,1", "0,0", "a", "-1", "1024", "0;1", "1 ,2" };
    for (size_t i = 0; i < KG_ARRAY_LEN(bad); i++)
        CHECK_MSG(kg_devices_parse(bad[i], d, &n) == KG_EINVAL &&
                      strstr(kg_error_last(), "--devices"),
                  "'%s' accepted", bad[i]);
}

int main(void)
{
    test_plan();
    test_devices();
    return kg_test_done("test_schedule");
}
