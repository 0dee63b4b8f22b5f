/* kgate public API, part of kgate/kgate.h (which includes every part): sweeps: one case template over named axes.
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_SWEEP_H
#define KGATE_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    const char *name;          /* "n", "dtype", "tile" */
    const char *const *values; /* count strings, "4096", "bf16" */
    size_t count;
} kg_sweep_axis;

#define KG_SWEEP_MAGIC 0x6b677377u /* "kgsw" */
/* One point of a sweep: what a sweep case's args->params points at (read-only). */
typedef struct kg_sweep_point_s {
    uint32_t magic;            /* KG_SWEEP_MAGIC */
    size_t n;                  /* number of axes */
    const char *const *names;  /* axis names, in axis order */
    const char *const *values; /* this case's value of each axis */
    const void *base;          /* the template's params */
} kg_sweep_point;

int kg_registry_add_sweep(kg_registry *reg, const kg_case_desc *tmpl, const kg_sweep_axis *axes,
                          size_t n_axes);
/* The value of axis `name` of a sweep case (borrowed, valid as long as the registry), or NULL
 * when the case is not a sweep case or has no such axis. */
const char *kg_sweep_get(const kg_setup_args *args, const char *name);
/* The template's params of a sweep case (NULL if it is not one). */
const void *kg_sweep_base(const kg_setup_args *args);

#ifdef __cplusplus
}
#endif
#endif /* KGATE_SWEEP_H */
