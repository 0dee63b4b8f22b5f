/* `kgate list`: the registered cases, on the console and as a JSON catalogue. Needs no GPU. */
#include <string.h>
#include "cli/cli.h"

typedef struct {
    const char *filter;
    const char *json_path;
    const char *tag;
} list_opts;

static int list_filter(void *opts, const char *v)
{
    ((list_opts *)opts)->filter = v; /* any string, as the gate commands' --filter */
    return 0;
}

static const kg_opt list_table[] = {
    KG_OPT_FN_("filter", "REGEX", list_filter, 0,
               "list the cases whose id or a tag matches (POSIX extended regex; default: all)"),
    KG_OPT_STRING_("tag", "T[,U]", list_opts, tag, "list only the cases with one of these tags"),
    KG_OPT_STRING_("json", "FILE", list_opts, json_path,
                   "also write the catalogue as JSON (with defect expectations, if any); '-': "
                   "standard output, instead of the table"),
};

static const char list_description[] =
    "List the registered cases: id, reference, parity policy, work model and kernels.\n"
    "--json writes the same as a JSON catalogue (with defect expectations, if any).\n"
    "Needs no GPU.\n";
static const char list_exit_codes[] =
    "exit codes: 0 listed, 2 usage or input error (a --filter or --tag matching no case, an\n"
    "            unwritable --json path), 4 a write failed\n";

/* The optional fields a case set (none: nothing written). */
static void list_settings_json(cJSON *o, const kg_case_desc *d)
{
    if (d->xfail_gate) {
        cJSON_AddStringToObject(o, "xfail_gate", d->xfail_gate);
        cJSON_AddStringToObject(o, "xfail_reason", d->xfail_reason);
    }
    if (d->bench_band_floor > 0)
        cJSON_AddNumberToObject(o, "bench_band_floor", d->bench_band_floor);
    if (d->bench_budget_s > 0)
        cJSON_AddNumberToObject(o, "bench_budget_s", d->bench_budget_s);
    if (d->timeout_s > 0)
        cJSON_AddNumberToObject(o, "timeout_s", d->timeout_s);
    if (d->tags && *d->tags)
        cJSON_AddStringToObject(o, "tags", d->tags);
}

static cJSON *list_case_json(const kg_case_desc *d)
{
    cJSON *o = cJSON_CreateObject(), *k = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "id", d->id);
    cJSON_AddStringToObject(o, "op", d->op);
    cJSON_AddStringToObject(o, "reference", d->ref_kind ? d->ref_kind : "unspecified");
    cJSON_AddStringToObject(o, "parity",
                            d->parity.kind == KG_PARITY_BITWISE ? "bitwise" : "tolerance");
    cJSON_AddNumberToObject(o, "bytes_moved", d->bytes_moved);
    cJSON_AddNumberToObject(o, "flops", d->flops);
    cJSON_AddBoolToObject(o, "batch_invariant", d->batch_invariant != 0);
    for (int i = 0; i < d->n_kernels; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", d->kernels[i].name);
        cJSON_AddNumberToObject(e, "block_threads", d->kernels[i].block_threads);
        cJSON_AddNumberToObject(e, "dynamic_smem", (double)d->kernels[i].dynamic_smem);
        cJSON_AddItemToArray(k, e);
    }
    cJSON_AddItemToObject(o, "kernels", k);
    if (d->expect_gate)
        cJSON_AddStringToObject(o, "expect_gate", d->expect_gate);
    if (d->expect_reason)
        cJSON_AddStringToObject(o, "expect_reason", d->expect_reason);
    list_settings_json(o, d);
    return o;
}

/* The catalogue, checked writable first, written atomically. */
static int list_write_json(const kg_registry *reg, const kg_selection *sel, const char *path)
{
    int rc = 0;
    char *text = NULL;
    cJSON *cat = NULL;
    KG_TRY(kg_path_check_writable(path));
    cat = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(cat, "cases");
    cJSON_AddStringToObject(cat, "schema", "kgate-catalogue/1");
    for (size_t i = 0; i < sel->n; i++)
        cJSON_AddItemToArray(arr, list_case_json(kg_registry_get(reg, sel->idx[i])));
    text = cJSON_Print(cat);
    if (!text) {
        rc = KG_ERR(KG_ENOMEM, "out of memory writing %s", path);
        goto cleanup;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* cJSON's terminator becomes the final newline */
    KG_TRY(kg_file_write_atomic(path, text, len + 1));
cleanup:
    cJSON_free(text);
    cJSON_Delete(cat);
    return rc;
}

/* A text cell as is, or quoted ("cpu f64", with \" and \\) when it is empty or holds a space,
 * a quote or a backslash, so every row splits into the same columns on whitespace. */
static const char *list_quote(char *b, size_t n, const char *s)
{
    size_t o = 0;
    if (*s && !strpbrk(s, " \t\n\"\\")) {
        snprintf(b, n, "%s", s);
        return b;
    }
    b[o++] = '"';
    for (; *s && o + 3 < n; s++) {
        if (*s == '"' || *s == '\\')
            b[o++] = '\\';
        b[o++] = *s == '\t' || *s == '\n' ? ' ' : *s;
    }
    b[o++] = '"';
    b[o] = '\0';
    return b;
}

/* One row's cells but the kernels (the last column, left unpadded). */
typedef struct {
    char ref[256], mb[32], gflop[32];
    const char *id, *parity;
} list_row;

static void list_row_make(list_row *r, const kg_case_desc *d)
{
    r->id = d->id;
    list_quote(r->ref, sizeof r->ref, d->ref_kind ? d->ref_kind : "-");
    r->parity = d->parity.kind == KG_PARITY_BITWISE ? "bitwise" : "tolerance";
    snprintf(r->mb, sizeof r->mb, "%.3f", d->bytes_moved / 1e6);
    snprintf(r->gflop, sizeof r->gflop, "%.3f", d->flops / 1e9);
}

static int list_max(int w, const char *s) { return (int)strlen(s) > w ? (int)strlen(s) : w; }

/* Column widths from the data (the longest id, reference, ...), never narrower than the
 * header, so long ids (a defect's, a sweep's) do not push the row out of line. */
static void list_print(const kg_registry *reg, const kg_selection *sel)
{
    static const char *const head[5] = { "case", "ref", "parity", "MB moved", "GFLOP" };
    int w[5];
    list_row r;
    char kb[512];
    for (int c = 0; c < 5; c++)
        w[c] = (int)strlen(head[c]);
    for (size_t i = 0; i < sel->n; i++) {
        list_row_make(&r, kg_registry_get(reg, sel->idx[i]));
        w[0] = list_max(w[0], r.id), w[1] = list_max(w[1], r.ref);
        w[2] = list_max(w[2], r.parity), w[3] = list_max(w[3], r.mb);
        w[4] = list_max(w[4], r.gflop);
    }
    printf("%-*s %-*s %-*s %-*s %-*s %s\n", w[0], head[0], w[1], head[1], w[2], head[2], w[3],
           head[3], w[4], head[4], "kernels");
    for (size_t i = 0; i < sel->n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, sel->idx[i]);
        list_row_make(&r, d);
        printf("%-*s %-*s %-*s %-*s %-*s ", w[0], r.id, w[1], r.ref, w[2], r.parity, w[3], r.mb,
               w[4], r.gflop);
        for (int k = 0; k < d->n_kernels; k++)
            printf("%s%s", k ? "," : "", list_quote(kb, sizeof kb, d->kernels[k].name));
        printf("%s\n", d->n_kernels ? "" : "-");
    }
    printf("%zu case(s)\n", sel->n);
}

int kg_cmd_list(kg_registry *reg, int argc, char **argv)
{
    list_opts o = { .filter = NULL, .json_path = NULL, .tag = NULL };
    kg_opt_table table = { .opts = list_table,
                           .n = KG_ARRAY_LEN(list_table),
                           .target = &o,
                           .standalone_ok = true };
    kg_opt_cmd cmd = { .command = "list",
                       .description = list_description,
                       .tables = &table,
                       .n_tables = 1,
                       .exit_codes = list_exit_codes };
    kg_selection sel = { 0 };
    bool help;
    int rc = 0;
    KG_TRY(kg_opt_cmd_parse(&cmd, argc, argv, &help, NULL, 0, NULL));
    if (help)
        goto cleanup;
    KG_TRY(kg_select(&sel, reg, o.filter, o.tag));
    if (o.json_path)
        KG_TRY(list_write_json(reg, &sel, o.json_path));
    if (!o.json_path || strcmp(o.json_path, "-") != 0) /* "-": stdout is the JSON alone */
        list_print(reg, &sel);
cleanup:
    kg_selection_free(&sel);
    return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
}
