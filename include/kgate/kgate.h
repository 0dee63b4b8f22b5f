/* kgate public API: register CUDA kernel cases so the kgate gates can run over them.
 *
 * This is the whole API a runner of your own needs (see "Gate your own kernels" in README.md
 * and examples/external/). It is C11 and C++17 clean and includes only the C library and the
 * CUDA runtime API; nothing of kgate's internals.
 *
 * A *case* is one kernel (or chain of kernels) at one shape and dtype. kgate owns the
 * lifecycle of a case *instance*:
 *
 *     setup()                once per instance: allocate, fill inputs from the seed, fill *io
 *     launch()               any number of times (warm-up, checks, timing, graph capture)
 *     reference()            when a gate needs the expected output (after at least one launch)
 *     teardown()             once, last, only if setup() succeeded
 *
 * One process may create several instances of a case, one after another or alive at the same
 * time (each gate sets its cases up afresh, and timing may keep several input sets), so keep
 * everything a case needs in its `state`, never in globals.
 *
 * Threads: every callback runs on the thread that called kg_cli_main(), never concurrently
 * with another callback. The current device is already selected when a callback runs.
 *
 * Conventions (as in the rest of kgate):
 *   - functions return 0 or a negative KG_E* code and set the message first (kg_error_set,
 *     or the KG_CUDA_CHECK / KG_LAUNCH_CHECK / KG_TRY macros); kg_error_last() reads it;
 *   - a callback that fails makes that case's verdict ERROR with its message; the run goes on
 *     with the other cases;
 *   - objects returned through a first out-parameter belong to the caller and have a _free;
 *   - options structs have an _INIT initializer.
 *
 * Minimal example (a .cu file of a user's runner):
 *
 *   static int my_setup(const kg_setup_args *a, void **state, kg_case_io *io);
 *   static int my_launch(void *state, cudaStream_t s);      // hot path: kernels only
 *   static int my_ref(void *state, cudaStream_t s, void *ref_host);
 *   static void my_teardown(void *state);
 *   static const kg_kernel_ref my_syms[] = { KG_KERNEL(my_kernel, 256, 0) };
 *   static const kg_case_desc my_case = {
 *       .id = "my_op/n=4097/f32", .op = "my_op", .setup = my_setup, .launch = my_launch,
 *       .reference = my_ref, .teardown = my_teardown, .ref_dtype = KG_DTYPE_F64,
 *       .parity = KG_PARITY_TOLERANCE_INIT(1e-5, 1e-6, 0.999999),
 *       .bytes_moved = 3.0 * 4097 * 4, .kernels = my_syms, .n_kernels = 1 };
 *   int main(int argc, char **argv) {
 *       kg_registry *reg = NULL; int rc = kg_registry_new(&reg);
 *       if (rc == 0) rc = kg_registry_add(reg, &my_case);
 *       return kg_cli_main(reg, rc, argc, argv);     // frees reg, returns the exit code
 *   }
 * (C++ designated initializers must follow the field order of kg_case_desc.)
 */
#ifndef KGATE_KGATE_H
#define KGATE_KGATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KG_VERSION_MAJOR 0
#define KG_VERSION_MINOR 1
#define KG_VERSION_PATCH 0
#define KG_VERSION_STRING "1.0.0"

/* ---- errors ------------------------------------------------------------------------- */

/* Error codes: every kgate function returns 0 or one of these (negative). */
enum {
    KG_OK = 0,
    KG_EINVAL = -1,    /* bad argument, flag or input value */
    KG_ENOMEM = -2,    /* out of host memory */
    KG_EIO = -3,       /* file could not be read or written */
    KG_EPARSE = -4,    /* malformed input file (JSON, allowlist, baseline, marks) */
    KG_ECUDA = -5,     /* a CUDA runtime or driver call failed */
    KG_ENODEV = -6,    /* no CUDA device is present */
    KG_ECUBLAS = -7,   /* a cuBLAS call failed */
    KG_ECUPTI = -8,    /* a CUPTI call failed */
    KG_EGIT = -9,      /* a libgit2 call failed */
    KG_EHTTP = -10,    /* an HTTP request failed (libcurl or status code) */
    KG_EEXISTS = -11,  /* duplicate (case id, mark key) */
    KG_ENOTFOUND = -12,/* no such case, mark, file or ref */
    KG_ECONFLICT = -13,/* concurrent update lost a race; retry */
    KG_EREFUSED = -14, /* refused by policy (diagnostic report, dirty marks file, ...) */
    KG_EINTERNAL = -15
};

/* Message of the last error set on this thread ("" if none). The buffer is thread-local and
 * owned by kgate: valid until the next kg_error_set on the same thread; copy it to keep it. */
const char *kg_error_last(void);
/* Name of an error code, e.g. "KG_EPARSE" (a static string). */
const char *kg_error_name(int code);
/* Record an error (printf-style) for this thread, with the source position; returns `code` so
 * callers can `return kg_error_set(KG_EINVAL, __FILE__, __LINE__, "n must be >= 1");`.
 * Messages name what was wrong (the case, field, file or flag). */
int kg_error_set(int code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Check a CUDA runtime call; on failure record file/line and `goto cleanup` with rc set.
 * The enclosing function needs `int rc` and a `cleanup:` label. */
#define KG_CUDA_CHECK(expr)                                                              \
    do {                                                                                 \
        cudaError_t kg_e_ = (expr);                                                      \
        if (kg_e_ != cudaSuccess) {                                                      \
            rc = kg_error_set(KG_ECUDA, __FILE__, __LINE__, "%s failed: %s (%s)", #expr, \
                              cudaGetErrorName(kg_e_), cudaGetErrorString(kg_e_));       \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* Check that the last kernel launch was accepted (launchers call it right after <<<>>>).
 * Legal during stream capture, so it is fine in launch(). */
#define KG_LAUNCH_CHECK() KG_CUDA_CHECK(cudaGetLastError())

/* Propagate a kgate error code: `goto cleanup` when expr < 0 (the message is already set). */
#define KG_TRY(expr)                 \
    do {                             \
        if ((rc = (expr)) < 0)       \
            goto cleanup;            \
    } while (0)

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

#define KG_PARITY_TOLERANCE_INIT(abs_, rel_l2_, cos_) \
    { KG_PARITY_TOLERANCE, (abs_), (rel_l2_), (cos_) }
#define KG_PARITY_BITWISE_INIT { KG_PARITY_BITWISE, 0.0, 0.0, 1.0 }

/* ---- cases ---------------------------------------------------------------------------- */

/* A __global__ function the case launches, with the launch configuration it uses:
 * the resource preflight reads its attributes and theoretical occupancy. `name` is the
 * source-level name (for templates as the demangler prints it, e.g. "k<float, 128>").
 * Use KG_KERNEL in a .cu file (where `fn` is the kernel itself). */
typedef struct {
    const void *func;        /* the kernel's host stub: (const void *)my_kernel */
    const char *name;        /* static string */
    int block_threads;       /* threads per block launch() uses (> 0) */
    size_t dynamic_smem;     /* dynamic shared memory bytes per block launch() uses */
} kg_kernel_ref;

#define KG_KERNEL(fn, block, smem) { (const void *)(fn), #fn, (block), (size_t)(smem) }
/* The same for a kernel whose name has commas (a template of several arguments, which would
 * split KG_KERNEL's first argument): the kernel comes last, KG_KERNEL_T(256, 0, sgemm<64, 64, 8>).
 * The name is the text as written; spaces do not matter to the preflight's lookup. */
#define KG_KERNEL_T(block, smem, ...) \
    { (const void *)(__VA_ARGS__), #__VA_ARGS__, (block), (size_t)(smem) }

/* Passed to setup(); valid only during that call (copy what you need into your state). */
typedef struct {
    uint64_t seed;          /* fill inputs from this seed (kg_rng_*), never zeros. Derived
                             * from the run's printed seed and the case id: --seed N repeats
                             * the same inputs */
    const void *params;     /* the case's kg_case_desc.params */
    cudaStream_t stream;    /* a non-blocking stream setup may use; kgate synchronizes it after
                             * setup returns. Owned by kgate: never destroy it */
    int device;             /* current device ordinal (already selected) */
} kg_setup_args;

/* One output of a case with several (kg_case_io.outputs): layernorm's out, mean and rstd, an
 * optimizer's params, m and v. Same rules as the single output below. */
typedef struct {
    const char *name;       /* "mean" (report and messages; static string; NULL: "out<i>") */
    void *ptr;              /* device pointer, valid until teardown() */
    size_t count;           /* elements (> 0) */
    kg_dtype dtype;
    size_t rows;            /* batch invariance rows of this output (0 = n/a) */
    const kg_parity_policy *parity; /* its own policy (static), or NULL: kg_case_desc.parity */
    /* ---- optional, appended (issue #25); zero keeps the case's reference dtype ---------- */
    int has_ref_dtype;      /* nonzero: this output's reference is ref_dtype below, not
                             * kg_case_desc.ref_dtype (KG_DTYPE_F32 is 0, hence the flag) */
    kg_dtype ref_dtype;     /* read only with has_ref_dtype */
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
    void *out;              /* device pointer to the output, valid until teardown() */
    size_t out_count;       /* elements (> 0) */
    kg_dtype out_dtype;
    size_t rows;            /* for batch invariance: number of independent rows (0 = n/a);
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
    const char *id;         /* unique, stable: "<op>/<params>/<dtype>", e.g. "axpy/n=4097/f32";
                             * printable ASCII without spaces, quotes or backslashes. Marks and
                             * reports are keyed by it: renaming a case loses its marks */
    const char *op;         /* kernel family, e.g. "axpy" (required) */
    const void *params;     /* opaque, handed to setup() (e.g. a pointer to a static shape) */

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

    kg_dtype ref_dtype;       /* dtype of the reference: KG_DTYPE_F64 for CPU float64
                               * references; equal to the output dtype for KG_PARITY_BITWISE.
                               * An output may have its own (kg_output.has_ref_dtype) */
    const char *ref_kind;     /* "cpu-f64", "cublas", ... for the report (NULL: "unspecified") */
    kg_parity_policy parity;

    /* Work model of one launch() (for GB/s, TFLOP/s and % of the measured ceilings). */
    double bytes_moved;       /* bytes read + written from/to global memory */
    double flops;             /* floating-point operations (0 if memory-bound) */

    const kg_kernel_ref *kernels;  /* every __global__ launch() uses (static array) */
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

    /* Expected failure (pytest's xfail): the gate this case is known to fail ("parity",
     * "preflight", "hotpath" or "bench") and why (required with it: an issue, a ticket).
     * While that gate still fails the case, its verdict is XFAIL (not a failure: the run
     * passes, the gate's message is kept); when it passes, XPASS, which fails the run so the
     * mark is noticed and removed. Other gates judge the case as usual. */
    const char *xfail_gate;
    const char *xfail_reason;

    /* Per-case settings; a flag given on the command line wins over them (0 / NULL: the
     * run's value). */
    double bench_band_floor;  /* relative tolerance floor of the bench decision for this case,
                               * in (0, 1) (--band-floor; default 0.005): a case known to vary
                               * more between processes, e.g. 0.03 */
    double bench_budget_s;    /* timing budget of this case, seconds (--budget; default 1) */
    double timeout_s;         /* wall-clock limit of one gate on this case, seconds
                               * (--timeout): recorded (list --json) and exported to the
                               * driver; enforced where cases run in child processes */
    const char *tags;         /* comma-separated labels, e.g. "slow,attention": --tag T selects
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

    /* ---- counters gate (issue #25) ---- */
    /* bytes_moved is binding: the kernel is meant to move no more than it declares, whatever
     * its bound (a tiled GEMM that re-reads its inputs by design leaves it 0). DRAM traffic
     * beyond the work-model factor (1.5x) of bytes_moved is then a FAIL of the counters gate;
     * with 0 it is a WARN that says the ratio. */
    int bytes_binding;
} kg_case_desc;

/* ---- registry ------------------------------------------------------------------------- */

/* The cases of a runner. Used from one thread; handed to kg_cli_main, which frees it. */
typedef struct kg_registry kg_registry;

/* *out = a new empty registry (caller owns it: kg_registry_free, or hand it to kg_cli_main). */
int kg_registry_new(kg_registry **out);
/* Copies the descriptor (strings and arrays must outlive the registry). Fails with
 * KG_EEXISTS on a duplicate id and KG_EINVAL on a missing required field. */
int kg_registry_add(kg_registry *reg, const kg_case_desc *desc);
/* kg_registry_add for each of n descriptors; stops at the first error. */
int kg_registry_add_all(kg_registry *reg, const kg_case_desc *descs, size_t n);
size_t kg_registry_count(const kg_registry *reg);
/* The i-th registered case (borrowed; NULL when out of range). */
const kg_case_desc *kg_registry_get(const kg_registry *reg, size_t i);
/* Frees the registry (not the descriptors' strings or arrays); NULL is a no-op. */
void kg_registry_free(kg_registry *reg);

/* ---- sweeps: one case template over named axes (nvbench-style) ---------------------------
 *
 *   static const char *const ns[] = { "4097", "16777219" }, *const alphas[] = { "0.5", "2" };
 *   static const kg_sweep_axis axes[] = { { "n", ns, 2 }, { "alpha", alphas, 2 } };
 *   rc = kg_registry_add_sweep(reg, &scale_tmpl, axes, 2);   // tmpl.id = "scale"
 *
 * registers the cartesian product in axis order, the last axis varying fastest:
 * "scale/n=4097,alpha=0.5", "scale/n=4097,alpha=2", "scale/n=16777219,alpha=0.5", ...
 * (`<tmpl->id>/<axis>=<value>,...`, so --filter 'n=4097' selects on an axis value). Each
 * case is a copy of the template whose `params` is a kg_sweep_point generated and owned by the
 * registry (freed by kg_registry_free, like the generated ids; the axis strings are copied).
 * In setup(), kg_sweep_get(args, "n") reads a value and kg_sweep_base(args) returns the
 * template's own params. Axis names and values: letters, digits and _ . - + : (no ',', '=',
 * '/'); at least one axis and one value each, at most 16 axes and 65536 cases. On any error
 * (a bad axis, a duplicate id: KG_EEXISTS) nothing of the sweep stays registered. The
 * template's sweep_point hook sets each case's work model from its values. */
typedef struct {
    const char *name;                 /* "n", "dtype", "tile" */
    const char *const *values;        /* count strings, "4096", "bf16" */
    size_t count;
} kg_sweep_axis;

#define KG_SWEEP_MAGIC 0x6b677377u /* "kgsw" */
/* One point of a sweep: what a sweep case's args->params points at (read-only). */
typedef struct kg_sweep_point_s {
    uint32_t magic;                   /* KG_SWEEP_MAGIC */
    size_t n;                         /* number of axes */
    const char *const *names;         /* axis names, in axis order */
    const char *const *values;        /* this case's value of each axis */
    const void *base;                 /* the template's params */
} kg_sweep_point;

int kg_registry_add_sweep(kg_registry *reg, const kg_case_desc *tmpl, const kg_sweep_axis *axes,
                          size_t n_axes);
/* The value of axis `name` of a sweep case (borrowed, valid as long as the registry), or NULL
 * when the case is not a sweep case or has no such axis. */
const char *kg_sweep_get(const kg_setup_args *args, const char *name);
/* The template's params of a sweep case (NULL if it is not one). */
const void *kg_sweep_base(const kg_setup_args *args);

/* Run the kgate command line over the registry; returns the process exit code (see
 * docs/production-ci.md: 0 pass, 1 gate failed, 2 usage or input error, 3 no GPU,
 * 4 runtime error). `reg_rc` is the result of registration: a negative code is reported
 * and exits 2. Takes ownership of reg (frees it, also on error; reg may be NULL then).
 * Call it once, from main(); every case callback runs on this thread. */
int kg_cli_main(kg_registry *reg, int reg_rc, int argc, char **argv);

/* Exit codes of kg_cli_main. */
enum {
    KG_EXIT_PASS = 0,
    KG_EXIT_GATE_FAILED = 1,
    KG_EXIT_USAGE = 2,
    KG_EXIT_NO_GPU = 3,
    KG_EXIT_RUNTIME = 4
};

/* ---- helpers for setup() -------------------------------------------------------------- */

/* Deterministic generator (splitmix64-seeded xoshiro256**); state is 4 words. Not shared
 * between threads; seed one per buffer (stream_id) so buffers are independent of each other
 * and of the shape. */
typedef struct { uint64_t s[4]; } kg_rng;
void kg_rng_seed(kg_rng *r, uint64_t seed, uint64_t stream_id);
uint64_t kg_rng_next(kg_rng *r);
/* Uniform in [lo, hi); never produces an all-zero buffer for lo < hi. */
void kg_rng_fill_f32(kg_rng *r, float *dst, size_t n, float lo, float hi);
void kg_rng_fill_bf16(kg_rng *r, uint16_t *dst, size_t n, float lo, float hi);

/* Counter-based fills from the seed, the same bits on every GPU and on the host (value i is a
 * function of seed and i only: kgate/fill_element.h says exactly how, including rounding and
 * zeros). dtype: KG_DTYPE_F32, BF16, F16 or I32 (bf16/f16 as raw uint16_t). Uniform: [a, b)
 * (a < b; floats may reach b by rounding, never produce exact zeros: a value rounding to 0
 * becomes the dtype's smallest normal of that sign; i32: integers in [ceil(a), ceil(b))).
 * Normal: mean a, standard deviation b (b > 0). Seed each buffer differently (e.g.
 * args->seed ^ buffer_index * 0x9e3779b97f4a7c15). */
typedef enum { KG_FILL_UNIFORM = 0, KG_FILL_NORMAL = 1 } kg_fill_dist;
/* Enqueue the fill of n elements at device pointer dev on stream s (no sync, no allocation). */
int kg_fill_device(void *dev, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist,
                   double a, double b, cudaStream_t s);
/* The same n values into host memory dst: a reference needs no copy back. */
int kg_fill_host(void *dst, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist, double a,
                 double b);
/* A slice of the same fill: elements [offset, offset + n) of the fill of that seed into dst[0..n)
 * (a reference over part of an input, a buffer filled in pieces). kg_fill_*(..., n, ...) is
 * kg_fill_*_at(..., 0, n, ...). */
int kg_fill_host_at(void *dst, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                    kg_fill_dist dist, double a, double b);
int kg_fill_device_at(void *dev, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                      kg_fill_dist dist, double a, double b, cudaStream_t s);

uint16_t kg_f32_to_bf16(float f);  /* round to nearest even */
float kg_bf16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif /* KGATE_KGATE_H */
