/* Case instances: run a case's setup on a private non-blocking stream, poison, launch, copy. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

int kg_instance_open(kg_instance *inst, const kg_case_desc *desc, uint64_t seed, int device)
{
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
    if (!inst->io.out || inst->io.out_count == 0 || kg_dtype_size(inst->io.out_dtype) == 0) {
        rc = KG_ERR(KG_EINVAL, "case '%s': setup left no output (io.out/out_count/out_dtype)",
                    desc->id);
        goto cleanup;
    }
cleanup:
    if (rc < 0)
        kg_instance_close(inst);
    return rc;
}

void kg_instance_close(kg_instance *inst)
{
    if (inst->set_up && inst->desc->teardown) {
        (void)cudaStreamSynchronize(inst->stream);
        inst->desc->teardown(inst->state);
    }
    if (inst->stream)
        (void)cudaStreamDestroy(inst->stream);
    inst->stream = NULL;
    inst->state = NULL;
    inst->set_up = false;
}

size_t kg_instance_out_bytes(const kg_instance *inst)
{
    return inst->io.out_count * kg_dtype_size(inst->io.out_dtype);
}

int kg_instance_poison(kg_instance *inst)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaMemsetAsync(inst->io.out, 0xFF, kg_instance_out_bytes(inst), inst->stream));
cleanup:
    return rc;
}

int kg_instance_run_copy(void **host_out, kg_instance *inst)
{
    int rc = 0;
    size_t bytes = kg_instance_out_bytes(inst);
    void *h = malloc(bytes);
    *host_out = NULL;
    if (!h)
        return KG_ERR(KG_ENOMEM, "out of memory (%zu bytes) for the output of '%s'", bytes,
                      inst->desc->id);
    KG_TRY(inst->desc->launch(inst->state, inst->stream));
    KG_CUDA_CHECK(cudaMemcpyAsync(h, inst->io.out, bytes, cudaMemcpyDeviceToHost, inst->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
    *host_out = h;
    h = NULL;
cleanup:
    free(h);
    return rc;
}
