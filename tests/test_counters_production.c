/* `run --production` advances counter marks (gates/counters/counters_production.c) through the
 * bench ratchet: a passing run's counters become candidates where the gate's rule lets them
 * move (kg_ct_verdict.mark_moves: no mark yet, or beaten by the regression margin), a mark
 * moves only when the run beats it (lower DRAM bytes / instructions, higher occupancy / tensor
 * instructions), a noise-sized gain moves nothing, a 0 or unavailable count is no candidate,
 * and a run with any failing row advances nothing. */
#include <math.h>
#include <string.h>
#include "counters/counters.h"
#include "marks/marks.h"
#include "production/production.h"
#include "fake_run.h"
#include "kg_test.h"

static const kg_mark *find(const kg_marks *m, const char *id, const char *metric)
{
    return kg_marks_find(m, "GPU X/sm_90", id, metric);
}

/* A counters row as counters.c leaves it: decided against the case's marks in m (the
 * mark_moves of the rule), then given the decision the test wants. */
static kg_counters_row *ct_row(const kg_marks *m, const char *id, double dram, double inst,
                               double occ, kg_ct_decision dec)
{
    kg_counters_row *b = calloc(1, sizeof *b);
    for (int i = 0; i < KG_CT_N; i++)
        b->c.v[i] = NAN;
    b->c.n_kernels = 1;
    b->c.dram_bytes = dram;
    b->c.v[KG_CT_INST] = inst, b->c.have[KG_CT_INST] = true;
    b->c.v[KG_CT_OCCUPANCY] = occ, b->c.have[KG_CT_OCCUPANCY] = true;
    b->c.spill = 0;    /* no spills: no candidate */
    b->c.tensor = NAN; /* unavailable: no candidate */
    b->c.sysmem_bytes = 812320;
    b->c.flops = b->c.tensor_flops = b->c.l2_bytes = NAN;
    b->c.sysmem_read_bytes = b->c.sysmem_write_bytes = NAN;
    kg_ct_expect e = { .bytes_moved = dram,
                       .m_dram = find(m, id, KG_CT_MARK_DRAM),
                       .m_inst = find(m, id, KG_CT_MARK_INST),
                       .m_occ = find(m, id, KG_CT_MARK_OCC),
                       .m_sysmem = find(m, id, KG_CT_MARK_SYSMEM) };
    kg_ct_decide_opts o = KG_CT_DECIDE_OPTS_INIT;
    o.l2_bytes = 40e6; /* both cases stream >= 2x L2: their DRAM bytes are gated */
    CHECK(kg_ct_decide(&b->v, &b->c, &e, &o) == 0);
    b->v.decision = dec;
    snprintf(b->device_class, sizeof b->device_class, "GPU X/sm_90");
    b->time_s = b->ai = b->tflops = b->gbps = b->wall_s = NAN;
    return b;
}

/* Every gate over both cases (no bench figures); counters rows with the given counts. */
static void fill(kg_run *run, const kg_marks *m, const kg_device_info *dev, double dram_a,
                 double occ_a, bool fail_b)
{
    memset(run, 0, sizeof *run);
    run->command = "run";
    run->sel = (kg_selection){ .idx = NULL, .n = 2 };
    run->dev = *dev;
    run->env = (kg_gate_env){ .seed = 1, .dev = &run->dev, .diagnostic = false };
    kg_report_new(&run->rep, "run", false);
    kg_report_set_device(run->rep, dev);
    for (size_t g = 0; g < kg_n_gates; g++)
        for (size_t c = 0; c < 2; c++) {
            if (kg_gates[g] != &kg_gate_counters) {
                add_row(run, kg_gates[g], c, KG_VERDICT_PASS, NULL);
                continue;
            }
            bool f = fail_b && c == 1;
            add_row(run, kg_gates[g], c, f ? KG_VERDICT_FAIL : KG_VERDICT_PASS,
                    c == 0 ? ct_row(m, "op/a", dram_a, 5e6, occ_a, KG_CT_NO_MARK)
                           : ct_row(m, "op/b", 2e8, 1e7, 60, f ? KG_CT_REGRESSED : KG_CT_OK));
        }
}

/* One production step of a run onto m: how many marks moved (-1: refused / not passed). */
static int step(kg_marks *m, double dram_a, double occ_a, bool fail_b)
{
    kg_device_info dev = { .name = "GPU X",
                           .cc_major = 9,
                           .cc_minor = 0,
                           .driver_version = 13000,
                           .runtime_version = 13000 };
    kg_run run;
    kg_advance_input *in = NULL;
    kg_mark_moves mv = { NULL, 0 };
    int moved = -1;
    fill(&run, m, &dev, dram_a, occ_a, fail_b);
    CHECK(kg_advance_from_run(&in, &run, "test") == 0 && in);
    if (in && in->all_passed && kg_advance_apply(m, in, &mv) == 0)
        moved = (int)mv.n;
    if (in && !in->all_passed)
        CHECK(in->n_cands == 0); /* a failing run gives no candidate at all */
    kg_mark_moves_free(&mv);
    kg_advance_input_free(in);
    kg_run_free(&run);
    return moved;
}

int main(void)
{
    kg_marks *m = NULL;
    CHECK(kg_marks_new(&m) == 0);
    /* first production run: dram, inst, occupancy, sysmem of both cases (no spill/tensor) */
    CHECK(step(m, 1e8, 50, false) == 8);
    const kg_mark *d = find(m, "op/a", KG_CT_MARK_DRAM);
    CHECK(d && d->value == 1e8 && d->direction == KG_LOWER_IS_BETTER);
    CHECK(find(m, "op/a", KG_CT_MARK_SPILL) == NULL && find(m, "op/a", KG_CT_MARK_TENSOR) == NULL);
    const kg_mark *o = find(m, "op/a", KG_CT_MARK_OCC);
    CHECK(o && o->value == 50 && o->direction == KG_HIGHER_IS_BETTER);
    /* worse counts never move a mark (the ratchet) */
    CHECK(step(m, 1.1e8, 40, false) == 0);
    CHECK(find(m, "op/a", KG_CT_MARK_DRAM)->value == 1e8);
    CHECK(find(m, "op/a", KG_CT_MARK_OCC)->value == 50);
    /* gains inside the regression margin are noise: nothing moves (on the H200 a second
     * identical production run used to move 20 counter marks this way) */
    CHECK(step(m, 0.995e8, 54, false) == 0);
    CHECK(find(m, "op/a", KG_CT_MARK_DRAM)->value == 1e8);
    /* gains beyond it move the mark: 10% fewer DRAM bytes, 6 points of occupancy */
    CHECK(step(m, 0.9e8, 56, false) == 2);
    CHECK(find(m, "op/a", KG_CT_MARK_DRAM)->value == 0.9e8);
    CHECK(find(m, "op/a", KG_CT_MARK_OCC)->value == 56);
    /* a failing run (op/b REGRESSED) advances nothing, however good op/a looks */
    CHECK(step(m, 0.5e8, 70, true) == -1);
    CHECK(find(m, "op/a", KG_CT_MARK_DRAM)->value == 0.9e8);
    kg_marks_free(m);
    return kg_test_done("test_counters_production");
}
