/* The launch-configuration decision (pure) and the resolution of a case's declared kernels to
 * launch handles (see launch_config.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include "hotpath/launch_config.h"

static bool lc_has(const kg_hp_lc_decl *d, const void *h)
{
    for (int i = 0; h && d->resolved && i < KG_HP_LC_HANDLES; i++)
        if (d->handle[i] == h)
            return true;
    return false;
}

static void lc_cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lc_cat(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (len < n)
        vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* "kernel 'X' launched with 128 threads/block, 0 B dynamic smem; kernels[] declares 256, 0"
 * (every declaration of X, " or "-separated). */
static void lc_mismatch(kg_hp_launch_config *o, const kg_hp_lc_decl *decls, size_t n,
                        const kg_cw_launch *l, int first)
{
    char *f = o->fail;
    size_t cap = sizeof o->fail, len = strlen(f);
    if (len && len + 2 < cap)
        memcpy(f + len, "; ", 3);
    lc_cat(f, cap,
           "kernel '%s' launched with %u threads/block, %zu B dynamic smem; kernels[] "
           "declares",
           decls[first].name, l->threads, l->smem);
    bool more = false;
    for (size_t j = 0; j < n; j++)
        if (lc_has(&decls[j], l->handle)) {
            lc_cat(f, cap, "%s %u, %zu", more ? " or" : "", decls[j].threads, decls[j].smem);
            more = true;
        }
}

static void lc_note(kg_hp_launch_config *o, const char *fmt, const char *name)
{
    size_t len = strlen(o->note);
    if (len && len + 2 < sizeof o->note) {
        memcpy(o->note + len, "; ", 3);
        len += 2;
    }
    if (len < sizeof o->note)
        snprintf(o->note + len, sizeof o->note - len, fmt, name);
}

void kg_hp_launch_config_decide(const kg_hp_lc_decl *decls, size_t n, const kg_cw_launch *obs,
                                size_t m, kg_hp_launch_config *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < m; i++) {
        int first = -1;
        bool match = false;
        for (size_t j = 0; j < n; j++)
            if (lc_has(&decls[j], obs[i].handle)) {
                if (first < 0)
                    first = (int)j;
                match |= decls[j].threads == obs[i].threads && decls[j].smem == obs[i].smem;
            }
        if (first < 0) {
            o->undeclared += obs[i].count;
            continue;
        }
        if (o->n_rows < KG_HP_LC_MAX_ROWS)
            o->rows[o->n_rows++] = (kg_hp_lc_row){ first, obs[i].threads, obs[i].smem, obs[i].count,
                                                   match };
        if (!match) {
            o->mismatched++;
            lc_mismatch(o, decls, n, &obs[i], first);
        }
    }
    for (size_t j = 0; j < n; j++) {
        bool launched = false;
        for (size_t i = 0; i < m && !launched; i++)
            launched = lc_has(&decls[j], obs[i].handle);
        if (!decls[j].resolved)
            lc_note(o,
                    "kernel '%s': no launch handle (cudaGetKernel/cudaGetFuncBySymbol "
                    "failed), not checked",
                    decls[j].name);
        else if (!launched)
            lc_note(o, "kernel '%s' declared, not launched in the observed launches",
                    decls[j].name);
    }
    o->pass = o->mismatched == 0;
    o->done = true;
}

void kg_hp_lc_resolve(kg_hp_lc_decl *out, const kg_kernel_ref *k)
{
    cudaKernel_t kern = NULL;
    cudaFunction_t fn = NULL;
    memset(out, 0, sizeof *out);
    out->name = k->name ? k->name : "?";
    out->threads = k->block_threads > 0 ? (unsigned)k->block_threads : 0;
    out->smem = k->dynamic_smem;
    cudaError_t ek = cudaGetKernel(&kern, k->func);
    cudaError_t ef = cudaGetFuncBySymbol(&fn, k->func);
    if (ek != cudaSuccess || ef != cudaSuccess || !k->func) {
        (void)cudaGetLastError(); /* the lookup's error is no launch error */
        return;
    }
    out->handle[0] = k->func;
    out->handle[1] = (const void *)kern;
    out->handle[2] = (const void *)fn;
    out->resolved = true;
}
