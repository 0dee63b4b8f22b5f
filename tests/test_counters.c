/* The counters gate without a GPU: the metric table (every figure has a well-formed name,
 * resolution picks the first candidate the device lists and falls back), the per-launch sums
 * (counts add, ratios are time-weighted, a missing counter stays missing, tensor FLOPs join
 * the total or make it partial), and the decision rule (work model 2x off FAILs where it is
 * the compulsory traffic: DRAM at >= 2x L2, L1<->L2 for smaller streaming cases, nothing for
 * tiny or compute-bound ones; marks regress on growth, spills, lost tensor cores, occupancy
 * steps and system-memory traffic above the floor) and the first H200 run replayed through
 * it: every reference case and clean twin passes (the two re-reading tiled GEMMs WARN with
 * EXCESS), every counters defect fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
    const char *known[] = { "dram__bytes_read",
                            "dram__bytes_write",
                            "l1tex__t_requests_pipe_lsu_mem_local_op_ld",
                            "sm__sass_inst_executed_op_local_st",
                            "dram__throughput",
                            "sm__inst_executed_pipe_tensor_op_hmma" };
    size_t got = kg_ct_resolve(ch, known, KG_ARRAY_LEN(known));
    CHECK(got == 6);
    CHECK(ch[KG_CT_DRAM_READ] == 0 && ch[KG_CT_DRAM_WRITE] == 0);
    CHECK(ch[KG_CT_LOCAL_LD] == 1); /* the fallback name */
    CHECK(ch[KG_CT_LOCAL_ST] == 0);
    CHECK(ch[KG_CT_DRAM_PCT] == 1);
    CHECK(ch[KG_CT_TENSOR_HMMA] == 0 && ch[KG_CT_TENSOR] == -1);
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
    CHECK(dec(&c, &e) == KG_CT_NO_MARK); /* clean twin, no marks yet */
    e.bytes_moved = 200e6 / 1.5;         /* the factor is inclusive */
    CHECK(dec(&c, &e) == KG_CT_NO_MARK);
    e.bytes_moved = 100e6; /* declared 2x too small (2x L2 = 100e6) */
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
    e.bytes_moved = 200e6 / 1.3; /* cache effects of 30% pass */
    CHECK(dec(&c, &e) == KG_CT_NO_MARK);
    e.bytes_moved = 500e6; /* declared too large */
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
    /* < 2x L2, streaming: DRAM ~0 but L1<->L2 traffic matches: not a wrong model */
    kg_ct_counts s = counts(10e6, 10e6, 1e3);
    s.dram_bytes = 100;
    kg_ct_expect es = { .bytes_moved = 10e6 };
    CHECK(dec(&s, &es) == KG_CT_NO_MARK);
    es.bytes_moved = 5e6;
    CHECK(dec(&s, &es) == KG_CT_MODEL_WRONG);
    es.bytes_moved = 30e6; /* measured < declared / factor */
    CHECK(dec(&s, &es) == KG_CT_MODEL_WRONG);
    es.bytes_moved = 5e6, es.flops = 10e6; /* AI 2: L2-resident, not checked */
    CHECK(dec(&s, &es) == KG_CT_NO_MARK);
    es.bytes_moved = 0.5e6, es.flops = 0; /* < 1 MiB: sector granularity */
    CHECK(dec(&s, &es) == KG_CT_NO_MARK);
    /* compute-bound (declared AI >= ridge): a tiled GEMM re-reads its inputs, bytes unchecked */
    kg_ct_counts g = counts(140e6, 2e10, 1e6);
    kg_ct_expect eg = { .bytes_moved = 100e6, .flops = 2e10 };
    CHECK(dec(&g, &eg) == KG_CT_NO_MARK); /* 1.4x: within the factor */
    g = counts(300e6, 2e10, 1e6);         /* 3x: excess traffic is reported */
    CHECK(dec(&g, &eg) == KG_CT_EXCESS);
    eg.bytes_binding = true; /* ... and fails where it is binding */
    CHECK(dec(&g, &eg) == KG_CT_MODEL_WRONG);
    eg.bytes_binding = false;
    kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
    kg_ct_verdict v;
    o.l2_bytes = 50e6, o.ridge_ai = 500; /* the run's ceilings: AI 200 streams */
    CHECK(kg_ct_decide(&v, &g, &eg, &o) == 0 && v.decision == KG_CT_MODEL_WRONG);
    /* flops */
    kg_ct_counts f = counts(200e6, 2e9, 1e6);
    kg_ct_expect ef = { .bytes_moved = 200e6, .flops = 2e9 };
    CHECK(dec(&f, &ef) == KG_CT_NO_MARK);
    ef.flops = 1e9; /* FLOPs declared 2x too small */
    CHECK(dec(&f, &ef) == KG_CT_MODEL_WRONG);
    ef.flops = 0; /* not declared: reported, not checked */
    CHECK(dec(&f, &ef) == KG_CT_NO_MARK);
    ef.flops = 0.5e6; /* too small to check */
    CHECK(dec(&f, &ef) == KG_CT_NO_MARK);
    /* unavailable counters never decide */
    kg_ct_counts u = counts(200e6, 0, 1e6);
    u.dram_bytes = NAN, u.l2_bytes = NAN, u.flops = NAN;
    kg_ct_expect eu = { .bytes_moved = 200e6, .flops = 2e9 };
    CHECK(dec(&u, &eu) == KG_CT_NO_MARK);
    u.flops = 10 * 1e9, u.flops_partial = true; /* a lower bound never decides */
    CHECK(dec(&u, &eu) == KG_CT_NO_MARK);
    kg_ct_counts none = { 0 };
    CHECK(dec(&none, &eu) == KG_CT_INVALID); /* no kernel: never a PASS with zeros */
}

/* Tensor FLOPs join the total; tensor instructions no ops-path counter saw make it partial. */
static void test_tensor_flops(void)
{
    double v[KG_CT_N] = { 0 };
    bool h[KG_CT_N];
    for (int i = 0; i < KG_CT_N; i++)
        h[i] = true;
    v[KG_CT_TENSOR] = 999; /* generic pipe (HFMA2 too): ignored */
    v[KG_CT_TENSOR_HMMA] = 100, v[KG_CT_TOPS_BF16] = 409600, v[KG_CT_FFMA] = 10;
    kg_ct_counts c = { 0 };
    kg_ct_add_kernel(&c, v, h);
    kg_ct_derive(&c);
    CHECK(c.tensor == 100 && c.tensor_flops == 409600 && c.flops == 409620);
    CHECK(!c.flops_partial);
    v[KG_CT_TENSOR_GMMA] = 8, v[KG_CT_TENSOR_HMMA] = 0, v[KG_CT_TOPS_BF16] = 0;
    kg_ct_counts g = { 0 }; /* wgmma, unseen by the ops path */
    kg_ct_add_kernel(&g, v, h);
    kg_ct_derive(&g);
    CHECK(g.tensor == 8 && g.flops_partial && g.flops == 20);
    h[KG_CT_TENSOR_HMMA] = false; /* no hmma counter: the generic pipe */
    for (int i = KG_CT_TOPS_BF16; i <= KG_CT_TOPS_FP64; i++)
        h[i] = false;
    kg_ct_counts n = { 0 };
    kg_ct_add_kernel(&n, v, h);
    kg_ct_derive(&n);
    /* no hmma counter: tensor-core use unknown (the generic count includes HFMA2), and what
     * the generic pipe saw may be tensor work no ops path counted: the FLOPs are partial */
    CHECK(isnan(n.tensor) && isnan(n.tensor_flops) && n.flops_partial);
    CHECK(n.v[KG_CT_TENSOR] == 999);
    /* sysmem total from the split where the total counter is missing */
    h[KG_CT_SYSMEM] = false;
    v[KG_CT_SYSMEM_RD] = 10, v[KG_CT_SYSMEM_WR] = 5;
    kg_ct_counts s = { 0 };
    kg_ct_add_kernel(&s, v, h);
    kg_ct_derive(&s);
    CHECK(s.sysmem_bytes == 15 * 32 && s.sysmem_write_bytes == 5 * 32);
}

static void test_marks(void)
{
    kg_ct_counts c = counts(200e6, 0, 1e6);
    kg_mark md = mark(200e6), mi = mark(1e6), zero = mark(0), occ = mark(50), t = mark(64);
    kg_ct_expect e = { .bytes_moved = 200e6, .m_dram = &md, .m_inst = &mi };
    CHECK(dec(&c, &e) == KG_CT_OK);
    kg_mark md_small = mark(200e6 / 1.02); /* +2% DRAM bytes */
    e.m_dram = &md_small;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    kg_mark md_near = mark(200e6 / 1.005); /* +0.5%: within 1% */
    e.m_dram = &md_near;
    CHECK(dec(&c, &e) == KG_CT_OK);
    /* An L2-resident case (< 2x L2): its DRAM bytes depend on what L2 held (the H200 read
     * 1.26..1.66 MB for a 12.6 MB axpy in three processes): not gated, instructions are. */
    kg_ct_counts cs = counts(1.66e6, 0, 1e6);
    cs.l2_bytes = 12.6e6; /* the L1<->L2 traffic a streaming kernel of 12.6 MB moves */
    kg_mark md_l2 = mark(1.26e6);
    kg_ct_expect es = { .bytes_moved = 12.6e6, .m_dram = &md_l2, .m_inst = &mi };
    CHECK(dec(&cs, &es) == KG_CT_OK);
    kg_mark mi_grew = mark(1e6 / 1.05);
    es.m_inst = &mi_grew;
    CHECK(dec(&cs, &es) == KG_CT_REGRESSED);
    kg_mark mi_small = mark(1e6 / 1.05); /* +5% instructions */
    e.m_inst = &mi_small;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.m_inst = &mi;
    /* spill appears */
    c.spill = 1024;
    e.m_spill = &zero;
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.m_spill = NULL; /* marked without spills: it had 0 */
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    kg_ct_expect bare = { .bytes_moved = 200e6 }; /* no marks: a few spill slots are fine */
    CHECK(dec(&c, &bare) == KG_CT_NO_MARK);
    c.spill = 1e6; /* 128 MB of local traffic: material */
    CHECK(dec(&c, &bare) == KG_CT_REGRESSED);
    kg_mark ms1 = mark(1e6); /* the mark spilled as much */
    e.m_spill = &ms1;
    CHECK(dec(&c, &e) == KG_CT_OK);
    c.spill = 1.1e6; /* ... and it grew */
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    e.m_spill = NULL;
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
    c.sysmem_bytes = 812320; /* the GH100 per-kernel artefact */
    CHECK(dec(&c, &e) == KG_CT_OK);
    c.sysmem_bytes = 25970112; /* defect/counters/sysmem/defect */
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    kg_mark ms = mark(25970112);
    e.m_sysmem = &ms; /* the mark had it too */
    CHECK(dec(&c, &e) == KG_CT_OK);
    c.sysmem_bytes = 25970112 * 1.25 + 1048576 + 1e3; /* beyond mark + 25% + 1 MiB */
    CHECK(dec(&c, &e) == KG_CT_REGRESSED);
    c.sysmem_bytes = 812320;
    /* a wrong model outranks a regression */
    e.bytes_moved = 10e6;
    e.m_dram = &md_small;
    CHECK(dec(&c, &e) == KG_CT_MODEL_WRONG);
}

static unsigned moves(const kg_ct_counts *c, const kg_ct_expect *e)
{
    kg_ct_verdict v;
    kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
    o.l2_bytes = 50e6;
    CHECK(kg_ct_decide(&v, c, e, &o) == 0);
    return v.mark_moves;
}

/* Which marks a passing production run may set or move: every present count without marks;
 * with marks only a gain beyond the regression margin. The noise is the H200's: a second
 * identical production run read axpy n=1048579 DRAM 1.52192e6 -> 1.50221e6 bytes (L2-resident,
 * not gated), occupancy 63.36 -> 64.02 %, sysmem 43168 -> 25120 bytes, and moved 20 marks. */
static void test_mark_moves(void)
{
    kg_ct_counts c = counts(1.50221e6, 0, 417809);
    c.v[KG_CT_OCCUPANCY] = 64.0238, c.have[KG_CT_OCCUPANCY] = true;
    c.sysmem_bytes = 25120, c.tensor = 0, c.spill = 0;
    kg_ct_expect bare = { .bytes_moved = 12.6e6 };
    CHECK(moves(&c, &bare) == (KG_CT_MV_DRAM | KG_CT_MV_INST | KG_CT_MV_OCC | KG_CT_MV_SYSMEM));
    kg_mark md = mark(1.52192e6), mi = mark(417809), mo = mark(63.3628), ms = mark(43168);
    kg_ct_expect e = { .bytes_moved = 12.6e6,
                       .m_dram = &md,
                       .m_inst = &mi,
                       .m_occ = &mo,
                       .m_sysmem = &ms };
    CHECK(moves(&c, &e) == 0); /* the noise moves nothing */
    c.dram_bytes = 0.5e6;      /* L2-resident DRAM never moves once set */
    CHECK(moves(&c, &e) == 0);
    c.v[KG_CT_INST] = 417809 * 0.98;      /* 2% fewer instructions: real */
    c.v[KG_CT_OCCUPANCY] = 63.3628 + 5.5; /* beyond the 5-point step */
    CHECK(moves(&c, &e) == (KG_CT_MV_INST | KG_CT_MV_OCC));
    c.v[KG_CT_INST] = 417809 * 0.995; /* within the 1% tolerance */
    CHECK(moves(&c, &e) == KG_CT_MV_OCC);
    /* a streaming case of >= 2x L2: its DRAM bytes move on a gain beyond 1% */
    kg_ct_counts big = counts(4.0e8, 0, 7.27e6);
    kg_mark mb = mark(4.06168e8), mbi = mark(7.27e6), m50 = mark(50); /* counts(): occ 50 */
    kg_ct_expect eb = { .bytes_moved = 4.0e8, .m_dram = &mb, .m_inst = &mbi, .m_occ = &m50 };
    CHECK(moves(&big, &eb) == KG_CT_MV_DRAM); /* -1.5% */
    big = counts(4.06e8, 0, 7.27e6);
    CHECK(moves(&big, &eb) == 0); /* -0.04%: noise */
    /* sysmem: a gain beyond 25% + 1 MiB; tensor instructions: more than 1% */
    kg_mark mss = mark(25970112), mt = mark(1000);
    kg_ct_expect et = { .bytes_moved = 200e6, .m_sysmem = &mss, .m_tensor = &mt, .m_occ = &m50 };
    kg_ct_counts ct = counts(200e6, 0, 1e6);
    ct.sysmem_bytes = 812320, ct.tensor = 1005;
    CHECK(moves(&ct, &et) == (KG_CT_MV_DRAM | KG_CT_MV_INST | KG_CT_MV_SYSMEM));
    ct.sysmem_bytes = 25970112 * 0.9, ct.tensor = 1100;
    CHECK(moves(&ct, &et) == (KG_CT_MV_DRAM | KG_CT_MV_INST | KG_CT_MV_TENSOR));
}

/* The first H200 run (NVIDIA H200 sm_90, driver 580.159.04, CUDA 13.0): every reference case
 * and the counters defect catalogue, as measured (docs/counters.md). Tensor FLOPs: mma.sync
 * GEMMs as the ops path counts them (m16n8k16: 4096 per instruction), wgmma GEMMs 0 (the ops
 * path does not see wgmma: the FLOPs are partial); other cases' generic tensor-pipe counts
 * (HFMA2 on GH100) are left out (0). spill/clean declares 2 FLOP per FMA. */
typedef struct {
    const char *id;
    double decl_bytes, dram, l2, sysmem, decl_flops, fp_flops, tensor_inst, tensor_flops, spill;
    bool tensor_tag;
    kg_ct_decision want;
} h200_row;
static const h200_row h200_rows[] = {
    { "axpy/n=1/f32", 12, 6656, 96, 18272, 0, 2, 0, 0, 0, false, KG_CT_NO_MARK },
    { "axpy/n=4097/f32", 49164, 3072, 49248, 25120, 0, 8194, 0, 0, 0, false, KG_CT_NO_MARK },
    { "axpy/n=1048579/f32", 12582948, 1346560, 12583008, 698624, 0, 2097158, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "axpy/n=33554433/f32", 402653196, 405761280, 402653280, 812320, 0, 67108866, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "reduce_sum/n=1/f32", 16, 4864, 128, 36960, 0, 9857, 0, 0, 0, false, KG_CT_NO_MARK },
    { "reduce_sum/n=1000/f32", 4012, 3840, 4096, 36960, 0, 10856, 0, 0, 0, false, KG_CT_NO_MARK },
    { "reduce_sum/n=4097/f32", 16424, 4864, 16608, 38720, 0, 21537, 0, 0, 0, false, KG_CT_NO_MARK },
    { "reduce_sum/n=1048583/f32", 4202528, 648704, 4231232, 474784, 0, 3644583, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "reduce_sum/n=67108869/f32", 268443672, 292613120, 268472384, 831264, 0, 69704869, 0, 0, 0,
      false, KG_CT_NO_MARK },
    { "rmsnorm/rows=1,cols=4096/bf16", 24576, 2304, 24576, 21152, 0, 22272, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "rmsnorm/rows=3,cols=1000/bf16", 14000, 1024, 14112, 21152, 0, 29664, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "rmsnorm/rows=1000,cols=1027/bf16", 4110054, 633600, 5228576, 531008, 0, 5623000, 0, 0, 0,
      false, KG_CT_NO_MARK },
    { "rmsnorm/rows=4096,cols=4096/bf16", 67117056, 64451328, 67409536, 812320, 0, 91226112, 0, 0,
      0, false, KG_CT_NO_MARK },
    { "rmsnorm/rows=16384,cols=8192/bf16", 536887296, 533197056, 537510912, 812704, 0, 633339904, 0,
      0, 0, false, KG_CT_NO_MARK },
    { "softmax/rows=1,cols=1/f32", 8, 2048, 64, 18240, 0, 3447, 0, 0, 0, false, KG_CT_NO_MARK },
    { "softmax/rows=33,cols=1023/f32", 270072, 10496, 289088, 53056, 0, 858144, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "softmax/rows=4096,cols=1000/f32", 32768000, 22086912, 32768000, 811136, 0, 97615872, 0, 0, 0,
      false, KG_CT_NO_MARK },
    { "softmax/rows=512,cols=4095,range=100/f32", 16773120, 2994432, 18194976, 767744, 0, 26975459,
      0, 0, 0, false, KG_CT_NO_MARK },
    { "softmax/rows=16384,cols=4096/f32", 536870912, 533255168, 536870912, 812320, 0, 339738624, 0,
      0, 0, false, KG_CT_NO_MARK },
    { "softmax/rows=1,cols=1/bf16", 4, 1280, 64, 18240, 0, 3383, 0, 0, 0, false, KG_CT_NO_MARK },
    { "softmax/rows=33,cols=1023/bf16", 135036, 14080, 154144, 40416, 0, 843930, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "softmax/rows=4096,cols=1000/bf16", 16384000, 2196480, 16610080, 790944, 0, 99713024, 0, 0, 0,
      false, KG_CT_NO_MARK },
    { "softmax/rows=32768,cols=4096/bf16", 536870912, 535009280, 536870912, 848960, 0, 696254464, 0,
      0, 0, false, KG_CT_NO_MARK },
    { "gemm_bf16/m=1,n=1,k=8/bf16", 36, 1792, 96, 18272, 16, 0, 256, 1048576, 0, true,
      KG_CT_NO_MARK },
    { "gemm_bf16/m=127,n=253,k=96/bf16", 201484, 72704, 507648, 30240, 6169152, 0, 1536, 6291456, 0,
      true, KG_CT_NO_MARK },
    { "gemm_bf16/m=300,n=200,k=200/bf16", 440000, 118016, 884320, 53824, 24000000, 0, 10752,
      44040192, 0, true, KG_CT_NO_MARK },
    { "gemm_bf16/m=1000,n=1000,k=1000/bf16", 8000000, 2955520, 48136160, 421664, 2000000000, 0,
      524288, 2147483648, 0, true, KG_CT_NO_MARK },
    { "gemm_bf16/m=384,n=768,k=320/bf16", 1916928, 675584, 2085760, 72352, 188743680, 0, 1440, 0, 0,
      true, KG_CT_NO_MARK },
    { "gemm_bf16/m=4096,n=4096,k=4096/bf16", 134217728, 224309504, 1249964672, 812320, 137438953472,
      0, 1048576, 0, 0, true, KG_CT_EXCESS },
    { "gemm_bf16/m=8192,n=8192,k=8192/bf16", 536870912, 1541165568, 10513039744, 812320,
      1099511627776, 0, 8388608, 0, 0, true, KG_CT_EXCESS },
    { "cublas_gemm_bf16/m=256,n=384,k=512/bf16", 1048576, 288000, 2752512, 327712, 100663296, 0,
      24576, 0, 0, true, KG_CT_NO_MARK },
    { "defect/counters/strided/clean", 268435456, 270514432, 268435456, 812704, 0, 0, 0, 0, 0,
      false, KG_CT_NO_MARK },
    { "defect/counters/strided/defect", 268435456, 487163392, 1842831488, 849728, 0, 0, 0, 0, 0,
      false, KG_CT_MODEL_WRONG },
    { "defect/counters/tensor/clean", 32768, 2304, 32768, 22176, 524288, 0, 128, 524288, 0, true,
      KG_CT_NO_MARK },
    { "defect/counters/tensor/defect", 32768, 1536, 32768, 22176, 524288, 1048576, 0, 0, 0, true,
      KG_CT_REGRESSED },
    { "defect/counters/sysmem/clean", 33554432, 33482240, 33554432, 809408, 4194304, 4194304, 0, 0,
      0, false, KG_CT_NO_MARK },
    { "defect/counters/sysmem/defect", 33554432, 2258176, 33554432, 25970112, 4194304, 4194304, 0,
      0, 0, false, KG_CT_REGRESSED },
    { "defect/counters/spill/clean", 33554432, 33529088, 33554432, 808416, 134217728, 134217728, 0,
      0, 0, false, KG_CT_NO_MARK },
    { "defect/counters/spill/defect", 33554432, 68701184, 306071424, 812192, 134217728, 138412032,
      0, 0, 2621440, false, KG_CT_REGRESSED },
    { "defect/counters/model/clean", 268435456, 270451968, 268435456, 812704, 0, 0, 0, 0, 0, false,
      KG_CT_NO_MARK },
    { "defect/counters/model/defect", 134217728, 273202944, 268435456, 812704, 0, 0, 0, 0, 0, false,
      KG_CT_MODEL_WRONG },
};

static kg_ct_counts h200_counts(const h200_row *r)
{
    kg_ct_counts c = { 0 };
    double v[KG_CT_N] = { 0 };
    bool h[KG_CT_N];
    for (int i = 0; i < KG_CT_N; i++)
        h[i] = true;
    v[KG_CT_DRAM_READ] = r->dram / 2, v[KG_CT_DRAM_WRITE] = r->dram / 2;
    v[KG_CT_L2_SECTORS] = r->l2 / 32, v[KG_CT_SYSMEM] = r->sysmem / 32;
    v[KG_CT_SYSMEM_RD] = r->sysmem / 32; /* the split is not measured yet */
    v[KG_CT_FADD] = r->fp_flops;
    v[KG_CT_TENSOR_HMMA] = r->tensor_flops > 0 ? r->tensor_inst : 0;
    v[KG_CT_TENSOR_GMMA] = r->tensor_flops > 0 ? 0 : r->tensor_inst;
    v[KG_CT_TOPS_BF16] = r->tensor_flops;
    v[KG_CT_LOCAL_LD] = r->spill;
    v[KG_CT_INST] = 1000, v[KG_CT_DURATION] = 1000, v[KG_CT_OCCUPANCY] = 50;
    kg_ct_add_kernel(&c, v, h);
    kg_ct_derive(&c);
    return c;
}

static void test_h200(void)
{
    for (size_t i = 0; i < KG_ARRAY_LEN(h200_rows); i++) {
        const h200_row *r = &h200_rows[i];
        kg_ct_counts c = h200_counts(r);
        kg_ct_expect e = { .bytes_moved = r->decl_bytes,
                           .flops = r->decl_flops,
                           .uses_tensor_cores = r->tensor_tag };
        kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
        o.l2_bytes = 62914560; /* the H200's L2 */
        kg_ct_verdict v;
        CHECK(kg_ct_decide(&v, &c, &e, &o) == 0);
        if (getenv("KG_TEST_VERBOSE"))
            printf("%-42s %-11s %s\n", r->id, kg_ct_decision_name(v.decision), v.why);
        CHECK_MSG(v.decision == r->want, "%s: %s (%s), want %s", r->id,
                  kg_ct_decision_name(v.decision), v.why, kg_ct_decision_name(r->want));
    }
    /* wgmma FLOPs unseen: partial, never a 0-FLOP model failure */
    kg_ct_counts c = h200_counts(&h200_rows[29]);
    CHECK(c.flops_partial && c.tensor == 8388608);
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

static kg_ct_verdict verdict(const kg_ct_counts *c, const kg_ct_expect *e, double peak)
{
    kg_ct_verdict v;
    kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
    o.l2_bytes = 50e6, o.dram_peak_bps = peak;
    CHECK(kg_ct_decide(&v, c, e, &o) == 0);
    return v;
}

/* Issue #25: counts that time nothing or cannot be true are INVALID (ERROR), whatever else
 * they say; a good row is untouched by the checks. */
static void test_invalid(void)
{
    kg_ct_counts c = counts(200e6, 0, 1e6); /* 200 MB in 1000 ns: 200 TB/s */
    kg_ct_expect e = { .bytes_moved = 200e6 };
    CHECK(verdict(&c, &e, 0).decision == KG_CT_NO_MARK); /* peak unknown: no rate check */
    kg_ct_verdict v = verdict(&c, &e, 4.8e12);           /* the H200's ~4.8 TB/s */
    CHECK(v.decision == KG_CT_INVALID && strstr(v.why, "cannot be true"));
    c.v[KG_CT_DURATION] = 200e6 / 4.8e12 * 1e9 * 1.1; /* 91% of peak: true */
    CHECK(verdict(&c, &e, 4.8e12).decision == KG_CT_NO_MARK);
    c.v[KG_CT_DURATION] = 200e6 / 4.8e12 * 1e9 / 1.2; /* 120% of peak */
    CHECK(verdict(&c, &e, 4.8e12).decision == KG_CT_INVALID);
    c.v[KG_CT_DURATION] = 1e6;
    c.v[KG_CT_DRAM_PCT] = 130; /* the hardware's own ratio */
    CHECK(verdict(&c, &e, 0).decision == KG_CT_INVALID);
    c.v[KG_CT_DRAM_PCT] = 90;
    CHECK(verdict(&c, &e, 4.8e12).decision == KG_CT_NO_MARK);
    /* the work went to stream 0: the capture of the launch held no node */
    e.launch_empty = true;
    v = verdict(&c, &e, 4.8e12);
    CHECK(v.decision == KG_CT_INVALID && strstr(v.why, "stream 0 or another stream"));
    e.launch_empty = false;
    /* no range at all, or ranges that executed nothing: zeros are never a PASS */
    kg_ct_counts none = { 0 };
    v = verdict(&none, &e, 4.8e12);
    CHECK(v.decision == KG_CT_INVALID && strstr(v.why, "ran no kernel: is the work on another"));
    v = verdict(NULL, &e, 4.8e12);
    CHECK(v.decision == KG_CT_INVALID);
    kg_ct_counts zero = counts(0, 0, 0);
    v = verdict(&zero, &e, 4.8e12);
    CHECK(v.decision == KG_CT_INVALID && strstr(v.why, "no instruction"));
    /* INVALID decides alone: no mark moves on counts that cannot be true */
    kg_mark md = mark(1e9);
    e.m_dram = &md, e.launch_empty = true;
    v = verdict(&c, &e, 4.8e12);
    CHECK(v.decision == KG_CT_INVALID && v.mark_moves == 0 && isnan(v.bytes_ratio));
}

/* Excess DRAM traffic over the declaration, whatever the bound: WARN with the ratio, FAIL
 * where the bytes are binding; it never hides a worse finding. */
static void test_excess(void)
{
    /* the naive SGEMM at 4096^3: 8597 MB of DRAM against 268 MB declared, compute-bound */
    kg_ct_counts c = counts(8597e6, 2.0 * 4096 * 4096 * 4096, 1e9);
    kg_ct_expect e = { .bytes_moved = 268435456, .flops = 2.0 * 4096 * 4096 * 4096 };
    kg_ct_verdict v = verdict(&c, &e, 0);
    CHECK(v.decision == KG_CT_EXCESS && fabs(v.dram_ratio - 8597e6 / 268435456) < 1e-9);
    CHECK(strstr(v.why, "32.03x") != NULL && isnan(v.bytes_ratio));
    e.bytes_binding = true;
    v = verdict(&c, &e, 0);
    CHECK(v.decision == KG_CT_MODEL_WRONG && strstr(v.why, "binding"));
    /* the clean twin: A read once */
    c = counts(270e6, 2.0 * 4096 * 4096 * 4096, 1e9);
    v = verdict(&c, &e, 0);
    CHECK(v.decision == KG_CT_NO_MARK && v.dram_ratio < 1.5);
    /* a streaming case is checked on the DRAM basis already: no second finding */
    kg_ct_counts s = counts(400e6, 0, 1e6);
    kg_ct_expect es = { .bytes_moved = 200e6 };
    v = verdict(&s, &es, 0);
    CHECK(v.decision == KG_CT_MODEL_WRONG && isnan(v.dram_ratio));
    /* an L2-resident case with AI >= 1 (not checked before): its DRAM excess is seen */
    kg_ct_counts r = counts(30e6, 20e6, 1e6);
    kg_ct_expect er = { .bytes_moved = 10e6, .flops = 20e6 };
    CHECK(verdict(&r, &er, 0).decision == KG_CT_EXCESS);
    er.bytes_moved = 0.5e6; /* < 1 MiB: sector granularity */
    CHECK(verdict(&r, &er, 0).decision == KG_CT_NO_MARK);
    /* EXCESS (WARN) never hides a regression, a regression is never downgraded by it */
    c = counts(8597e6, 2.0 * 4096 * 4096 * 4096, 1e9);
    kg_mark mi = mark(1e9 / 1.05);
    kg_ct_expect em = { .bytes_moved = 268435456,
                        .flops = 2.0 * 4096 * 4096 * 4096,
                        .m_inst = &mi };
    CHECK(verdict(&c, &em, 0).decision == KG_CT_REGRESSED);
    kg_mark mok = mark(1e9);
    em.m_inst = &mok;
    CHECK(verdict(&c, &em, 0).decision == KG_CT_EXCESS);
}

/* A bf16 GEMM through packed HFMA2 in a case declaring tensor cores: GH100 counts HFMA2 on
 * the generic tensor pipe, never as hmma/gmma, so it FAILs; without the hmma counter the use
 * is not checked (never decided from the generic count). */
static void test_hfma2(void)
{
    double v[KG_CT_N] = { 0 };
    bool h[KG_CT_N];
    for (int i = 0; i < KG_CT_N; i++)
        h[i] = true;
    v[KG_CT_TENSOR] = 65536, v[KG_CT_HFMA] = 2097152; /* the spill twin's measured ratio */
    v[KG_CT_INST] = 1e5, v[KG_CT_DURATION] = 1e4;
    kg_ct_counts c = { 0 };
    kg_ct_add_kernel(&c, v, h);
    kg_ct_derive(&c);
    kg_ct_expect e = { .bytes_moved = 32768, .flops = 524288, .uses_tensor_cores = true };
    kg_ct_verdict r = verdict(&c, &e, 0);
    CHECK(c.tensor == 0 && r.decision == KG_CT_REGRESSED && strstr(r.why, "hmma/gmma"));
    v[KG_CT_TENSOR_HMMA] = 128; /* the wmma twin */
    kg_ct_counts t = { 0 };
    kg_ct_add_kernel(&t, v, h);
    kg_ct_derive(&t);
    CHECK(t.tensor == 128 && verdict(&t, &e, 0).decision == KG_CT_NO_MARK);
    h[KG_CT_TENSOR_HMMA] = h[KG_CT_TENSOR_GMMA] = false;
    kg_ct_counts n = { 0 };
    kg_ct_add_kernel(&n, v, h);
    kg_ct_derive(&n);
    r = verdict(&n, &e, 0);
    CHECK(isnan(n.tensor) && r.decision == KG_CT_NO_MARK && strstr(r.why, "not checked"));
}

int main(void)
{
    test_table();
    test_resolve();
    test_sums();
    test_model();
    test_tensor_flops();
    test_marks();
    test_mark_moves();
    test_tags();
    test_invalid();
    test_excess();
    test_hfma2();
    test_h200();
    return kg_test_done("test_counters");
}
