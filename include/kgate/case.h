/* kgate public API, part of kgate/kgate.h (which includes every part): data types, parity policies, outputs and the case descriptor (kg_case_desc).
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_CASE_H
#define KGATE_CASE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "kgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data types and parity ---------------------------------------------------------- */

/* Element types of outputs and references. bf16/f16 are raw 16-bit patterns (uint16_t). */
typedef enum {
    KG_DTYPE_F32 = 0,
    KG_DTYPE_F64 = 1,
    KG_DTYPE_BF16 = 2,
    KG_DTYPE_F16 = 3,
    KG_DTYPE_I32 = 4,
    KG_DTYPE_U8 = 5
} kg_dtype;

/* Bytes per element (0 for a value outside kg_dtype). */
size_t kg_dtype_size(kg_dtype t);
/* "f32", "bf16", ... (a static string). */
const char *kg_dtype_name(kg_dtype t);

typedef enum {
    KG_PARITY_TOLERANCE = 0, /* all three thresholds must hold; NaN/Inf never pass */
    KG_PARITY_BITWISE = 1    /* output bytes equal the reference bytes (ref_dtype == out dtype) */
} kg_parity_kind;

/* How the parity gate compares the output (converted to double) with the reference.
 * Derive the thresholds from the kernel's error bound (say how in a comment): loose enough
 * for correct rounding differences, tight enough that a wrong element fails. */
typedef struct {
    kg_parity_kind kind;
    double max_abs;    /* max |out - ref| allowed (>= 0) */
    double max_rel_l2; /* ||out - ref||_2 / ||ref||_2 allowed (>= 0) */
    double min_cosine; /* cosine(out, ref) required (<= 1) */
} kg_parity_policy;

#define KG_PARITY_TOLERANCE_INIT(abs_, rel_l2_, cos_)  \
    {                                                  \
        KG_PARITY_TOLERANCE, (abs_), (rel_l2_), (cos_) \
    }
#define KG_PARITY_BITWISE_INIT           \
    {                                    \
        KG_PARITY_BITWISE, 0.0, 0.0, 1.0 \
    }

/* ---- cases ---------------------------------------------------------------------------- */

/* A __global__ function the case launches, with the launch configuration it uses:
 * the resource preflight reads its attributes and theoretical occupancy. `name` is the
 * source-level name (for templates as the demangler prints it, e.g. "k<float, 128>").
 * Use KG_KERNEL in a .cu file (where `fn` is the kernel itself). */
typedef struct {
    const void *func;    /* the kernel's host stub: (const void *)my_kernel */
    const char *name;    /* static string */
    int block_threads;   /* threads per block launch() uses (> 0) */
    size_t dynamic_smem; /* dynamic shared memory bytes per block launch() uses */
} kg_kernel_ref;

#define KG_KERNEL(fn, block, smem)                       \
    {                                                    \
        (const void *)(fn), #fn, (block), (size_t)(smem) \
    }
/* The same for a kernel whose name has commas (a template of several arguments, which would
 * split KG_KERNEL's first argument): the kernel comes last, KG_KERNEL_T(256, 0, sgemm<64, 64, 8>).
 * The name is the text as written; spaces do not matter to the preflight's lookup. */
#define KG_KERNEL_T(block, smem, ...)                                      \
    {                                                                      \
        (const void *)(__VA_ARGS__), #__VA_ARGS__, (block), (size_t)(smem) \
    }

/* Passed to setup(); valid only during that call (copy what you need into your state). */
typedef struct {
    uint64_t seed;       /* fill inputs from this seed (kg_rng_*), never zeros. Derived
                            * from the run's printed seed and the case id: --seed N repeats
                            * the same inputs */
    const void *params;  /* the case's kg_case_desc.params */
    cudaStream_t stream; /* a non-blocking stream setup may use; kgate synchronizes it after
                            * setup returns. Owned by kgate: never destroy it */
    int device;          /* current device ordinal (already selected) */
} kg_setup_args;

/* One output of a case with several (kg_case_io.outputs): layernorm's out, mean and rstd, an
 * optimizer's params, m and v. Same rules as the single output below. */
typedef struct {
    const char *name; /* "mean" (report and messages; static string; NULL: "out<i>") */
    void *ptr;        /* device pointer, valid until teardown() */
    size_t count;     /* elements (> 0) */
    kg_dtype dtype;
    size_t rows;                    /* batch invariance rows of this output (0 = n/a) */
    const kg_parity_policy *parity; /* its own policy (static), or NULL: kg_case_desc.parity */
    /* ---- optional, appended; zero keeps the case's reference dtype ---------- */
    int has_ref_dtype;  /* nonzero: this output's reference is ref_dtype below, not
                           * kg_case_desc.ref_dtype (KG_DTYPE_F32 is 0, hence the flag) */
    kg_dtype ref_dtype; /* read only with has_ref_dtype */
} kg_output;
#define KG_MAX_OUTPUTS 8

/* An output without a compound literal (`(kg_output){...}` is not C++): every field not named
 * is zero, so it keeps the case's reference dtype. parity may be NULL. */
static inline kg_output kg_output_make(const char *name, void *ptr, size_t count, kg_dtype dtype,
                                       size_t rows, const kg_parity_policy *parity)
{
#ifdef __cplusplus
    kg_output o = {};
#else
    kg_output o = { 0 };
#endif
    o.name = name;
    o.ptr = ptr;
    o.count = count;
    o.dtype = dtype;
    o.rows = rows;
    o.parity = parity;
    return o;
}
/* `o` with a reference dtype of its own: kg_output_ref_dtype(kg_output_make(...), KG_DTYPE_F32). */
static inline kg_output kg_output_ref_dtype(kg_output o, kg_dtype ref_dtype)
{
    o.has_ref_dtype = 1;
    o.ref_dtype = ref_dtype;
    return o;
}

/* Filled by setup(): the output(s) the gates check. The buffers belong to the case (allocate
 * them in setup, free them in teardown); kgate only reads them, and may overwrite them with a
 * poison pattern (0xFF bytes) before a launch, so launch() must write every element. */
typedef struct {
    void *out;        /* device pointer to the output, valid until teardown() */
    size_t out_count; /* elements (> 0) */
    kg_dtype out_dtype;
    size_t rows; /* for batch invariance: number of independent rows (0 = n/a);
                    * the output is `rows` contiguous rows of out_count / rows elements */
    /* Several outputs (optional): n_outputs in 1..KG_MAX_OUTPUTS, and out/out_count/out_dtype/
     * rows are left 0 (kgate fills them from outputs[0]). reference() then fills ref_host with
     * every output's count elements of its reference dtype (its ref_dtype with has_ref_dtype,
     * else kg_case_desc.ref_dtype), one output after the other, in this order, unpadded;
     * each output is compared under its own policy and reported with its own figures. */
    int n_outputs;
    kg_output outputs[KG_MAX_OUTPUTS];
} kg_case_io;

struct kg_sweep_point_s; /* kg_sweep_point, below */

/* One case. kg_registry_add copies this struct but not what it points to: strings, params and
 * the kernels array must outlive the registry (static storage is the usual choice). */
typedef struct kg_case_desc {
    const char *id;     /* unique, stable: "<op>/<params>/<dtype>", e.g. "axpy/n=4097/f32";
                           * printable ASCII without spaces, quotes or backslashes. Marks and
                           * reports are keyed by it: renaming a case loses its marks */
    const char *op;     /* kernel family, e.g. "axpy" (required) */
    const void *params; /* opaque, handed to setup() (e.g. a pointer to a static shape) */

    /* Allocate persistent buffers, fill inputs from args->seed, fill *io, store everything in
     * *state. Outside the hot path: anything is allowed here (allocation, copies, sync).
     * On failure return <0 after kg_error_set() and free what it allocated itself: teardown()
     * is not called for a failed setup. Required. */
    int (*setup)(const kg_setup_args *args, void **state, kg_case_io *io);
    /* The hot path: enqueue the work on `stream` and return (0, or <0 if a launch was
     * rejected). It must be idempotent (a pure function of the inputs, writing every element
     * of io->out), allocate nothing, synchronize nothing, copy nothing to or from the host,
     * and launch only on `stream` (or on streams forked from it with events and joined back).
     * kgate calls it many times, under CUPTI observation and inside CUDA graph capture, so
     * use the `stream` it is given (kgate's; it may differ from call to call). Required. */
    int (*launch)(void *state, cudaStream_t stream);
    /* Expected output into ref_host: a host buffer of io->out_count elements of ref_dtype
     * (several outputs: each output's count of its reference dtype, kg_output.ref_dtype with
     * has_ref_dtype, concatenated in the order of io->outputs),
     * owned by kgate and valid only during the call. May use the GPU (e.g. cuBLAS) on `stream`
     * but must leave ref_host complete on return, and must not change the inputs. Required. */
    int (*reference)(void *state, cudaStream_t stream, void *ref_host);
    /* Free everything setup made (kgate has synchronized the stream). Optional (NULL). */
    void (*teardown)(void *state);

    kg_dtype ref_dtype;   /* dtype of the reference: KG_DTYPE_F64 for CPU float64
                             * references; equal to the output dtype for KG_PARITY_BITWISE.
                             * An output may have its own (kg_output.has_ref_dtype) */
    const char *ref_kind; /* "cpu-f64", "cublas", ... for the report (NULL: "unspecified") */
    kg_parity_policy parity;

    /* Work model of one launch() (for GB/s, TFLOP/s and % of the measured ceilings). */
    double bytes_moved; /* bytes read + written from/to global memory */
    double flops;       /* floating-point operations (0 if memory-bound) */

    const kg_kernel_ref *kernels; /* every __global__ launch() uses (static array) */
    int n_kernels;

    /* Batch invariance (optional): launch_rows computes only the first `rows` rows
     * (1 <= rows <= io->rows) of the output into the same places; row r must equal row r of
     * the full launch byte for byte. Same rules as launch(). Needs io->rows > 0. */
    int batch_invariant;
    int (*launch_rows)(void *state, int rows, cudaStream_t stream);

    /* Defects only (kgate's own selftest catalogue): the gate that must catch this case and
     * why. Leave NULL in your cases (for a known failure of yours: xfail_gate below). */
    const char *expect_gate;
    const char *expect_reason;

    /* ---- optional; zero means none. New fields are only ever added below this line. ---- */

    /* Expected failure (pytest's xfail): the gate this case is known to fail (a gate's
     * name as `kgate --help` lists them: "parity", "bench", ...; checked when the runner
     * starts) and why (required with it: an issue, a ticket).
     * While that gate still fails the case, its verdict is XFAIL (not a failure: the run
     * passes, the gate's message is kept); when it passes, XPASS, which fails the run so the
     * mark is noticed and removed. Other gates judge the case as usual. */
    const char *xfail_gate;
    const char *xfail_reason;

    /* Per-case settings; a flag given on the command line wins over them (0 / NULL: the
     * run's value). */
    double bench_band_floor; /* relative tolerance floor of the bench decision for this case,
                                * in (0, 1) (--band-floor; default 0.005): a case known to vary
                                * more between processes, e.g. 0.03 */
    double bench_budget_s;   /* timing budget of this case, seconds (--budget; default 1) */
    double timeout_s;        /* wall-clock limit of one gate on this case, seconds
                                * (--timeout): recorded (list --json) and exported to the
                                * driver; enforced where cases run in child processes */
    const char *tags;        /* comma-separated labels, e.g. "slow,attention": --tag T selects
                                * the cases with tag T, --filter also matches each tag.
                                * Characters: letters, digits, _ . - = : */

    /* In-place kernels (an optimizer step, a KV-cache append, an accumulation): restore the
     * pristine inputs on `stream` (e.g. cudaMemcpyAsync device-to-device from a copy setup
     * kept). kgate calls it before every launch whose output it checks or times: before the
     * parity launch, each determinism run, each graph replay, each bench sample; never under
     * CUPTI observation, never inside a capture, outside the timed events. Where kgate poisons
     * the outputs (parity, determinism, graph replay, batch invariance) it poisons FIRST and
     * calls prepare AFTER, so an output that is also an input starts from its restored value;
     * an output prepare leaves poisoned must be written by launch (a hot-path check whose
     * compared outputs are all still poison, 0xFF or NaN, is an ERROR). A timed sample of
     * k launches sees the state evolve between its k launches (the time of such kernels does
     * not depend on the values). Optional (NULL: launch() is idempotent by itself). */
    int (*prepare)(void *state, cudaStream_t stream);

    /* Sweep templates only (kg_registry_add_sweep): called once for each generated case, on
     * its copy of the template, before it is registered, to set what depends on the point's
     * axis values (bytes_moved, flops, parity, tags: pt->values). Return <0 after
     * kg_error_set to refuse the sweep. Optional (NULL: every case keeps the template's). */
    int (*sweep_point)(struct kg_case_desc *desc, const struct kg_sweep_point_s *pt);

    /* ---- counters gate ---- */
    /* bytes_moved is binding: the kernel is meant to move no more than it declares, whatever
     * its bound (a tiled GEMM that re-reads its inputs by design leaves it 0). DRAM traffic
     * beyond the work-model factor (1.5x) of bytes_moved is then a FAIL of the counters gate;
     * with 0 it is a WARN that says the ratio. */
    int bytes_binding;
} kg_case_desc;

#ifdef __cplusplus
}
#endif
#endif /* KGATE_CASE_H */
