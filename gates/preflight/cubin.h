/* Static resource usage of the kernels compiled into a binary, without cuobjdump or a GPU:
 * the host executable's .nv_fatbin section holds fatbin containers (magic 0xBA55ED50) whose ELF
 * entries are cubins; each cubin's sections and .nv.info attribute records (EIATTR_*) give
 * registers, stack frame (local memory), static shared memory and constant bank 0 per kernel. */
#ifndef KG_CUBIN_H
#define KG_CUBIN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char *symbol;        /* mangled, e.g. "_Z11axpy_kernelfPKfS0_Pfm" */
    char *name;          /* source-level: demangled without return type and parameters */
    int arch;            /* 90 for sm_90 */
    int regs;            /* registers per thread */
    int local_bytes;     /* per-thread local memory: the stack frame (spills + local arrays) */
    int frame_bytes;     /* EIATTR_FRAME_SIZE (-1 when absent) */
    int min_stack_bytes; /* EIATTR_MIN_STACK_SIZE (-1 when absent) */
    int max_stack_bytes; /* EIATTR_MAX_STACK_SIZE (-1 when absent) */
    int static_smem;     /* user static shared memory, bytes (sm_90's system reserve removed) */
    int const_bytes;     /* constant bank 0 (parameters + driver constants), bytes */
    int max_threads;     /* __launch_bounds__ max threads (EIATTR_MAX_THREADS), 0 if none */
    int maxreg;          /* register cap given to ptxas (EIATTR_MAXREG_COUNT), 0 if none */
} kg_cubin_kernel;

typedef struct {
    kg_cubin_kernel *k;
    size_t n, cap;
    int archs[32]; /* distinct cubin architectures seen, ascending */
    int n_archs;
    int compressed_elf; /* ELF entries skipped because they are compressed */
    int containers;
} kg_cubin_set;

int kg_cubin_set_new(kg_cubin_set **out);
void kg_cubin_set_free(kg_cubin_set *s);
/* Read every cubin of the executable at `path` (e.g. /proc/self/exe). KG_ENOTFOUND when the
 * file has no .nv_fatbin section; KG_EPARSE on a malformed container or cubin. */
int kg_cubin_load_exe(kg_cubin_set **out, const char *path);
/* Walk the fatbin containers in [p, p+len) (a .nv_fatbin section, or a .fatbin file). */
int kg_cubin_add_fatbin(kg_cubin_set *s, const unsigned char *p, size_t len, const char *what);
/* Parse one cubin (ELF) for sm_<arch>. */
int kg_cubin_add_elf(kg_cubin_set *s, const unsigned char *p, size_t len, int arch,
                     const char *what);

const kg_cubin_kernel *kg_cubin_find_symbol(const kg_cubin_set *s, const char *symbol, int arch);
/* Find by source-level name (kg_kernel_name_match: the same name, else the only one that
 * `name` names without its namespaces). KG_ENOTFOUND when absent, KG_EINVAL when several
 * symbols (overloads, namesakes in two namespaces) match. */
int kg_cubin_find_name(const kg_cubin_kernel **out, const kg_cubin_set *s, const char *name,
                       int arch);
/* How the demangled `binary` name matches a KG_KERNEL `name`, in the spelling both are
 * normalized to (no spaces, no "(anonymous namespace)::", no leading "::" or '&', no u/l
 * suffixes on integer literals): 2 the same name ("k<float, 4u>" and "k<float,4>",
 * "(anonymous namespace)::k" and "k"), 1 `name` is `binary` without its leading namespaces
 * or classes ("ns::k" and "k": KG_KERNEL under `using namespace ns`), else 0. */
int kg_kernel_name_match(const char *binary, const char *name);
/* kg_kernel_name_match(a, b) == 2 (baseline and allowlist entries: the same kernel). */
bool kg_kernel_name_eq(const char *a, const char *b);

/* Demangle (abi::__cxa_demangle) to the source-level name: no return type, no parameters. A
 * name that is not mangled (extern "C") is returned as is. Caller frees. */
int kg_demangle_name(char **out, const char *mangled);

#ifdef __cplusplus
}
#endif
#endif
