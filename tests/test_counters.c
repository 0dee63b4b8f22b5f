/* The counters gate without a GPU: the metric table (every figure has a well-formed name,
 * resolution picks the first candidate the device lists and falls back), the per-launch sums
 * (counts add, ratios are time-weighted, a missing counter stays missing), and the decision
 * rule (work model 2x off FAILs, small cases use L2 traffic, marks regress on growth, spills,
 * lost tensor cores, occupancy steps and system-memory traffic; clean twins pass). */
#include <math.h>
#include <string.h>
#include "counters/counters.h"
#include "kg_test.h"

static void test_table(void)
{
    for (int i = 0; i < KG_CT_N; i++) {
        const kg_ct_metric_info *m = &kg_ct_metrics[i];
        CHECK_MSG(m->key && m->key[0], "figure %d has no key", i);
        CHECK_MSG(m->names[0] != NULL, "figure %s has no metric name", m->key);
        for (int a = 0; a < KG_CT_MAX_ALTS && m->names[a]; a++) {
            const char *n = m->names[a];
            /* unit__counter.rollup: a "__" in the base, a known rollup after the first dot */
            const char *dot = strchr(n, '.');
            CHECK_MSG(strstr(n, "__") && dot, "%s: not a metric name", n);
            CHECK_MSG(dot && (strncmp(dot, ".sum", 4) == 0 || strncmp(dot, ".avg", 4) == 0),
                      "%s: rollup is not .sum or .avg", n);
            CHECK_MSG(m->ratio == (strstr(n, "pct_of_peak") != NULL), "%s: ratio flag wrong", n);
        }
        for (int j = 0; j < i; j++)
            CHECK_MSG(strcmp(kg_ct_metrics[j].key, m->key) != 0, "duplicate key %s", m->key);
    }
    CHECK(strcmp(kg_ct_metrics[KG_CT_DRAM_READ].names[0], "dram__bytes_read.sum") == 0);
    CHECK(kg_ct_metrics[KG_CT_SYSMEM].scale == 32.0);
    char b[64];
    kg_ct_base_name(b, sizeof b, "sm__warps_active.avg.pct_of_peak_sustained_active");
    CHECK(strcmp(b, "sm__warps_active") == 0);
}

static void test_resolve(void)
{
    int ch[KG_CT_N];
    const char *known[] = { "dram__bytes_read", "dram__bytes_write",
                            "l1tex__t_requests_pipe_lsu_mem_local_op_ld",
                            "sm__sass_inst_executed_op_local_st",
                            "dram__throughput", "sm__inst_executed_pipe_tensor_op_hmma" };
    size_t got = kg_ct_resolve(ch, known, KG_ARRAY_LEN(known));
    CHECK(got == 6);
    CHECK(ch[KG_CT_DRAM_READ] == 0 && ch[KG_CT_DRAM_WRITE] == 0);
    CHECK(ch[KG_CT_LOCAL_LD] == 1); /* the fallback name */
    CHECK(ch[KG_CT_LOCAL_ST] == 0);
    CHECK(ch[KG_CT_DRAM_PCT] == 1);
    CHECK(ch[KG_CT_TENSOR] == 1);
    CHECK(ch[KG_CT_FFMA] == -1 && ch[KG_CT_OCCUPANCY] == -1 && ch[KG_CT_SYSMEM] == -1);
    CHECK(kg_ct_resolve(ch, NULL, 0) == 0);
}

/* A kernel with every counter: dram r/w, ffma count, duration, occupancy. */
static void kernel(kg_ct_counts *c, double rd, double wr, double ffma, double ns, double occ)
{
    double v[KG_CT_N];
    bool h[KG_CT_N];
    for (int i = 0; i < KG_CT_N; i++)
        v[i] = 0, h[i] = true;
    v[KG_CT_DRAM_READ] = rd;
    v[KG_CT_DRAM_WRITE] = wr;
    v[KG_CT_FFMA] = ffma;
    v[KG_CT_DURATION] = ns;
    v[KG_CT_OCCUPANCY] = occ;
    v[KG_CT_INST] = 1000;
    v[KG_CT_L2_SECTORS] = (rd + wr) / 32;
    kg_ct_add_kernel(c, v, h);
}

static void test_sums(void)
{
    kg_ct_counts c = { 0 };
    kernel(&c, 4000, 4000, 100, 1000, 80);
    kernel(&c, 2000, 0, 50, 3000, 40);
    kg_ct_derive(&c);
    CHECK(c.n_kernels == 2);
    CHECK(c.dram_bytes == 10000);
    CHECK(c.flops == 2 * 150);
    CHECK(fabs(c.v[KG_CT_OCCUPANCY] - (80 * 1000 + 40 * 3000) / 4000.0) < 1e-9);
    CHECK(c.v[KG_CT_DURATION] == 4000);
    CHECK(c.l2_bytes == 10000);
    CHECK(c.spill == 0 && c.tensor == 0);
    /* one kernel without a counter: the sum is unavailable, never a partial figure */
    kg_ct_counts d = { 0 };
    double v[KG_CT_N] = { 0 };
    bool h[KG_CT_N];
    for (int i = 0; i < KG_CT_N; i++)
        h[i] = true;
    h[KG_CT_FFMA] = false;
    kernel(&d, 1, 1, 1, 1, 1);
    kg_ct_add_kernel(&d, v, h);
    kg_ct_derive(&d);
    CHECK(isnan(d.v[KG_CT_FFMA]) && !d.have[KG_CT_FFMA]);
    CHECK(d.flops_partial && d.flops == 0); /* the FP counters it has: a lower bound */
    CHECK(d.dram_bytes == 2);
    kg_ct_counts e = { 0 };
    kg_ct_derive(&e);
    CHECK(isnan(e.dram_bytes));
}

static kg_ct_counts counts(double dram, double flops, double inst)
{
    kg_ct_counts c = { 0 };
    kernel(&c, dram / 2, dram / 2, flops / 2, 1000, 50);
    c.v[KG_CT_INST] = 0; /* replaced below */
    kg_ct_derive(&c);
    c.v[KG_CT_INST] = inst;
    return c;
}

static kg_mark mark(double v)
{
    kg_mark m = { 0 };
    m.value = v;
    return m;
}

static kg_ct_decision dec(const kg_ct_counts *c, const kg_ct_expect *e)
{
    kg_ct_verdict v;
    kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
    o.l2_bytes = 50e6;
    CHECK(kg_ct_decide(&v, c, e, &o) == 0);
    CHECK(v.why[0] != '\0');
    return v.decision;
}

static void test_model(void)
{
    kg_ct_counts c = counts(200e6, 0, 1e6);
    kg_ct_expect e = { .bytes_moved = 200e6 };
    CHECK(dec(&c, &e) == KG_CT_OK);                    /* clean twin */
    e.bytes_moved = 200e6 / 1.5;                       /* the factor is inclusive */
    CHECK(dec(&c, &e) == KG_CT_OK);
    e.bytes_moved = 100e6;                             /* declared 2x too small */
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
    e.bytes_moved = 200e6 / 1.3;                       /* cache effects of 30% pass */
    CHECK(dec(&c, &e) == KG_CT_OK);
    e.bytes_moved = 500e6;                             /* declared too large */
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
    /* small case (< L2): DRAM ~0 but L2 traffic matches: not a wrong model */
    kg_ct_counts s = counts(1e6, 0, 1e3);
    s.dram_bytes = 100;
    kg_ct_expect es = { .bytes_moved = 1e6 };
    CHECK(dec(&s, &es) == KG_CT_OK);
    es.bytes_moved = 0.5e6;
    CHECK(dec(&s, &es) == KG_CT_MODEL_WRONG);
    /* flops */
    kg_ct_counts f = counts(200e6, 2e9, 1e6);
    kg_ct_expect ef = { .bytes_moved = 200e6, .flops = 2e9 };
    CHECK(dec(&f, &ef) == KG_CT_OK);
    ef.flops = 1e9;                                    /* FLOPs declared 2x too small */
    CHECK(dec(&f, &ef) == KG_CT_MODEL_WRONG);
    ef.flops = 0;                                      /* FLOPs measured, none declared */
    CHECK(dec(&f, &ef) == KG_CT_MODEL_WRONG);
    ef.flops = 0.5e9, ef.uses_tensor_cores = true;     /* tensor FLOPs are not FP inst */
    f.tensor = 64;
    CHECK(dec(&f, &ef) == KG_CT_OK);
    /* unavailable counters never decide */
    kg_ct_counts u = counts(200e6, 0, 1e6);
    u.dram_bytes = NAN, u.l2_bytes = NAN, u.flops = NAN;
    kg_ct_expect eu = { .bytes_moved = 1, .flops = 1 };
    CHECK(dec(&u, &eu) == KG_CT_OK);
    u.flops = 10 * 1e9, u.flops_partial = true;        /* a lower bound never decides */
    CHECK(dec(&u, &eu) == KG_CT_OK);
    kg_ct_counts none = { 0 };
    CHECK(dec(&none, &eu) == KG_CT_NO_DATA);
}

static void test_marks(void)
{
    kg_ct_counts c = counts(200e6, 0, 1e6);
    kg_mark md = mark(200e6), mi = mark(1e6), zero = mark(0), occ = mark(50), t = mark(64);
    kg_ct_expect e = { .bytes_moved = 200e6, .m_dram = &md, .m_inst = &mi };
    CHECK(dec(&c, &e) == KG_CT_OK);
    kg_mark md_small = mark(200e6 / 1.02);             /* +2% DRAM bytes */
    e.m_dram = &md_small;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    kg_mark md_near = mark(200e6 / 1.005);             /* +0.5%: within 1% */
    e.m_dram = &md_near;
    CHECK(dec(&c, &e) == KG_CT_OK);
    kg_mark mi_small = mark(1e6 / 1.05);               /* +5% instructions */
    e.m_inst = &mi_small;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.m_inst = &mi;
    /* spill appears */
    c.spill = 1024;
    e.m_spill = &zero;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.m_spill = NULL;                                  /* no mark: clean builds never spill */
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    c.spill = 0;
    CHECK(dec(&c, &e) == KG_CT_OK);
    /* tensor cores lost */
    c.tensor = 0;
    e.uses_tensor_cores = true;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.uses_tensor_cores = false, e.m_tensor = &t;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    c.tensor = 64;
    CHECK(dec(&c, &e) == KG_CT_OK);
    /* occupancy step: mark 50, run 50 ok, run 44 regressed */
    e.m_occ = &occ;
    CHECK(dec(&c, &e) == KG_CT_OK);
    c.v[KG_CT_OCCUPANCY] = 44;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    c.v[KG_CT_OCCUPANCY] = 46;
    CHECK(dec(&c, &e) == KG_CT_OK);
    /* system-memory traffic appears */
    c.sysmem_bytes = 1e6;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    kg_mark ms = mark(1e6);
    e.m_sysmem = &ms;                                  /* the mark had it too */
    CHECK(dec(&c, &e) == KG_CT_OK);
    /* a wrong model outranks a regression */
    e.bytes_moved = 10e6;
    e.m_dram = &md_small;
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
}

static void test_tags(void)
{
    kg_case_desc d = { 0 };
    CHECK(!kg_ct_case_uses_tensor(&d));
    d.tags = "slow,tensor-core";
    CHECK(kg_ct_case_uses_tensor(&d));
    d.tags = "tensor-core-not";
    CHECK(!kg_ct_case_uses_tensor(&d));
    d.tags = "tensor-core";
    CHECK(kg_ct_case_uses_tensor(&d));
}

int main(void)
{
    test_table();
    test_resolve();
    test_sums();
    test_model();
    test_marks();
    test_tags();
    return kg_test_done("test_counters");
}
