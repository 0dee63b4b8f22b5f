/* The fault matrix: every fault class in every phase of every gate that runs cases, and a case
 * that faults in one gate and again in a later one. Registered only with KGATE_FAULT_MATRIX=1
 * (scripts/fault-matrix.sh, tests/gpu_fault_matrix.sh): 150-odd cases, a third of which hang
 * until the watchdog, are too slow for every selftest.
 *
 * Case "defect/faultmx/<gate>/<phase>/<class>" is the axpy case plus a fault kernel that does
 * nothing unless armed. It faults only when kgate runs it in <gate> (the shared phase page,
 * core/phase.c, names the gate) and reaches <phase>; in every other gate it is clean, so each
 * gate's table alternates faulted cases with clean ones after them. The callback that runs is
 * the phase (setup, prepare, reference, teardown); launch() tells "launch" from "capture" by
 * asking whether its stream is capturing, and "replay" is a fault kernel armed at capture
 * time, so only the graph's replays fault. Host faults (segfault, exit, abort, a host hang)
 * need host code and so never run in a replay; device faults (illegal address, trap, device
 * assert, a kernel that never ends) need a kernel that runs and so never fault a capture. */
#undef NDEBUG /* the device assert must stay in a Release build */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../cases.h"

extern "C" void kg_phase_get(char *gate, char *case_id, char *phase, size_t n); /* core */

enum fm_class {
    FM_ILLEGAL_ADDRESS,
    FM_TRAP,
    FM_ASSERT,
    FM_KERNEL_HANG,
    FM_HOST_SEGFAULT,
    FM_EXIT,
    FM_ABORT,
    FM_HOST_HANG,
    FM_N_CLASSES
};
enum fm_phase {
    FM_SETUP,
    FM_PREPARE,
    FM_LAUNCH,
    FM_CAPTURE,
    FM_REPLAY,
    FM_REFERENCE,
    FM_TEARDOWN,
    FM_N_PHASES
};

static const char *const fm_class_names[FM_N_CLASSES] = { "illegal_address", "trap",
                                                          "assert",          "kernel_hang",
                                                          "host_segfault",   "exit",
                                                          "abort",           "host_hang" };
/* What figures.fault.class must say for each. */
static const char *const fm_class_expect[FM_N_CLASSES] = { "cuda",   "cuda", "cuda",   "timeout",
                                                           "signal", "exit", "signal", "timeout" };
static const char *const fm_phase_names[FM_N_PHASES] = { "setup",   "prepare", "launch",
                                                         "capture", "replay",  "reference",
                                                         "teardown" };

/* The phases each gate reaches in a case's code (reference: parity only; a graph: the hot path
 * and the bench). */
static const struct {
    const char *gate;
    unsigned phases;
} fm_gates[] = {
    { "parity", 1u << FM_SETUP | 1u << FM_PREPARE | 1u << FM_LAUNCH | 1u << FM_REFERENCE |
                    1u << FM_TEARDOWN },
    { "hotpath", 1u << FM_SETUP | 1u << FM_PREPARE | 1u << FM_LAUNCH | 1u << FM_CAPTURE |
                     1u << FM_REPLAY | 1u << FM_TEARDOWN },
    { "bench", 1u << FM_SETUP | 1u << FM_PREPARE | 1u << FM_LAUNCH | 1u << FM_CAPTURE |
                   1u << FM_REPLAY | 1u << FM_TEARDOWN },
    { "counters", 1u << FM_SETUP | 1u << FM_PREPARE | 1u << FM_LAUNCH | 1u << FM_TEARDOWN },
};
#define FM_N_GATES (sizeof fm_gates / sizeof fm_gates[0])

static bool fm_is_host(int cls) { return cls >= FM_HOST_SEGFAULT; }
static bool fm_valid(int phase, int cls)
{
    return fm_is_host(cls) ? phase != FM_REPLAY : phase != FM_CAPTURE;
}

/* One planted fault: in `gate`, at `phase`, of class `cls`. */
typedef struct {
    const char *gate;
    int phase, cls;
} fm_target;

typedef struct {
    kg_axpy_params axpy; /* first: kg_axpy_setup reads the shape from here */
    fm_target t[2];      /* a second fault in a later gate (gate NULL: none) */
} fm_params;

typedef struct {
    kg_axpy_state *axpy;
    const fm_params *p;
    float *cell; /* the fault kernel's target (a spin flag, an assert operand) */
} fm_state;

/* Armed: fault as `cls` says (device classes only); unarmed: nothing. */
__global__ void faultmx_kernel(int cls, int arm, float *cell)
{
    if (!arm || blockIdx.x != 0 || threadIdx.x != 0)
        return;
    if (cls == FM_ILLEGAL_ADDRESS)
        *(volatile float *)(uintptr_t)0x10 = 1.0f;
    else if (cls == FM_TRAP)
        __trap();
    else if (cls == FM_ASSERT)
        assert(cell[0] != cell[0]); /* false: the cell holds 1.0f */
    else if (cls == FM_KERNEL_HANG)
        while (*(volatile float *)cell != -12345.0f)
            ;
}

/* The target of this phase in the gate now running the case, or NULL. */
static const fm_target *fm_armed(const fm_state *st, int phase)
{
    char gate[512], id[512], ph[512];
    kg_phase_get(gate, id, ph, sizeof gate);
    for (int i = 0; i < 2; i++) {
        const fm_target *t = &st->p->t[i];
        if (t->gate && strcmp(t->gate, gate) == 0 && t->phase == phase)
            return t;
    }
    return NULL;
}

static void fm_host_fault(int cls)
{
    if (cls == FM_HOST_SEGFAULT)
        *(volatile int *)(uintptr_t)0 = 1;
    else if (cls == FM_EXIT)
        exit(3); /* a third-party cudaCheck's exit(): atexit handlers run in the worker */
    else if (cls == FM_ABORT)
        abort();
    else if (cls == FM_HOST_HANG)
        for (;;)
            pause();
}

/* A host fault now, or a device fault in a kernel launched on `s` (and waited for, outside the
 * hot path: setup, prepare's own sync is kgate's, reference, teardown). */
static int fm_fault_now(const fm_state *st, const fm_target *t, cudaStream_t s, bool wait)
{
    int rc = 0;
    if (fm_is_host(t->cls)) {
        fm_host_fault(t->cls);
        return 0;
    }
    faultmx_kernel<<<1, 32, 0, s>>>(t->cls, 1, st->cell);
    KG_LAUNCH_CHECK();
    if (wait)
        KG_CUDA_CHECK(cudaStreamSynchronize(s));
cleanup:
    return rc;
}

static int fm_setup(const kg_setup_args *a, void **state, kg_case_io *io)
{
    int rc = 0;
    const float one = 1.0f;
    fm_state *st = (fm_state *)calloc(1, sizeof *st);
    if (!st)
        return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "fault matrix: out of memory");
    st->p = (const fm_params *)a->params;
    KG_CUDA_CHECK(cudaMalloc(&st->cell, sizeof(float)));
    KG_CUDA_CHECK(cudaMemcpy(st->cell, &one, sizeof one, cudaMemcpyHostToDevice));
    KG_TRY(kg_axpy_setup(a, (void **)&st->axpy, io));
    if (const fm_target *t = fm_armed(st, FM_SETUP))
        KG_TRY(fm_fault_now(st, t, a->stream, true));
    *state = st;
    st = NULL;
cleanup:
    if (st) {
        kg_axpy_teardown(st->axpy);
        cudaFree(st->cell);
        free(st);
    }
    return rc;
}

static int fm_prepare(void *state, cudaStream_t s)
{
    fm_state *st = (fm_state *)state;
    const fm_target *t = fm_armed(st, FM_PREPARE);
    return t ? fm_fault_now(st, t, s, false) : 0;
}

static int fm_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    fm_state *st = (fm_state *)state;
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    KG_CUDA_CHECK(cudaStreamIsCapturing(s, &cap));
    {
        bool capturing = cap == cudaStreamCaptureStatusActive;
        const fm_target *t = fm_armed(st, capturing ? FM_CAPTURE : FM_LAUNCH);
        const fm_target *r = capturing ? fm_armed(st, FM_REPLAY) : NULL;
        if (t && fm_is_host(t->cls))
            fm_host_fault(t->cls);
        KG_TRY(
            kg_axpy_launch(st->axpy->a, st->axpy->x, st->axpy->y, st->axpy->out, st->axpy->n, s));
        const fm_target *k = t ? t : r; /* the device fault, armed now or in every replay */
        faultmx_kernel<<<1, 32, 0, s>>>(k ? k->cls : 0, k != NULL, st->cell);
        KG_LAUNCH_CHECK();
    }
cleanup:
    return rc;
}

static int fm_reference(void *state, cudaStream_t s, void *ref)
{
    int rc = 0;
    fm_state *st = (fm_state *)state;
    if (const fm_target *t = fm_armed(st, FM_REFERENCE))
        KG_TRY(fm_fault_now(st, t, s, true));
    rc = kg_axpy_reference(st->axpy, s, ref);
cleanup:
    return rc;
}

static void fm_teardown(void *state)
{
    fm_state *st = (fm_state *)state;
    cudaStream_t s = NULL; /* kgate has synchronized its stream: a fault kernel of our own */
    if (const fm_target *t = fm_armed(st, FM_TEARDOWN)) {
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
            (void)fm_fault_now(st, t, s, true);
            (void)cudaStreamDestroy(s);
        }
    }
    kg_axpy_teardown(st->axpy);
    cudaFree(st->cell);
    free(st);
}

/* The cases: every valid (gate, phase, class), then the chains (a fault in the hot path's
 * capture and again in the bench's setup, the issue's order: exit() both times; and a device
 * fault followed by a host one), each chain last in its table so no clean case restarts the
 * worker before the next gate. */
static const kg_axpy_params fm_shape = { 4097 };
static char fm_ids[FM_N_GATES * FM_N_PHASES * FM_N_CLASSES + 4][96];
static char fm_reasons[FM_N_GATES * FM_N_PHASES * FM_N_CLASSES + 4][48];
static fm_params fm_params_of[FM_N_GATES * FM_N_PHASES * FM_N_CLASSES + 4];
static kg_case_desc fm_cases[FM_N_GATES * FM_N_PHASES * FM_N_CLASSES + 4];

static kg_case_desc fm_desc(size_t i)
{
    kg_case_desc d = {};
    d.id = fm_ids[i];
    d.op = "axpy";
    d.params = &fm_params_of[i];
    d.setup = fm_setup;
    d.launch = fm_launch;
    d.reference = fm_reference;
    d.teardown = fm_teardown;
    d.ref_dtype = KG_DTYPE_F64;
    d.ref_kind = "cpu-f64";
    d.parity = KG_AXPY_PARITY;
    d.bytes_moved = 12.0 * 4097;
    d.flops = 2.0 * 4097;
    d.expect_gate = fm_params_of[i].t[0].gate;
    d.expect_reason = fm_reasons[i];
    d.tags = "fault-matrix";
    d.prepare = fm_prepare;
    return d;
}

static size_t fm_chain(size_t n, const char *id, fm_target a, fm_target b)
{
    fm_params_of[n] = (fm_params){ fm_shape, { a, b } };
    snprintf(fm_ids[n], sizeof fm_ids[n], "defect/faultmx/chain/%s", id);
    snprintf(fm_reasons[n], sizeof fm_reasons[n], "fault:%s", fm_class_expect[a.cls]);
    fm_cases[n] = fm_desc(n);
    return n + 1;
}

extern "C" int kg_fault_matrix_register(kg_registry *reg)
{
    size_t n = 0;
    const char *on = getenv("KGATE_FAULT_MATRIX");
    if (!on || strcmp(on, "1") != 0)
        return 0;
    for (size_t g = 0; g < FM_N_GATES; g++)
        for (int ph = 0; ph < FM_N_PHASES; ph++)
            for (int c = 0; c < FM_N_CLASSES; c++) {
                if (!(fm_gates[g].phases & (1u << ph)) || !fm_valid(ph, c))
                    continue;
                fm_params_of[n] = (fm_params){ fm_shape,
                                               { { fm_gates[g].gate, ph, c }, { NULL, 0, 0 } } };
                snprintf(fm_ids[n], sizeof fm_ids[n], "defect/faultmx/%s/%s/%s", fm_gates[g].gate,
                         fm_phase_names[ph], fm_class_names[c]);
                snprintf(fm_reasons[n], sizeof fm_reasons[n], "fault:%s", fm_class_expect[c]);
                fm_cases[n] = fm_desc(n);
                n++;
            }
    n = fm_chain(n, "hotpath_capture_exit+bench_setup_exit", { "hotpath", FM_CAPTURE, FM_EXIT },
                 { "bench", FM_SETUP, FM_EXIT });
    n = fm_chain(n, "parity_launch_trap+counters_launch_segfault", { "parity", FM_LAUNCH, FM_TRAP },
                 { "counters", FM_LAUNCH, FM_HOST_SEGFAULT });
    return kg_registry_add_all(reg, fm_cases, n);
}
