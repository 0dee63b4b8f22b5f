/* gemm_bf16 on Hopper: wgmma (warpgroup MMA from shared memory) fed by TMA, warp-specialized.
 *
 * Same contract as gemm_bf16.cu (C[M,N] fp32 row-major = A[M,K] bf16 row-major x B[N,K]^T,
 * B bf16 row-major [N,K]), restricted to tile-aligned shapes: M % 128 == 0, N % 256 == 0,
 * K % 64 == 0 (kg_gemm_bf16_wgmma_fits). kg_gemm_bf16_launch (gemm_bf16.cu) picks this kernel
 * when the device is sm_90 and this file's sm_90a image loaded, else the mma.sync kernel.
 *
 * This file is compiled for sm_90a (wgmma, setmaxnreg) and for the project's other real
 * architectures, where the kernel is an empty stub (so cudaFuncGetAttributes and the cubin
 * preflight see it everywhere, at 0 bytes of local memory); never for plain sm_90, so on an
 * sm_90 device the sm_90a image is the only candidate the loader can pick.
 *
 * Structure (CTA = 3 warpgroups, 384 threads, 1 CTA per SM, persistent over output tiles):
 *   warpgroup 0: producer. One thread issues TMA loads of a 128x64 A tile and a 256x64 B tile
 *                per K step into a 4-stage ring (48 KiB per stage, 128-byte swizzle, exactly
 *                the layout wgmma's descriptors expect) and arms the stage's "full" mbarrier
 *                with the byte count.
 *   warpgroups 1,2: consumers. Each owns 64 rows x 256 columns of the 128x256 output tile
 *                (128 fp32 accumulators per thread), waits on "full", issues four
 *                wgmma.m64n256k16 (K = 64), keeps one batch in flight, and releases the
 *                previous stage through its "empty" mbarrier (one arrive per consumer warp).
 * Tiles are visited in groups of KG_WG_GROUP_M row tiles so that the CTAs resident at one
 * time share A and B panels in L2. The epilogue stores straight from the accumulators
 * (each warp store covers 8 full 32-byte sectors) while the producer already streams the
 * next tile's K steps.
 */
#include <stdint.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include "cases.h"

#define KG_WG_BM 128
#define KG_WG_BN 256
#define KG_WG_BK 64
#define KG_WG_STAGES 4
#define KG_WG_THREADS KG_GEMM_WG_THREADS
#define KG_WG_GROUP_M 16
#define KG_WG_A_BYTES (KG_WG_BM * KG_WG_BK * 2)           /* 16 KiB */
#define KG_WG_B_BYTES (KG_WG_BN * KG_WG_BK * 2)           /* 32 KiB */
#define KG_WG_STAGE_BYTES (KG_WG_A_BYTES + KG_WG_B_BYTES) /* 48 KiB */
/* Ring + 1 KiB slack to align it to the 1024-byte swizzle atom + the mbarriers. */
#define KG_WG_SMEM KG_GEMM_WG_SMEM
static_assert(KG_WG_SMEM >= KG_WG_STAGES * KG_WG_STAGE_BYTES + 1024 + 2 * KG_WG_STAGES * 8,
              "KG_GEMM_WG_SMEM (cases.h) too small for the ring");

/* The kernel body exists only in the sm_90a image (the macro is set for arch-specific
 * targets, compute_90a). */
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KG_WG_BODY 1
#endif

#ifdef KG_WG_BODY
static __device__ __forceinline__ void wg_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void wg_mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done = 0;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
static __device__ __forceinline__ void wg_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
static __device__ __forceinline__ void wg_mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* 2-D TMA tile load; completion is signalled as transaction bytes on `bar`. */
static __device__ __forceinline__ void wg_tma_load(uint32_t dst, const CUtensorMap *map, int x,
                                                   int y, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"((uint64_t)map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}
/* Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
 * leading byte offset (unused for swizzled K-major operands; 16 by convention), stride byte
 * offset 1024 (8 rows x 128 bytes: one swizzle atom to the next), 128-byte swizzle mode. */
static __device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(16 >> 4) << 16) |
           ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}
/* d += A(64x16, smem) * B(256x16, smem)^T, both K-major (no transpose), fp32 accumulate. */
static __device__ __forceinline__ void wg_mma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db)
{
    asm volatile(
        "{\nwgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, 1, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db));
}

/* Output tile `t` -> (row tile, column tile), grouped: KG_WG_GROUP_M row tiles sweep all
 * column tiles together, so consecutive CTAs reuse the same B panels and A panels in L2. */
static __device__ __forceinline__ void wg_tile_coords(int t, int tiles_m, int tiles_n, int *tm,
                                                      int *tn)
{
    const int per_group = KG_WG_GROUP_M * tiles_n;
    const int first_m = (t / per_group) * KG_WG_GROUP_M;
    const int rows = min(tiles_m - first_m, KG_WG_GROUP_M);
    const int in = t % per_group;
    *tm = first_m + in % rows;
    *tn = in / rows;
}
#endif /* KG_WG_BODY */

__global__ void __launch_bounds__(KG_WG_THREADS, 1)
    gemm_bf16_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b, float *__restrict__ C, int M,
                           int N, int K)
{
#ifdef KG_WG_BODY
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(wg_smem);
    const uint32_t ring = (raw + 1023u) & ~1023u; /* swizzle atoms must be 1024-aligned */
    const uint32_t full = ring + KG_WG_STAGES * KG_WG_STAGE_BYTES; /* full[s] at +8s */
    const uint32_t empty = full + KG_WG_STAGES * 8;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int tiles_m = M / KG_WG_BM, tiles_n = N / KG_WG_BN, n_tiles = tiles_m * tiles_n;
    const int KT = K / KG_WG_BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < KG_WG_STAGES; s++) {
            wg_mbar_init(full + 8 * s, 1);  /* the producer's arrive.expect_tx */
            wg_mbar_init(empty + 8 * s, 8); /* one arrive per consumer warp */
        }
        /* Make the initialized barriers visible to the async proxy (TMA) too. */
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        /* Producer: give registers back to the consumers (setmaxnreg needs whole warpgroups). */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            int it = 0; /* K steps issued so far over all tiles: stage = it % S, lap = it / S */
            for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
                int tm, tn;
                wg_tile_coords(t, tiles_m, tiles_n, &tm, &tn);
                for (int kt = 0; kt < KT; kt++, it++) {
                    const int s = it % KG_WG_STAGES, lap = it / KG_WG_STAGES;
                    /* Lap 0 finds every stage free; lap L waits for the consumers' L-th
                     * release of stage s, i.e. phase (L - 1) of empty[s] completed. */
                    if (lap > 0)
                        wg_mbar_wait(empty + 8 * s, (uint32_t)((lap - 1) & 1));
                    const uint32_t a_dst = ring + s * KG_WG_STAGE_BYTES;
                    wg_mbar_expect_tx(full + 8 * s, KG_WG_STAGE_BYTES);
                    wg_tma_load(a_dst, &map_a, kt * KG_WG_BK, tm * KG_WG_BM, full + 8 * s);
                    wg_tma_load(a_dst + KG_WG_A_BYTES, &map_b, kt * KG_WG_BK, tn * KG_WG_BN,
                                full + 8 * s);
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1; /* consumer 0 takes tile rows 0-63, consumer 1 rows 64-127 */
        const int warp = tid / 32, lane = tid % 32;
        int it = 0;
        float d[128];
        for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
            int tm, tn;
            wg_tile_coords(t, tiles_m, tiles_n, &tm, &tn);
#pragma unroll
            for (int i = 0; i < 128; i++)
                d[i] = 0.0f;
            int prev = -1;
            for (int kt = 0; kt < KT; kt++, it++) {
                const int s = it % KG_WG_STAGES;
                wg_mbar_wait(full + 8 * s, (uint32_t)((it / KG_WG_STAGES) & 1));
                const uint32_t a_tile = ring + s * KG_WG_STAGE_BYTES + cw * (64 * KG_WG_BK * 2);
                const uint32_t b_tile = ring + s * KG_WG_STAGE_BYTES + KG_WG_A_BYTES;
                asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                for (int ks = 0; ks < KG_WG_BK / 16; ks++) /* +32 bytes per k16 in the atom */
                    wg_mma_m64n256k16(d, wg_desc(a_tile + ks * 32), wg_desc(b_tile + ks * 32));
                asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
                /* Keep this batch in flight; the previous one is done reading its stage. */
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                if (prev >= 0 && lane == 0)
                    wg_mbar_arrive(empty + 8 * prev);
                prev = s;
            }
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (prev >= 0 && lane == 0)
                wg_mbar_arrive(empty + 8 * prev);

            /* Accumulator layout of m64nNk16: warp w holds rows 16w..16w+15; per 8-column
             * chunk j, d[4j..4j+1] = (row, col..col+1), d[4j+2..4j+3] = (row+8, same cols),
             * row = lane/4, col = 8j + 2*(lane%4). */
            const int row = tm * KG_WG_BM + cw * 64 + warp * 16 + lane / 4;
            float *c0 = C + (size_t)row * N + tn * KG_WG_BN + 2 * (lane % 4);
            float *c1 = c0 + (size_t)8 * N;
#pragma unroll
            for (int j = 0; j < 32; j++) {
                *reinterpret_cast<float2 *>(c0 + 8 * j) = make_float2(d[4 * j], d[4 * j + 1]);
                *reinterpret_cast<float2 *>(c1 + 8 * j) = make_float2(d[4 * j + 2], d[4 * j + 3]);
            }
        }
    }
#else
    (void)map_a;
    (void)map_b;
    (void)C;
    (void)M;
    (void)N;
    (void)K;
#endif
}

/* ---- host side ------------------------------------------------------------------------- */

extern "C" int kg_gemm_bf16_wgmma_fits(int m, int n, int k)
{
    return m > 0 && n > 0 && k > 0 && m % KG_WG_BM == 0 && n % KG_WG_BN == 0 && k % KG_WG_BK == 0;
}

/* One-time probe: driver entry point for cuTensorMapEncodeTiled (through the runtime, so no
 * -lcuda), the 192 KiB shared-memory opt-in, and whether the loaded image is the sm_90a one
 * (binaryVersion 90 on a 9.0 device; the stub images report their own architecture).
 * C++ guarantees the static initializer runs once, thread-safely. */
typedef struct {
    int usable;
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    int sms;
} wg_probe;

static wg_probe wg_probe_run(void)
{
    wg_probe p = { 0, NULL, 0 };
    int dev = 0, major = 0, minor = 0;
    cudaFuncAttributes fa;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    void *fn = NULL;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        major != 9 || minor != 0 ||
        cudaFuncGetAttributes(&fa, gemm_bf16_wgmma_kernel) != cudaSuccess ||
        fa.binaryVersion != 90 ||
        cudaFuncSetAttribute(gemm_bf16_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             KG_WG_SMEM) != cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn) {
        (void)cudaGetLastError(); /* a failed probe only means "use the mma.sync kernel" */
        return p;
    }
    p.encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    p.usable = 1;
    return p;
}

static const wg_probe *wg_probe_get(void)
{
    static const wg_probe p = wg_probe_run();
    return &p;
}

extern "C" int kg_gemm_bf16_wgmma_available(void) { return wg_probe_get()->usable; }

/* Row-major [rows][k] bf16 matrix, box of box_rows x 64 (128 bytes: the swizzle span). */
static int wg_encode(const wg_probe *p, CUtensorMap *map, const uint16_t *base, int rows, int k,
                     int box_rows)
{
    int rc = 0;
    const cuuint64_t dims[2] = { (cuuint64_t)k, (cuuint64_t)rows };
    const cuuint64_t strides[1] = { (cuuint64_t)k * 2 };
    const cuuint32_t box[2] = { KG_WG_BK, (cuuint32_t)box_rows };
    const cuuint32_t estrides[2] = { 1, 1 };
    CUresult r = p->encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dims, strides,
                           box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        rc = kg_error_set(KG_ECUDA, __FILE__, __LINE__,
                          "cuTensorMapEncodeTiled(%d x %d bf16, box %d x %d) failed: CUresult %d",
                          rows, k, box_rows, KG_WG_BK, (int)r);
    return rc;
}

extern "C" int kg_gemm_bf16_wgmma_launch(const uint16_t *a, const uint16_t *b, float *c, int m,
                                         int n, int k, cudaStream_t s)
{
    int rc = 0;
    const wg_probe *p = wg_probe_get();
    CUtensorMap map_a, map_b;
    int tiles, grid;
    if (!p->usable || !kg_gemm_bf16_wgmma_fits(m, n, k)) {
        rc = kg_error_set(KG_EINVAL, __FILE__, __LINE__,
                          "gemm_bf16_wgmma: needs an sm_90 device with the sm_90a image and "
                          "M %% %d == 0, N %% %d == 0, K %% %d == 0; got M=%d N=%d K=%d",
                          KG_WG_BM, KG_WG_BN, KG_WG_BK, m, n, k);
        goto cleanup;
    }
    /* Encoding is host-only work (no CUDA call), cheap enough to redo per launch. */
    KG_TRY(wg_encode(p, &map_a, a, m, k, KG_WG_BM));
    KG_TRY(wg_encode(p, &map_b, b, n, k, KG_WG_BN));
    tiles = (m / KG_WG_BM) * (n / KG_WG_BN);
    grid = tiles < p->sms ? tiles : p->sms; /* persistent: at most one CTA per SM */
    gemm_bf16_wgmma_kernel<<<grid, KG_WG_THREADS, KG_WG_SMEM, s>>>(map_a, map_b, c, m, n, k);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}
