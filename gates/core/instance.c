/* Case instances: run a case's setup on a private non-blocking stream, poison, prepare,
 * launch, copy; one list of outputs (io.outputs) whether the case has one or several. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

/* Case code runs under the phase it is in (a dead worker's fault names it); the gate's own
 * phase comes back afterwards. */
typedef struct {
    char gate[512], id[512], phase[512];
} in_phase;

static void in_phase_enter(in_phase *saved, const char *phase)
{
    kg_phase_get(saved->gate, saved->id, saved->phase, sizeof saved->phase);
    kg_phase_set(NULL, NULL, phase);
}

static void in_phase_leave(const in_phase *saved) { kg_phase_set(NULL, NULL, saved->phase); }

/* One list of outputs for every gate: a one-output case's fields become outputs[0]. */
static int in_outputs(kg_case_io *io, const char *id)
{
    static const char *const names[KG_MAX_OUTPUTS] = { "out0", "out1", "out2", "out3",
                                                       "out4", "out5", "out6", "out7" };
    if (io->n_outputs == 0) {
        io->outputs[0] = (kg_output){ .name = "out",
                                      .ptr = io->out,
                                      .count = io->out_count,
                                      .dtype = io->out_dtype,
                                      .rows = io->rows };
        io->n_outputs = 1;
    }
    if (io->n_outputs < 0 || io->n_outputs > KG_MAX_OUTPUTS)
        return KG_ERR(KG_EINVAL, "case '%s': io.n_outputs %d is not in 1..%d", id, io->n_outputs,
                      KG_MAX_OUTPUTS);
    for (int i = 0; i < io->n_outputs; i++) {
        kg_output *o = &io->outputs[i];
        if (!o->name)
            o->name = names[i];
        if (!o->ptr || o->count == 0 || kg_dtype_size(o->dtype) == 0)
            return KG_ERR(KG_EINVAL,
                          "case '%s': setup left no output %d (io.out/out_count/"
                          "out_dtype, or outputs[%d].ptr/count/dtype)",
                          id, i, i);
    }
    io->out = io->outputs[0].ptr;
    io->out_count = io->outputs[0].count;
    io->out_dtype = io->outputs[0].dtype;
    io->rows = io->outputs[0].rows;
    return 0;
}

int kg_instance_open(kg_instance *inst, const kg_case_desc *desc, uint64_t seed, int device)
{
    in_phase saved;
    in_phase_enter(&saved, "setup"); /* and back to the gate's phase: its time is not setup's */
    int rc = 0;
    memset(inst, 0, sizeof *inst);
    inst->desc = desc;
    /* Non-blocking: the hot path must never depend on the legacy default stream. */
    KG_CUDA_CHECK(cudaStreamCreateWithFlags(&inst->stream, cudaStreamNonBlocking));
    kg_setup_args a = { kg_case_seed(seed, desc->id), desc->params, inst->stream, device };
    rc = desc->setup(&a, &inst->state, &inst->io);
    if (rc < 0)
        goto cleanup;
    inst->set_up = true;
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
    KG_TRY(in_outputs(&inst->io, desc->id));
cleanup:
    if (rc < 0)
        kg_instance_close(inst); /* a failed setup stays named: a fault in it surfaced there */
    else
        in_phase_leave(&saved);
    return rc;
}

void kg_instance_close(kg_instance *inst)
{
    if (inst->set_up && inst->desc->teardown) {
        in_phase saved;
        cudaError_t before = cudaStreamSynchronize(inst->stream);
        in_phase_enter(&saved, "teardown");
        inst->desc->teardown(inst->state);
        /* A kernel of teardown's own that faulted leaves the phase named (the worker then
         * finds the context dead and reports it); a context already lost keeps its phase. */
        if (before != cudaSuccess || cudaDeviceSynchronize() == cudaSuccess)
            in_phase_leave(&saved);
    }
    if (inst->stream)
        (void)cudaStreamDestroy(inst->stream);
    inst->stream = NULL;
    inst->state = NULL;
    inst->set_up = false;
}

static size_t in_bytes(const kg_output *o) { return o->count * kg_dtype_size(o->dtype); }

size_t kg_instance_out_offset(const kg_instance *inst, int i)
{
    size_t off = 0;
    for (int j = 0; j < i && j < inst->io.n_outputs; j++)
        off += in_bytes(&inst->io.outputs[j]);
    return off;
}

size_t kg_instance_out_bytes(const kg_instance *inst)
{
    return kg_instance_out_offset(inst, inst->io.n_outputs);
}

int kg_instance_poison(kg_instance *inst)
{
    int rc = 0;
    for (int i = 0; i < inst->io.n_outputs; i++)
        KG_CUDA_CHECK(cudaMemsetAsync(inst->io.outputs[i].ptr, 0xFF, in_bytes(&inst->io.outputs[i]),
                                      inst->stream));
cleanup:
    return rc;
}

int kg_instance_copy_out(void *host, kg_instance *inst)
{
    int rc = 0;
    for (int i = 0; i < inst->io.n_outputs; i++)
        KG_CUDA_CHECK(cudaMemcpyAsync((char *)host + kg_instance_out_offset(inst, i),
                                      inst->io.outputs[i].ptr, in_bytes(&inst->io.outputs[i]),
                                      cudaMemcpyDeviceToHost, inst->stream));
cleanup:
    return rc;
}

int kg_instance_prepare(kg_instance *inst)
{
    in_phase saved;
    if (!inst->desc->prepare)
        return 0;
    in_phase_enter(&saved, "prepare");
    int rc = inst->desc->prepare(inst->state, inst->stream);
    in_phase_leave(&saved);
    return rc;
}

/* The host output's pages touched over the host threads while the launch runs: a pageable
 * copy into fresh pages faults them in one at a time (a 512 MiB buffer's first touch took 1.4 s
 * on one thread of a 2-core VM). Small outputs: one part. */
static void inst_touch_part(void *ctx, size_t i0, size_t i1, size_t part)
{
    KG_UNUSED(part);
    const size_t *b = ctx; /* {address, bytes} */
    size_t lo = i0 << 16, hi = i1 << 16 < b[1] ? i1 << 16 : b[1];
    if (lo < hi)
        memset((char *)b[0] + lo, 0, hi - lo);
}

static void inst_touch(void *h, size_t bytes)
{
    size_t b[2] = { (size_t)h, bytes }, slices = (bytes >> 16) + 1; /* 64 KiB each */
    kg_par_for(slices, bytes < ((size_t)16 << 20) ? 1 : (size_t)kg_par_threads(), inst_touch_part,
               b);
}

int kg_instance_run_copy(void **host_out, kg_instance *inst)
{
    kg_phase_set(NULL, NULL, "launch");
    int rc = 0;
    size_t bytes = kg_instance_out_bytes(inst);
    void *h = malloc(bytes);
    *host_out = NULL;
    if (!h)
        return KG_ERR(KG_ENOMEM, "out of memory (%zu bytes) for the output of '%s'", bytes,
                      inst->desc->id);
    KG_TRY(kg_instance_prepare(inst));
    KG_TRY(inst->desc->launch(inst->state, inst->stream));
    inst_touch(h, bytes);
    KG_TRY(kg_instance_copy_out(h, inst));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
    *host_out = h;
    h = NULL;
cleanup:
    free(h);
    return rc;
}
