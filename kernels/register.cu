/* Registration of every reference case (the planted defects register separately, in
 * defects/register.cu, and only the selftest runner links them). */
#include "cases.h"

extern "C" int kg_reference_cases_register(kg_registry *reg);

extern "C" int kg_reference_cases_register(kg_registry *reg)
{
    int rc = 0;
    KG_TRY(kg_registry_add_all(reg, kg_axpy_cases, kg_axpy_n_cases));
    KG_TRY(kg_registry_add_all(reg, kg_reduce_sum_cases, kg_reduce_sum_n_cases));
    KG_TRY(kg_registry_add_all(reg, kg_rmsnorm_cases, kg_rmsnorm_n_cases));
    KG_TRY(kg_registry_add_all(reg, kg_softmax_cases, kg_softmax_n_cases));
    KG_TRY(kg_registry_add_all(reg, kg_gemm_bf16_cases, kg_gemm_bf16_n_cases));
    KG_TRY(kg_registry_add_all(reg, kg_cublas_gemm_cases, kg_cublas_gemm_n_cases));
cleanup:
    return rc;
}
