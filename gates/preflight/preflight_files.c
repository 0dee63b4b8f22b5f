/* The preflight's input files: resource baseline and spill allowlist. Strict: every error names
 * the file and the entry, and a bad file stops the run before anything is written. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "preflight/cubin.h"
#include "preflight/preflight.h"

int kg_arch_parse(const char *s, int *arch)
{
    char *end = NULL;
    if (!s || strncmp(s, "sm_", 3) != 0 || !s[3])
        return KG_EPARSE;
    errno = 0;
    long v = strtol(s + 3, &end, 10);
    if (errno || *end || v < 10 || v > 1000)
        return KG_EPARSE;
    *arch = (int)v;
    return 0;
}

/* ---- strict JSON field helpers ---------------------------------------------------------- */

typedef struct {
    const char *file;
    char where[256]; /* "entry 3 (kernel 'x', sm_90)" */
} jctx;

static int check_keys(const jctx *c, const cJSON *o, const char *const *keys, size_t nkeys)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        bool known = false;
        for (size_t i = 0; i < nkeys && !known; i++)
            known = strcmp(it->string, keys[i]) == 0;
        if (!known)
            return KG_ERR(KG_EPARSE, "%s: %s: unknown key '%s'", c->file, c->where, it->string);
    }
    return 0;
}

static int get_int(const jctx *c, const cJSON *o, const char *key, long long lo, long long hi,
                   long long *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return KG_ERR(KG_EPARSE, "%s: %s: missing '%s'", c->file, c->where, key);
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi)
        return KG_ERR(KG_EPARSE, "%s: %s: '%s' must be an integer in [%lld, %lld]", c->file,
                      c->where, key, lo, hi);
    *out = (long long)d;
    return 0;
}

static int get_str(const jctx *c, const cJSON *o, const char *key, bool required, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v && !required)
        return 0;
    if (!v)
        return KG_ERR(KG_EPARSE, "%s: %s: missing '%s'", c->file, c->where, key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return KG_ERR(KG_EPARSE, "%s: %s: '%s' must be a non-empty string", c->file, c->where, key);
    *out = v->valuestring;
    return 0;
}

/* Parse the document, check its version and return the array under `list_key`. */
static int open_doc(cJSON **root, const cJSON **list, const char *text, const char *name,
                    int version, const char *list_key)
{
    const char *top_keys[] = { "version", "comment", list_key };
    jctx c = { name, "top level" };
    long long v;
    /* The strict loader: no duplicate key, nothing after the value. */
    int prc = kg_json_parse_strict(root, text, strlen(text), name);
    if (prc < 0)
        return prc;
    if (!cJSON_IsObject(*root))
        return KG_ERR(KG_EPARSE, "%s: top level must be an object", name);
    int rc = check_keys(&c, *root, top_keys, KG_ARRAY_LEN(top_keys));
    if (rc == 0)
        rc = get_int(&c, *root, "version", 1, 1000, &v);
    if (rc < 0)
        return rc;
    if (v != version)
        return KG_ERR(KG_EPARSE, "%s: version %lld is not supported (expected %d)", name, v,
                      version);
    *list = cJSON_GetObjectItemCaseSensitive(*root, list_key);
    if (!cJSON_IsArray(*list))
        return KG_ERR(KG_EPARSE, "%s: '%s' must be an array", name, list_key);
    return 0;
}

/* ---- resource baseline ------------------------------------------------------------------- */

void kg_res_baseline_free(kg_res_baseline *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->e[i].kernel);
    free(b->e);
    memset(b, 0, sizeof *b);
}

const kg_res_entry *kg_res_baseline_find(const kg_res_baseline *b, const char *kernel, int arch,
                                         int block_threads, long long dynamic_smem)
{
    for (size_t i = 0; i < b->n; i++) {
        const kg_res_entry *e = &b->e[i];
        if (e->arch == arch && e->block_threads == block_threads &&
            e->dynamic_smem == dynamic_smem && kg_kernel_name_eq(e->kernel, kernel))
            return e;
    }
    return NULL;
}

int kg_res_baseline_put(kg_res_baseline *b, const kg_res_entry *e)
{
    kg_res_entry *cur = (kg_res_entry *)kg_res_baseline_find(b, e->kernel, e->arch,
                                                             e->block_threads, e->dynamic_smem);
    char *k = strdup(e->kernel);
    if (!k)
        return KG_ERR(KG_ENOMEM, "out of memory");
    if (cur) {
        free(cur->kernel);
        *cur = *e;
        cur->kernel = k;
        return 0;
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        kg_res_entry *ne = realloc(b->e, cap * sizeof *ne);
        if (!ne) {
            free(k);
            return KG_ERR(KG_ENOMEM, "out of memory");
        }
        b->e = ne;
        b->cap = cap;
    }
    b->e[b->n] = *e;
    b->e[b->n++].kernel = k;
    return 0;
}

int kg_res_baseline_parse(kg_res_baseline *b, const char *text, const char *name)
{
    static const char *keys[] = { "kernel",    "arch",          "block_threads", "dynamic_smem",
                                  "registers", "blocks_per_sm", "local_bytes",   "static_smem" };
    int rc = 0;
    cJSON *root = NULL;
    const cJSON *list, *it;
    size_t i = 0;
    memset(b, 0, sizeof *b);
    KG_TRY(open_doc(&root, &list, text, name, KG_RESOURCES_VERSION, "kernels"));
    cJSON_ArrayForEach(it, list) {
        jctx c = { name, "" };
        const char *kernel = NULL, *arch_s = NULL;
        long long v[6];
        kg_res_entry e = { 0 };
        snprintf(c.where, sizeof c.where, "kernels[%zu]", i);
        if (!cJSON_IsObject(it)) {
            rc = KG_ERR(KG_EPARSE, "%s: %s: must be an object", name, c.where);
            goto cleanup;
        }
        KG_TRY(get_str(&c, it, "kernel", true, &kernel));
        snprintf(c.where, sizeof c.where, "kernels[%zu] ('%s')", i, kernel);
        KG_TRY(check_keys(&c, it, keys, KG_ARRAY_LEN(keys)));
        KG_TRY(get_str(&c, it, "arch", true, &arch_s));
        if (kg_arch_parse(arch_s, &e.arch) < 0) {
            rc = KG_ERR(KG_EPARSE, "%s: %s: 'arch' must look like \"sm_90\", got '%s'", name,
                        c.where, arch_s);
            goto cleanup;
        }
        KG_TRY(get_int(&c, it, "block_threads", 1, 1024, &v[0]));
        KG_TRY(get_int(&c, it, "dynamic_smem", 0, 1 << 30, &v[1]));
        KG_TRY(get_int(&c, it, "registers", 0, 255, &v[2]));
        KG_TRY(get_int(&c, it, "blocks_per_sm", 0, 64, &v[3]));
        KG_TRY(get_int(&c, it, "local_bytes", 0, 1 << 24, &v[4]));
        KG_TRY(get_int(&c, it, "static_smem", 0, 1 << 30, &v[5]));
        e.kernel = (char *)kernel;
        e.block_threads = (int)v[0];
        e.dynamic_smem = v[1];
        e.registers = (int)v[2];
        e.blocks_per_sm = (int)v[3];
        e.local_bytes = (int)v[4];
        e.static_smem = (int)v[5];
        if (kg_res_baseline_find(b, kernel, e.arch, e.block_threads, e.dynamic_smem)) {
            rc = KG_ERR(KG_EPARSE,
                        "%s: %s: duplicate entry for sm_%d, %d threads, %lld B "
                        "dynamic shared memory",
                        name, c.where, e.arch, e.block_threads, e.dynamic_smem);
            goto cleanup;
        }
        KG_TRY(kg_res_baseline_put(b, &e));
        i++;
    }
cleanup:
    cJSON_Delete(root);
    if (rc < 0)
        kg_res_baseline_free(b);
    return rc;
}

int kg_res_baseline_load(kg_res_baseline *b, const char *path)
{
    char *text = NULL;
    memset(b, 0, sizeof *b);
    int rc = kg_file_read_limit(&text, NULL, path, KG_INPUT_MAX_BYTES);
    if (rc == 0)
        rc = kg_res_baseline_parse(b, text, path);
    free(text);
    return rc;
}

static int cmp_entry(const void *pa, const void *pb)
{
    const kg_res_entry *a = pa, *b = pb;
    int c = strcmp(a->kernel, b->kernel);
    if (c)
        return c;
    if (a->arch != b->arch)
        return a->arch < b->arch ? -1 : 1;
    if (a->block_threads != b->block_threads)
        return a->block_threads < b->block_threads ? -1 : 1;
    return (a->dynamic_smem > b->dynamic_smem) - (a->dynamic_smem < b->dynamic_smem);
}

int kg_res_baseline_save(const kg_res_baseline *b, const char *path)
{
    int rc = 0;
    char arch[16], *text = NULL;
    kg_res_entry *sorted = NULL;
    cJSON *root = cJSON_CreateObject(), *list = cJSON_CreateArray();
    if (!root || !list) {
        cJSON_Delete(list);
        goto oom;
    }
    cJSON_AddNumberToObject(root, "version", KG_RESOURCES_VERSION);
    cJSON_AddStringToObject(root, "comment",
                            "kgate preflight resource baseline: written by `kgate preflight "
                            "--update-baseline`; see docs/production-ci.md");
    cJSON_AddItemToObject(root, "kernels", list);
    if (b->n && !(sorted = malloc(b->n * sizeof *sorted)))
        goto oom;
    if (b->n)
        memcpy(sorted, b->e, b->n * sizeof *sorted);
    if (b->n)
        qsort(sorted, b->n, sizeof *sorted, cmp_entry);
    for (size_t i = 0; i < b->n; i++) {
        const kg_res_entry *e = &sorted[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            goto oom;
        snprintf(arch, sizeof arch, "sm_%d", e->arch);
        cJSON_AddStringToObject(o, "kernel", e->kernel);
        cJSON_AddStringToObject(o, "arch", arch);
        cJSON_AddNumberToObject(o, "block_threads", e->block_threads);
        cJSON_AddNumberToObject(o, "dynamic_smem", (double)e->dynamic_smem);
        cJSON_AddNumberToObject(o, "registers", e->registers);
        cJSON_AddNumberToObject(o, "blocks_per_sm", e->blocks_per_sm);
        cJSON_AddNumberToObject(o, "local_bytes", e->local_bytes);
        cJSON_AddNumberToObject(o, "static_smem", e->static_smem);
        cJSON_AddItemToArray(list, o);
    }
    if (!(text = cJSON_Print(root)))
        goto oom;
    size_t len = strlen(text);
    text[len] = '\n'; /* the terminator becomes the final newline */
    rc = kg_file_write_atomic(path, text, len + 1);
    goto cleanup;
oom:
    rc = KG_ERR(KG_ENOMEM, "out of memory writing %s", path);
cleanup:
    if (text)
        cJSON_free(text);
    free(sorted);
    cJSON_Delete(root);
    return rc;
}

/* ---- spill allowlist --------------------------------------------------------------------- */

void kg_spill_allowlist_free(kg_spill_allowlist *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->e[i].kernel);
        free(a->e[i].reason);
    }
    free(a->e);
    memset(a, 0, sizeof *a);
}

const kg_spill_entry *kg_spill_allowlist_find(const kg_spill_allowlist *a, const char *kernel,
                                              int arch)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].arch == arch && kg_kernel_name_eq(a->e[i].kernel, kernel))
            return &a->e[i];
    return NULL;
}

int kg_spill_allowlist_parse(kg_spill_allowlist *a, const char *text, const char *name)
{
    static const char *keys[] = { "kernel", "arch", "local_bytes", "reason" };
    int rc = 0;
    cJSON *root = NULL;
    const cJSON *list, *it;
    size_t i = 0;
    memset(a, 0, sizeof *a);
    KG_TRY(open_doc(&root, &list, text, name, KG_ALLOWLIST_VERSION, "entries"));
    int n = cJSON_GetArraySize(list);
    if (n > 0 && !(a->e = calloc((size_t)n, sizeof *a->e))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading %s", name);
        goto cleanup;
    }
    cJSON_ArrayForEach(it, list) {
        jctx c = { name, "" };
        const char *kernel = NULL, *arch_s = NULL, *reason = NULL;
        long long bytes;
        int arch;
        snprintf(c.where, sizeof c.where, "entries[%zu]", i);
        if (!cJSON_IsObject(it)) {
            rc = KG_ERR(KG_EPARSE, "%s: %s: must be an object", name, c.where);
            goto cleanup;
        }
        KG_TRY(get_str(&c, it, "kernel", true, &kernel));
        snprintf(c.where, sizeof c.where, "entries[%zu] ('%s')", i, kernel);
        KG_TRY(check_keys(&c, it, keys, KG_ARRAY_LEN(keys)));
        KG_TRY(get_str(&c, it, "arch", true, &arch_s));
        if (kg_arch_parse(arch_s, &arch) < 0) {
            rc = KG_ERR(KG_EPARSE, "%s: %s: 'arch' must look like \"sm_90\", got '%s'", name,
                        c.where, arch_s);
            goto cleanup;
        }
        /* Zero would allowlist nothing: an entry names the exact nonzero spill it accepts. */
        KG_TRY(get_int(&c, it, "local_bytes", 1, 1 << 24, &bytes));
        KG_TRY(get_str(&c, it, "reason", true, &reason));
        if (kg_spill_allowlist_find(a, kernel, arch)) {
            rc = KG_ERR(KG_EPARSE, "%s: %s: duplicate entry for sm_%d", name, c.where, arch);
            goto cleanup;
        }
        kg_spill_entry *e = &a->e[a->n];
        e->arch = arch;
        e->local_bytes = (int)bytes;
        e->kernel = strdup(kernel);
        e->reason = strdup(reason);
        a->n++;
        if (!e->kernel || !e->reason) {
            rc = KG_ERR(KG_ENOMEM, "out of memory reading %s", name);
            goto cleanup;
        }
        i++;
    }
cleanup:
    cJSON_Delete(root);
    if (rc < 0)
        kg_spill_allowlist_free(a);
    return rc;
}

int kg_spill_allowlist_load(kg_spill_allowlist *a, const char *path)
{
    char *text = NULL;
    memset(a, 0, sizeof *a);
    int rc = kg_file_read_limit(&text, NULL, path, KG_INPUT_MAX_BYTES);
    if (rc == 0)
        rc = kg_spill_allowlist_parse(a, text, path);
    free(text);
    return rc;
}
