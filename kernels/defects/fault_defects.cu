/* Planted faults: cases that crash, trap or hang, each followed by a clean case that must still
 * PASS in the same run (a fault costs only its own verdict: gates/driver/worker.c). The device faults
 * are axpy_kernel's own body (axpy_impl.cuh) with a fault policy whose after() hook plants the
 * fault; the host faults wrap the axpy case's launch or setup. expect_reason "fault:<class>":
 * the selftest counts one as caught when the parity gate reports ERROR "FAULT <class>".
 * Declared without kernels: the resource preflight has nothing to judge in them. */
/* The device assert must stay in a Release build. */
#undef NDEBUG
#include <assert.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "../cases.h"
#include "../common.cuh"
#include "../axpy_impl.cuh"

/* Thread 0 of block 0 stores through a wild pointer: cudaErrorIllegalAddress (sticky). */
struct axpy_illegal_address_policy : axpy_ref_policy {
    static __device__ __forceinline__ void after(float *, size_t)
    {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            *(volatile float *)(uintptr_t)0x10 = 1.0f;
    }
};
/* A trap instruction: cudaErrorLaunchFailure (sticky). */
struct axpy_trap_policy : axpy_ref_policy {
    static __device__ __forceinline__ void after(float *, size_t)
    {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            __trap();
    }
};
/* A failed device assert: cudaErrorAssert (sticky). */
struct axpy_assert_policy : axpy_ref_policy {
    static __device__ __forceinline__ void after(float *out, size_t n)
    {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            assert(out[0] != out[0] || n == 0); /* false for a finite out[0] */
    }
};
/* Spins until a flag no one sets: the kernel never finishes (the watchdog kills the worker). */
struct axpy_spin_policy : axpy_ref_policy {
    static __device__ __forceinline__ void after(float *out, size_t)
    {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            while (*(volatile float *)out != -12345.0f)
                ;
    }
};

#define KG_FAULT_KERNEL(name, policy)                                           \
    __global__ void __launch_bounds__(KG_AXPY_BLOCK)                            \
        name(float a, const float *__restrict__ x, const float *__restrict__ y, \
             float *__restrict__ out, size_t n)                                 \
    {                                                                           \
        axpy_body<policy>(a, x, y, out, n);                                     \
    }
KG_FAULT_KERNEL(fault_illegal_address_kernel, axpy_illegal_address_policy)
KG_FAULT_KERNEL(fault_trap_kernel, axpy_trap_policy)
KG_FAULT_KERNEL(fault_assert_kernel, axpy_assert_policy)
KG_FAULT_KERNEL(fault_spin_kernel, axpy_spin_policy)

static int fault_launch(axpy_kernel_fn k, void *state, cudaStream_t s)
{
    kg_axpy_state *st = (kg_axpy_state *)state;
    return axpy_launch_with(k, st->a, st->x, st->y, st->out, st->n, s);
}
static int fault_illegal_address_launch(void *st, cudaStream_t s)
{
    return fault_launch(fault_illegal_address_kernel, st, s);
}
static int fault_trap_launch(void *st, cudaStream_t s)
{
    return fault_launch(fault_trap_kernel, st, s);
}
static int fault_assert_launch(void *st, cudaStream_t s)
{
    return fault_launch(fault_assert_kernel, st, s);
}
static int fault_spin_launch(void *st, cudaStream_t s)
{
    return fault_launch(fault_spin_kernel, st, s);
}

/* Host faults in launch(): a NULL store, exit() (a third-party cudaCheck style), a hang. */
static int fault_segfault_launch(void *st, cudaStream_t s)
{
    (void)st, (void)s;
    *(volatile int *)(uintptr_t)0 = 1;
    return 0;
}
static int fault_exit_launch(void *st, cudaStream_t s)
{
    (void)st, (void)s;
    exit(3);
}
static int fault_hang_launch(void *st, cudaStream_t s)
{
    (void)st, (void)s;
    for (;;)
        pause();
}
/* abort() in setup (a failed host assert in a user's own setup code). */
static int fault_abort_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    (void)args, (void)state, (void)io;
    abort();
}

static const kg_axpy_params fault_p = { 4097 };

#define KG_FAULT_CASE(id_, setup_, launch_, why)                                                 \
    {                                                                                            \
        .id = id_, .op = "axpy", .params = &fault_p, .setup = setup_, .launch = launch_,         \
        .reference = kg_axpy_reference, .teardown = kg_axpy_teardown, .ref_dtype = KG_DTYPE_F64, \
        .ref_kind = "cpu-f64", .parity = KG_AXPY_PARITY, .bytes_moved = 12.0 * 4097,             \
        .flops = 2.0 * 4097, .expect_gate = "parity", .expect_reason = why                       \
    }
#define KG_FAULT_CLEAN(id_)                                                             \
    {                                                                                   \
        .id = id_, .op = "axpy", .params = &fault_p, .setup = kg_axpy_setup,            \
        .launch = kg_axpy_clean_launch, .reference = kg_axpy_reference,                 \
        .teardown = kg_axpy_teardown, .ref_dtype = KG_DTYPE_F64, .ref_kind = "cpu-f64", \
        .parity = KG_AXPY_PARITY, .bytes_moved = 12.0 * 4097, .flops = 2.0 * 4097       \
    }

static int kg_axpy_clean_launch(void *state, cudaStream_t s)
{
    kg_axpy_state *st = (kg_axpy_state *)state;
    return kg_axpy_launch(st->a, st->x, st->y, st->out, st->n, s);
}

static const kg_case_desc fault_cases[] = {
    KG_FAULT_CASE("defect/fault/illegal_address/n=4097/f32", kg_axpy_setup,
                  fault_illegal_address_launch, "fault:cuda"),
    KG_FAULT_CLEAN("defect/fault/illegal_address/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/trap/n=4097/f32", kg_axpy_setup, fault_trap_launch, "fault:cuda"),
    KG_FAULT_CLEAN("defect/fault/trap/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/assert/n=4097/f32", kg_axpy_setup, fault_assert_launch,
                  "fault:cuda"),
    KG_FAULT_CLEAN("defect/fault/assert/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/host_segfault/n=4097/f32", kg_axpy_setup, fault_segfault_launch,
                  "fault:signal"),
    KG_FAULT_CLEAN("defect/fault/host_segfault/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/exit_in_launch/n=4097/f32", kg_axpy_setup, fault_exit_launch,
                  "fault:exit"),
    KG_FAULT_CLEAN("defect/fault/exit_in_launch/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/abort_in_setup/n=4097/f32", fault_abort_setup, kg_axpy_clean_launch,
                  "fault:signal"),
    KG_FAULT_CLEAN("defect/fault/abort_in_setup/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/spin_forever/n=4097/f32", kg_axpy_setup, fault_spin_launch,
                  "fault:timeout"),
    KG_FAULT_CLEAN("defect/fault/spin_forever/clean_after/n=4097/f32"),
    KG_FAULT_CASE("defect/fault/host_hang/n=4097/f32", kg_axpy_setup, fault_hang_launch,
                  "fault:timeout"),
    KG_FAULT_CLEAN("defect/fault/host_hang/clean_after/n=4097/f32"),
};

extern "C" int kg_fault_defects_register(kg_registry *reg)
{
    return kg_registry_add_all(reg, fault_cases, sizeof fault_cases / sizeof fault_cases[0]);
}
