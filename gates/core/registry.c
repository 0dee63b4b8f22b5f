/* The case registry: a growable array of descriptors with unique ids. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

struct kg_registry {
    kg_case_desc *cases;
    size_t n, cap;
    void **owned; /* generated storage (sweep points and ids), freed with the registry */
    size_t n_owned, cap_owned;
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
    for (size_t i = 0; i < reg->n_owned; i++)
        free(reg->owned[i]);
    free(reg->owned);
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
        return KG_ERR(KG_EINVAL,
                      "case '%s': tags '%s': comma-separated labels of letters, "
                      "digits and _ . - = :",
                      d->id, d->tags);
    if (!(d->bench_band_floor >= 0 && d->bench_band_floor < 1) ||
        !(d->bench_budget_s >= 0 && d->bench_budget_s <= 3600) || !(d->timeout_s >= 0))
        return KG_ERR(KG_EINVAL,
                      "case '%s': bench_band_floor must be in [0, 1), "
                      "bench_budget_s in [0, 3600], timeout_s >= 0 (0: the run's)",
                      d->id);
    /* Which names are gates the gate table knows, a layer above: kg_gates_check_cases. */
    if (d->xfail_gate && !id_is_valid(d->xfail_gate))
        return KG_ERR(KG_EINVAL, "case '%s': xfail_gate must be a gate's name", d->id);
    if (d->xfail_gate && (!d->xfail_reason || !*d->xfail_reason))
        return KG_ERR(KG_EINVAL,
                      "case '%s': xfail_gate needs xfail_reason (why it is known to "
                      "fail)",
                      d->id);
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

/* ---- sweeps ------------------------------------------------------------------------------ */

#define SW_MAX_AXES 16
#define SW_MAX_CASES 65536

static bool sw_word_valid(const char *w)
{
    if (!w || !*w || strlen(w) >= 128)
        return false;
    for (const char *p = w; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("_.-+:", *p)))
            return false;
    return true;
}

/* The axes are well formed; *n_cases = the size of their product. */
static int sw_check(const kg_case_desc *t, const kg_sweep_axis *axes, size_t n_axes,
                    size_t *n_cases)
{
    const char *op = t->id ? t->id : t->op;
    if (!op || !*op)
        return KG_ERR(KG_EINVAL, "kg_registry_add_sweep: the template needs an id or op prefix");
    if (n_axes < 1 || n_axes > SW_MAX_AXES || !axes)
        return KG_ERR(KG_EINVAL, "sweep '%s': 1 to %d axes, got %zu", op, SW_MAX_AXES, n_axes);
    *n_cases = 1;
    for (size_t a = 0; a < n_axes; a++) {
        if (!sw_word_valid(axes[a].name))
            return KG_ERR(KG_EINVAL,
                          "sweep '%s': axis %zu name '%s': letters, digits and _ . - + :", op, a,
                          axes[a].name ? axes[a].name : "(null)");
        for (size_t b = 0; b < a; b++)
            if (strcmp(axes[a].name, axes[b].name) == 0)
                return KG_ERR(KG_EEXISTS, "sweep '%s': axis '%s' given twice", op, axes[a].name);
        if (axes[a].count < 1 || !axes[a].values)
            return KG_ERR(KG_EINVAL, "sweep '%s': axis '%s' has no values", op, axes[a].name);
        for (size_t v = 0; v < axes[a].count; v++)
            if (!sw_word_valid(axes[a].values[v]))
                return KG_ERR(KG_EINVAL,
                              "sweep '%s': axis '%s' value %zu '%s': letters, digits "
                              "and _ . - + :",
                              op, axes[a].name, v,
                              axes[a].values[v] ? axes[a].values[v] : "(null)");
        if (*n_cases > SW_MAX_CASES / axes[a].count)
            return KG_ERR(KG_EINVAL, "sweep '%s': more than %d cases", op, SW_MAX_CASES);
        *n_cases *= axes[a].count;
    }
    return 0;
}

/* One block: the point, its name and value arrays, the copied strings and the id. */
static kg_sweep_point *sw_point_new(const char *op, const kg_sweep_axis *axes, size_t n_axes,
                                    const size_t *pick, const void *base, char **id)
{
    size_t strs = strlen(op) + 2, hdr = sizeof(kg_sweep_point) + 2 * n_axes * sizeof(char *);
    for (size_t a = 0; a < n_axes; a++)
        strs += 2 * (strlen(axes[a].name) + strlen(axes[a].values[pick[a]]) + 2);
    kg_sweep_point *pt = malloc(hdr + strs);
    if (!pt)
        return NULL;
    const char **names = (const char **)(pt + 1), **values = names + n_axes;
    char *p = (char *)(values + n_axes), *idp;
    for (size_t a = 0; a < n_axes; a++) {
        names[a] = strcpy(p, axes[a].name), p += strlen(p) + 1;
        values[a] = strcpy(p, axes[a].values[pick[a]]), p += strlen(p) + 1;
    }
    idp = p;
    p += sprintf(p, "%s/", op);
    for (size_t a = 0; a < n_axes; a++)
        p += sprintf(p, "%s%s=%s", a ? "," : "", names[a], values[a]);
    *pt = (kg_sweep_point){ .magic = KG_SWEEP_MAGIC,
                            .n = n_axes,
                            .names = names,
                            .values = values,
                            .base = base };
    *id = idp;
    return pt;
}

static int sw_own(kg_registry *reg, void *block)
{
    if (reg->n_owned == reg->cap_owned) {
        size_t cap = reg->cap_owned ? reg->cap_owned * 2 : 32;
        void **no = realloc(reg->owned, cap * sizeof *no);
        if (!no)
            return KG_ERR(KG_ENOMEM, "out of memory registering a sweep");
        reg->owned = no;
        reg->cap_owned = cap;
    }
    reg->owned[reg->n_owned++] = block;
    return 0;
}

int kg_registry_add_sweep(kg_registry *reg, const kg_case_desc *tmpl, const kg_sweep_axis *axes,
                          size_t n_axes)
{
    int rc = 0;
    size_t n_cases = 0, pick[SW_MAX_AXES] = { 0 }, n0, owned0;
    if (!reg || !tmpl)
        return KG_ERR(KG_EINVAL, "kg_registry_add_sweep: NULL argument");
    n0 = reg->n, owned0 = reg->n_owned;
    KG_TRY(sw_check(tmpl, axes, n_axes, &n_cases));
    for (size_t c = 0; c < n_cases; c++) {
        kg_case_desc d = *tmpl;
        char *id = NULL;
        kg_sweep_point *pt = sw_point_new(tmpl->id ? tmpl->id : tmpl->op, axes, n_axes, pick,
                                          tmpl->params, &id);
        if (!pt) {
            rc = KG_ERR(KG_ENOMEM, "out of memory expanding sweep '%s'", tmpl->id);
            goto cleanup;
        }
        if ((rc = sw_own(reg, pt)) < 0) {
            free(pt);
            goto cleanup;
        }
        d.id = id;
        d.params = pt;
        if (tmpl->sweep_point)
            KG_TRY(tmpl->sweep_point(&d, pt));
        KG_TRY(kg_registry_add(reg, &d));
        for (size_t a = n_axes; a-- > 0;) /* odometer: the last axis varies fastest */
            if (++pick[a] < axes[a].count)
                break;
            else
                pick[a] = 0;
    }
cleanup:
    if (rc < 0) { /* all or nothing */
        reg->n = n0;
        while (reg->n_owned > owned0)
            free(reg->owned[--reg->n_owned]);
    }
    return rc;
}

static const kg_sweep_point *sw_point(const kg_setup_args *args)
{
    const kg_sweep_point *pt = args ? (const kg_sweep_point *)args->params : NULL;
    return pt && pt->magic == KG_SWEEP_MAGIC ? pt : NULL;
}

const char *kg_sweep_get(const kg_setup_args *args, const char *name)
{
    const kg_sweep_point *pt = sw_point(args);
    for (size_t a = 0; pt && name && a < pt->n; a++)
        if (strcmp(pt->names[a], name) == 0)
            return pt->values[a];
    return NULL;
}

const void *kg_sweep_base(const kg_setup_args *args)
{
    const kg_sweep_point *pt = sw_point(args);
    return pt ? pt->base : NULL;
}
