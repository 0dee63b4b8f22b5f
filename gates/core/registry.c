/* The case registry: a growable array of descriptors with unique ids. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

struct kg_registry {
    kg_case_desc *cases;
    size_t n, cap;
};

int kg_registry_new(kg_registry **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return KG_ERR(KG_ENOMEM, "out of memory creating the case registry");
    return 0;
}

void kg_registry_free(kg_registry *reg)
{
    if (!reg)
        return;
    free(reg->cases);
    free(reg);
}

static int id_is_valid(const char *id)
{
    if (!id || !*id)
        return 0;
    for (const char *p = id; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\\' || (unsigned char)*p >= 0x7f)
            return 0;
    return 1;
}

/* The gates a case may declare an expected failure of (the report's gate values). */
static bool reg_is_gate(const char *g)
{
    static const char *const gates[] = { KG_RV_GATE_PARITY, KG_RV_GATE_PREFLIGHT,
                                         KG_RV_GATE_HOTPATH, KG_RV_GATE_BENCH };
    for (size_t i = 0; i < KG_ARRAY_LEN(gates); i++)
        if (strcmp(g, gates[i]) == 0)
            return true;
    return false;
}

/* Labels a command line and a regex can name plainly; each shorter than 128 bytes. */
static bool reg_tags_valid(const char *t)
{
    size_t run = 0;
    for (const char *p = t; p && *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || strchr("_.-=:", *p);
        if (*p == ',')
            run = 0;
        else if (!ok || ++run >= 128)
            return false;
    }
    return true;
}

int kg_registry_add(kg_registry *reg, const kg_case_desc *d)
{
    if (!reg || !d)
        return KG_ERR(KG_EINVAL, "kg_registry_add: NULL argument");
    if (!id_is_valid(d->id))
        return KG_ERR(KG_EINVAL, "case id '%s': must be non-empty printable ASCII without spaces",
                      d->id ? d->id : "(null)");
    if (!d->op || !d->setup || !d->launch || !d->reference)
        return KG_ERR(KG_EINVAL, "case '%s': op, setup, launch and reference are required", d->id);
    if (d->n_kernels < 0 || (d->n_kernels > 0 && !d->kernels))
        return KG_ERR(KG_EINVAL, "case '%s': kernels/n_kernels inconsistent", d->id);
    for (int k = 0; k < d->n_kernels; k++)
        if (!d->kernels[k].func || !d->kernels[k].name || d->kernels[k].block_threads <= 0)
            return KG_ERR(KG_EINVAL, "case '%s': kernel %d needs func, name and block_threads",
                          d->id, k);
    if (d->batch_invariant && !d->launch_rows)
        return KG_ERR(KG_EINVAL, "case '%s': batch_invariant needs launch_rows", d->id);
    if (d->parity.kind == KG_PARITY_TOLERANCE &&
        (!(d->parity.max_abs >= 0) || !(d->parity.max_rel_l2 >= 0) ||
         !(d->parity.min_cosine <= 1.0)))
        return KG_ERR(KG_EINVAL, "case '%s': tolerance thresholds must be >= 0 (cosine <= 1)",
                      d->id);
    if (!reg_tags_valid(d->tags))
        return KG_ERR(KG_EINVAL, "case '%s': tags '%s': comma-separated labels of letters, "
                      "digits and _ . - = :", d->id, d->tags);
    if (!(d->bench_band_floor >= 0 && d->bench_band_floor < 1) || !(d->bench_budget_s >= 0 &&
        d->bench_budget_s <= 3600) || !(d->timeout_s >= 0))
        return KG_ERR(KG_EINVAL, "case '%s': bench_band_floor must be in [0, 1), "
                      "bench_budget_s in [0, 3600], timeout_s >= 0 (0: the run's)", d->id);
    if (d->xfail_gate && !reg_is_gate(d->xfail_gate))
        return KG_ERR(KG_EINVAL, "case '%s': xfail_gate '%s' is not a gate (parity, preflight, "
                      "hotpath, bench)", d->id, d->xfail_gate);
    if (d->xfail_gate && (!d->xfail_reason || !*d->xfail_reason))
        return KG_ERR(KG_EINVAL, "case '%s': xfail_gate needs xfail_reason (why it is known to "
                      "fail)", d->id);
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->cases[i].id, d->id) == 0)
            return KG_ERR(KG_EEXISTS, "duplicate case id '%s': ids must be unique", d->id);
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 32;
        kg_case_desc *nc = realloc(reg->cases, cap * sizeof *nc);
        if (!nc)
            return KG_ERR(KG_ENOMEM, "out of memory registering '%s'", d->id);
        reg->cases = nc;
        reg->cap = cap;
    }
    reg->cases[reg->n++] = *d;
    return 0;
}

int kg_registry_add_all(kg_registry *reg, const kg_case_desc *descs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = kg_registry_add(reg, &descs[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

size_t kg_registry_count(const kg_registry *reg) { return reg ? reg->n : 0; }

const kg_case_desc *kg_registry_get(const kg_registry *reg, size_t i)
{
    return (reg && i < reg->n) ? &reg->cases[i] : NULL;
}
