/* The counters gate's metric table and the per-launch sums (pure: the CPU tests drive it).
 * Names are Nsight Compute / Perfworks metric names (base name + rollup); each figure lists
 * candidates, preferred first, because chips and CUPTI versions differ: the session keeps the
 * first whose base name the device's metric enumeration lists. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "counters/counters.h"

#define CT_SUM(k, a, b, c, s)    \
    {                            \
        k, { a, b, c }, false, s \
    }
#define CT_PCT(k, a, b)              \
    {                                \
        k, { a, b, NULL }, true, 1.0 \
    }

const kg_ct_metric_info kg_ct_metrics[KG_CT_N] = {
    [KG_CT_DRAM_READ] = CT_SUM("dram_read_bytes", "dram__bytes_read.sum", NULL, NULL, 1.0),
    [KG_CT_DRAM_WRITE] = CT_SUM("dram_write_bytes", "dram__bytes_write.sum", NULL, NULL, 1.0),
    [KG_CT_SYSMEM] = CT_SUM("sysmem_bytes", "lts__t_sectors_aperture_sysmem.sum",
                            "lts__t_sectors_srcunit_tex_aperture_sysmem.sum", NULL, 32.0),
    [KG_CT_SYSMEM_RD] = CT_SUM("sysmem_read_bytes", "lts__t_sectors_aperture_sysmem_op_read.sum",
                               "lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum", NULL,
                               32.0),
    [KG_CT_SYSMEM_WR] = CT_SUM("sysmem_write_bytes", "lts__t_sectors_aperture_sysmem_op_write.sum",
                               "lts__t_sectors_srcunit_tex_aperture_sysmem_op_write.sum", NULL,
                               32.0),
    [KG_CT_L2_SECTORS] = CT_SUM("l2_bytes", "lts__t_sectors_srcunit_tex.sum", "lts__t_sectors.sum",
                                NULL, 32.0),
    [KG_CT_FADD] = CT_SUM("fadd", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_FMUL] = CT_SUM("fmul", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_FFMA] = CT_SUM("ffma", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_DADD] = CT_SUM("dadd", "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_DMUL] = CT_SUM("dmul", "sm__sass_thread_inst_executed_op_dmul_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_DFMA] = CT_SUM("dfma", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_HADD] = CT_SUM("hadd", "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_HMUL] = CT_SUM("hmul", "sm__sass_thread_inst_executed_op_hmul_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_HFMA] = CT_SUM("hfma", "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", NULL, NULL,
                          1.0),
    [KG_CT_TENSOR] = CT_SUM("tensor_inst", "sm__inst_executed_pipe_tensor.sum", NULL, NULL, 1.0),
    /* hmma (mma.sync / wmma) and gmma (wgmma) warp instructions: what "uses tensor cores"
     * is read from; the smsp__ rollups are the same counts where only they are listed */
    [KG_CT_TENSOR_HMMA] = CT_SUM("tensor_hmma_inst", "sm__inst_executed_pipe_tensor_op_hmma.sum",
                                 "smsp__inst_executed_pipe_tensor_op_hmma.sum",
                                 "sm__inst_executed_pipe_tensor_subpipe_hmma.sum", 1.0),
    [KG_CT_TENSOR_GMMA] = CT_SUM("tensor_gmma_inst", "sm__inst_executed_pipe_tensor_op_gmma.sum",
                                 "smsp__inst_executed_pipe_tensor_op_gmma.sum", NULL, 1.0),
    /* tensor FLOPs: the ops-path counters of ncu's tensor roofline (NOTE: reported not to see
     * wgmma on GH100: kg_ct_derive then marks the FLOPs partial) */
    [KG_CT_TOPS_BF16] = CT_SUM("tensor_ops_bf16", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                               "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", NULL, 1.0),
    [KG_CT_TOPS_FP16] = CT_SUM("tensor_ops_fp16", "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
                               "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum", NULL, 1.0),
    [KG_CT_TOPS_FP16H] = CT_SUM("tensor_ops_fp16_fp16", "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
                                "sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_off.sum", NULL,
                                1.0),
    [KG_CT_TOPS_TF32] = CT_SUM("tensor_ops_tf32", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
                               "sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum", NULL, 1.0),
    [KG_CT_TOPS_FP64] = CT_SUM("tensor_ops_fp64", "sm__ops_path_tensor_src_fp64_dst_fp64.sum", NULL,
                               NULL, 1.0),
    [KG_CT_LOCAL_LD] = CT_SUM("local_ld", "sm__sass_inst_executed_op_local_ld.sum",
                              "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", NULL, 1.0),
    [KG_CT_LOCAL_ST] = CT_SUM("local_st", "sm__sass_inst_executed_op_local_st.sum",
                              "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum", NULL, 1.0),
    [KG_CT_INST] = CT_SUM("inst", "sm__inst_executed.sum", NULL, NULL, 1.0),
    [KG_CT_OCCUPANCY] = CT_PCT("occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
                               NULL),
    [KG_CT_SM_PCT] = CT_PCT("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                            NULL),
    [KG_CT_DRAM_PCT] = CT_PCT("dram_throughput_pct",
                              "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                              "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    [KG_CT_DURATION] = CT_SUM("duration_ns", "gpu__time_duration.sum", NULL, NULL, 1.0),
};

void kg_ct_base_name(char *buf, size_t n, const char *metric)
{
    size_t len = strcspn(metric, ".");
    if (len >= n)
        len = n - 1;
    memcpy(buf, metric, len);
    buf[len] = '\0';
}

static bool ct_known(const char *base, const char *const *known, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (known[i] && strcmp(known[i], base) == 0)
            return true;
    return false;
}

size_t kg_ct_resolve(int chosen[KG_CT_N], const char *const *known, size_t n_known)
{
    size_t got = 0;
    for (int i = 0; i < KG_CT_N; i++) {
        chosen[i] = -1;
        for (int a = 0; a < KG_CT_MAX_ALTS && kg_ct_metrics[i].names[a]; a++) {
            char base[160];
            kg_ct_base_name(base, sizeof base, kg_ct_metrics[i].names[a]);
            if (ct_known(base, known, n_known)) {
                chosen[i] = a;
                got++;
                break;
            }
        }
    }
    return got;
}

/* Ratios are averaged weighted by the kernel's duration (v holds the weighted sum until
 * kg_ct_derive divides); without a duration every kernel weighs 1. */
void kg_ct_add_kernel(kg_ct_counts *c, const double vals[KG_CT_N], const bool have[KG_CT_N])
{
    double w = have[KG_CT_DURATION] && vals[KG_CT_DURATION] > 0 ? vals[KG_CT_DURATION] : 1.0;
    if (c->n_kernels == 0)
        for (int i = 0; i < KG_CT_N; i++)
            c->have[i] = true;
    for (int i = 0; i < KG_CT_N; i++) {
        if (!have[i] || !isfinite(vals[i])) {
            c->have[i] = false;
            continue;
        }
        c->v[i] += kg_ct_metrics[i].ratio ? vals[i] * w : vals[i] * kg_ct_metrics[i].scale;
    }
    c->weight_sum += w;
    c->n_kernels++;
}

static double ct_get(const kg_ct_counts *c, kg_ct_metric i) { return c->have[i] ? c->v[i] : NAN; }

/* Tensor FLOPs: the ops-path counters the device has. Tensor instructions that no ops-path
 * counter saw (none resolved, or wgmma on a chip whose ops path ignores it) leave the FLOPs
 * partial: a lower bound, never a guess from an instruction shape. */
static void ct_derive_tensor(kg_ct_counts *c)
{
    static const kg_ct_metric ops[] = { KG_CT_TOPS_BF16, KG_CT_TOPS_FP16, KG_CT_TOPS_FP16H,
                                        KG_CT_TOPS_TF32, KG_CT_TOPS_FP64 };
    double h = ct_get(c, KG_CT_TENSOR_HMMA), g = ct_get(c, KG_CT_TENSOR_GMMA);
    /* Tensor-core use is read from the hmma / gmma instruction counters only: on GH100 the
     * generic pipe counter (sm__inst_executed_pipe_tensor) also counts HFMA2, so a bf16 GEMM
     * through packed HFMA2 would pass for a tensor-core one. Without the hmma
     * counter the use is unknown (NaN: not checked), never the generic count. */
    c->tensor = isnan(h) ? NAN : isnan(g) ? h : h + g;
    c->tensor_flops = NAN;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (c->have[ops[i]])
            c->tensor_flops = (isnan(c->tensor_flops) ? 0 : c->tensor_flops) + c->v[ops[i]];
    /* tensor instructions, or without the hmma counter anything on the generic pipe (maybe
     * tensor work), that no ops-path counter turned into FLOPs: a lower bound */
    double seen = isfinite(c->tensor) ? c->tensor : ct_get(c, KG_CT_TENSOR);
    if (seen > 0 && !(c->tensor_flops > 0))
        c->flops_partial = true;
    if (c->tensor_flops > 0)
        c->flops = isfinite(c->flops) ? c->flops + c->tensor_flops : c->tensor_flops;
}

void kg_ct_derive(kg_ct_counts *c)
{
    for (int i = 0; i < KG_CT_N; i++) {
        if (!c->have[i] || c->n_kernels == 0)
            c->v[i] = NAN, c->have[i] = false;
        else if (kg_ct_metrics[i].ratio)
            c->v[i] = c->weight_sum > 0 ? c->v[i] / c->weight_sum : NAN;
    }
    c->dram_bytes = ct_get(c, KG_CT_DRAM_READ) + ct_get(c, KG_CT_DRAM_WRITE);
    c->sysmem_bytes = ct_get(c, KG_CT_SYSMEM);
    c->sysmem_read_bytes = ct_get(c, KG_CT_SYSMEM_RD);
    c->sysmem_write_bytes = ct_get(c, KG_CT_SYSMEM_WR);
    if (isnan(c->sysmem_bytes) && isfinite(c->sysmem_read_bytes + c->sysmem_write_bytes))
        c->sysmem_bytes = c->sysmem_read_bytes + c->sysmem_write_bytes;
    c->l2_bytes = ct_get(c, KG_CT_L2_SECTORS);
    static const kg_ct_metric fp[] = { KG_CT_FADD, KG_CT_FMUL, KG_CT_FFMA, KG_CT_DADD, KG_CT_DMUL,
                                       KG_CT_DFMA, KG_CT_HADD, KG_CT_HMUL, KG_CT_HFMA };
    int have = 0;
    c->flops = 0;
    c->flops_partial = false;
    for (size_t i = 0; i < sizeof fp / sizeof fp[0]; i++) {
        if (!c->have[fp[i]]) {
            c->flops_partial = true;
            continue;
        }
        /* an FMA is two operations */
        c->flops += (fp[i] == KG_CT_FFMA || fp[i] == KG_CT_DFMA || fp[i] == KG_CT_HFMA ? 2 : 1) *
                    c->v[fp[i]];
        have++;
    }
    if (!have)
        c->flops = NAN;
    c->spill = ct_get(c, KG_CT_LOCAL_LD) + ct_get(c, KG_CT_LOCAL_ST);
    ct_derive_tensor(c);
}
