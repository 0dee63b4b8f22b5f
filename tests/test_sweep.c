/* cpu: kg_registry_add_sweep expands a template over named axes (cartesian product in axis
 * order, the last axis fastest), generates "<op>/<axis>=<v>,..." ids, hands each case a
 * registry-owned kg_sweep_point (kg_sweep_get, kg_sweep_base), refuses duplicates and bad
 * axes all-or-nothing, and --filter selects on an axis value. */
#include <string.h>
#include "core/kg_core.h"
#include "kg_test.h"

static int nop_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    KG_UNUSED(a), KG_UNUSED(s), KG_UNUSED(io);
    return 0;
}
static int nop_launch(void *s, cudaStream_t st)
{
    KG_UNUSED(s), KG_UNUSED(st);
    return 0;
}
static int nop_ref(void *s, cudaStream_t st, void *h)
{
    KG_UNUSED(s), KG_UNUSED(st), KG_UNUSED(h);
    return 0;
}

static const int base_params = 42;
static int work_model(kg_case_desc *d, const kg_sweep_point *pt)
{
    d->bytes_moved = 8.0 * strtod(pt->values[0], NULL);
    return strcmp(pt->values[0], "13") == 0 ? KG_ERR(KG_EINVAL, "n=13 refused") : 0;
}

static const kg_case_desc tmpl = { .id = "scale",
                                   .op = "scale",
                                   .params = &base_params,
                                   .setup = nop_setup,
                                   .launch = nop_launch,
                                   .reference = nop_ref,
                                   .tags = "sweep" };
static const char *const ns[] = { "4096", "65537" };
static const char *const dts[] = { "f32", "bf16", "f16" };

static const char *id_at(const kg_registry *reg, size_t i)
{
    const kg_case_desc *d = kg_registry_get(reg, i);
    return d ? d->id : "(none)";
}

static void check_expansion(void)
{
    kg_registry *reg = NULL;
    const kg_sweep_axis axes[] = { { "n", ns, 2 }, { "dtype", dts, 3 } };
    static const char *const want[] = { "scale/n=4096,dtype=f32",   "scale/n=4096,dtype=bf16",
                                        "scale/n=4096,dtype=f16",   "scale/n=65537,dtype=f32",
                                        "scale/n=65537,dtype=bf16", "scale/n=65537,dtype=f16" };
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add_sweep(reg, &tmpl, axes, 2) == 0);
    CHECK(kg_registry_count(reg) == 6);
    for (size_t i = 0; i < 6; i++)
        CHECK_MSG(strcmp(id_at(reg, i), want[i]) == 0, "case %zu: '%s', want '%s'", i,
                  id_at(reg, i), want[i]);
    /* Values from setup's point of view; the template's fields are kept. */
    const kg_case_desc *d = kg_registry_get(reg, 4);
    kg_setup_args a = { .seed = 1, .params = d->params };
    CHECK(strcmp(kg_sweep_get(&a, "n"), "65537") == 0);
    CHECK(strcmp(kg_sweep_get(&a, "dtype"), "bf16") == 0);
    CHECK(kg_sweep_get(&a, "tile") == NULL);
    CHECK(kg_sweep_base(&a) == &base_params);
    const kg_sweep_point *pt = (const kg_sweep_point *)d->params;
    CHECK(pt->magic == KG_SWEEP_MAGIC && pt->n == 2 && strcmp(pt->names[1], "dtype") == 0);
    CHECK(pt->values[0] != ns[1]); /* copied: owned by the registry */
    CHECK(strcmp(d->op, "scale") == 0 && strcmp(d->tags, "sweep") == 0 && d->setup == nop_setup);
    /* A plain case is not a sweep point. */
    kg_setup_args plain = { .params = &base_params };
    CHECK(kg_sweep_get(&plain, "n") == NULL && kg_sweep_base(&plain) == NULL);
    CHECK(kg_sweep_get(NULL, "n") == NULL);

    /* --filter on an axis value. */
    kg_selection sel = { 0 };
    CHECK(kg_select(&sel, reg, "dtype=bf16", NULL) == 0 && sel.n == 2 && sel.idx[0] == 1 &&
          sel.idx[1] == 4);
    kg_selection_free(&sel);
    CHECK(kg_select(&sel, reg, "n=65537,dtype=f(16|32)$", NULL) == 0 && sel.n == 2 &&
          sel.idx[0] == 3 && sel.idx[1] == 5);
    kg_selection_free(&sel);
    kg_registry_free(reg);

    /* The sweep_point hook sets each case's work model; its error refuses the sweep. */
    static const char *const n2[] = { "2", "13" };
    const kg_sweep_axis a2[] = { { "n", n2, 1 } }, a13[] = { { "n", n2, 2 } };
    kg_case_desc t = tmpl;
    t.sweep_point = work_model;
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add_sweep(reg, &t, a2, 1) == 0);
    CHECK(kg_registry_get(reg, 0)->bytes_moved == 16.0);
    t.id = "t";
    CHECK(kg_registry_add_sweep(reg, &t, a13, 1) == KG_EINVAL && kg_registry_count(reg) == 1);
    kg_registry_free(reg);
}

static void check_refusals(void)
{
    kg_registry *reg = NULL;
    const kg_sweep_axis axes[] = { { "n", ns, 2 } };
    static const char *const dup_vals[] = { "1", "2", "1" };
    static const char *const bad_vals[] = { "1", "a,b" };
    const kg_sweep_axis dup_val[] = { { "n", dup_vals, 3 } };
    const kg_sweep_axis dup_axis[] = { { "n", ns, 2 }, { "n", ns, 2 } };
    const kg_sweep_axis bad_val[] = { { "n", bad_vals, 2 } };
    const kg_sweep_axis bad_name[] = { { "n=1", ns, 2 } };
    const kg_sweep_axis empty[] = { { "n", ns, 0 } };
    kg_case_desc plain = tmpl;
    plain.id = "scale/n=65537";
    CHECK(kg_registry_new(&reg) == 0);
    CHECK(kg_registry_add(reg, &plain) == 0);
    /* A generated id equal to a registered one: refused, nothing of the sweep stays. */
    CHECK(kg_registry_add_sweep(reg, &tmpl, axes, 1) == KG_EEXISTS);
    CHECK(kg_registry_count(reg) == 1);
    CHECK(strstr(kg_error_last(), "scale/n=65537") != NULL);
    CHECK(kg_registry_add_sweep(reg, &tmpl, dup_val, 1) == KG_EEXISTS);
    CHECK(kg_registry_count(reg) == 1);
    CHECK(kg_registry_add_sweep(reg, &tmpl, dup_axis, 2) == KG_EEXISTS);
    CHECK(kg_registry_add_sweep(reg, &tmpl, bad_val, 1) == KG_EINVAL);
    CHECK(kg_registry_add_sweep(reg, &tmpl, bad_name, 1) == KG_EINVAL);
    CHECK(kg_registry_add_sweep(reg, &tmpl, empty, 1) == KG_EINVAL);
    CHECK(kg_registry_add_sweep(reg, &tmpl, axes, 0) == KG_EINVAL);
    CHECK(kg_registry_count(reg) == 1);
    /* The same sweep twice: the second is a duplicate. */
    kg_case_desc other = tmpl;
    other.id = "other";
    CHECK(kg_registry_add_sweep(reg, &other, axes, 1) == 0);
    CHECK(kg_registry_add_sweep(reg, &other, axes, 1) == KG_EEXISTS);
    CHECK(kg_registry_count(reg) == 3 && strcmp(id_at(reg, 2), "other/n=65537") == 0);
    kg_registry_free(reg); /* frees the generated storage (ASan/valgrind would say otherwise) */
}

int main(void)
{
    check_expansion();
    check_refusals();
    return kg_test_done("test_sweep");
}
