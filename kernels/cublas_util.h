/* cuBLAS helpers shared by gemm_bf16.cu (cuBLAS as the parity reference) and
 * cublas_gemm.cu (cuBLAS as the hot path). Internal; host code only. */
#ifndef KGATE_KERNELS_CUBLAS_UTIL_H
#define KGATE_KERNELS_CUBLAS_UTIL_H

#include "kgate/cublas.h" /* KG_CUBLAS_CHECK */

/* cuBLAS workspace set with cublasSetWorkspace: 32 MiB is what NVIDIA recommends for
 * Hopper (4 MiB suffices before it). With a user workspace cuBLAS allocates nothing on the
 * hot path. */
#define KG_CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)

/* Bind the handle to `stream` with our workspace. cublasSetStream() resets the workspace
 * to cuBLAS's default pool, so the workspace must be set again after every stream change.
 * Host-only calls: no allocation, no synchronization. */
static inline int kg_cublas_bind(cublasHandle_t h, cudaStream_t stream, void *ws, size_t ws_bytes)
{
    int rc = 0;
    KG_CUBLAS_CHECK(cublasSetStream(h, stream));
    KG_CUBLAS_CHECK(cublasSetWorkspace(h, ws, ws_bytes));
cleanup:
    return rc;
}

/* C[M,N] (fp32, row-major) = A[M,K] (bf16, row-major) * B[N,K]^T (bf16, row-major), fp32
 * accumulation. cuBLAS is column-major, and a row-major X[r,c] is the column-major X^T, so
 * we ask for the column-major C^T[N,M] = B[N,K] * A^T[K,M]:
 *   op(B) = T (B is stored K-contiguous, i.e. column-major B^T[K,N], ldb = K),
 *   op(A) = N (column-major A^T[K,M], lda = K), ldc = N.
 * This "TN" form is also cuBLAS's fastest layout. */
static inline int kg_cublas_gemm_bf16_tn(cublasHandle_t h, const uint16_t *a, const uint16_t *b,
                                         float *c, int m, int n, int k)
{
    int rc = 0;
    const float alpha = 1.0f, beta = 0.0f;
    KG_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b, CUDA_R_16BF, k, a,
                                 CUDA_R_16BF, k, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
cleanup:
    return rc;
}

#endif /* KGATE_KERNELS_CUBLAS_UTIL_H */
