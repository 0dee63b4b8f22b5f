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

/* The umbrella: every part of the public API (each self-contained, includable alone). */
#include "kgate/error.h"
#include "kgate/case.h"
#include "kgate/registry.h"
#include "kgate/sweep.h"
#include "kgate/fill.h"
#include "kgate/cli.h"

#define KG_VERSION_MAJOR 0
#define KG_VERSION_MINOR 1
#define KG_VERSION_PATCH 0
#define KG_VERSION_STRING "1.0.0"

#endif /* KGATE_KGATE_H */
