/* cpu: the forbidden-API table of the hotpath gate is well formed, every row names a real
 * CUPTI callback (runtime or driver), the minimum list is covered, and the table in
 * docs/production-ci.md is exactly the one generated from the code (no drift).
 * `test_hotpath_table --print` writes the generated Markdown (paste it between the markers). */
#include <stdlib.h>
#include <string.h>
#include "hotpath/cupti_watch.h"
#include "core/kg_core.h"
#include "kg_test.h"

#define BEGIN_MARK "<!-- kgate:hotpath-table:begin -->\n"
#define END_MARK "<!-- kgate:hotpath-table:end -->"

/* One Markdown row per (category, when) group, APIs in table order. */
static char *generate(void)
{
    size_t n, cap = 1 << 16, len = 0;
    const kg_cw_rule *r = kg_cw_rules(&n);
    char *out = malloc(cap);
    bool *done = calloc(n, sizeof *done);
    if (!out || !done) {
        free(out);
        free(done);
        return NULL;
    }
    len += (size_t)snprintf(out + len, cap - len,
                            "| category | forbidden when | APIs (with their _v2/_ptsz/_ptds "
                            "variants) |\n| --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        len += (size_t)snprintf(out + len, cap - len, "| %s | %s | ",
                                kg_cw_category_name(r[i].category), kg_cw_when_text(r[i].when));
        bool first = true;
        for (size_t j = i; j < n; j++)
            if (!done[j] && r[j].category == r[i].category && r[j].when == r[i].when) {
                len += (size_t)snprintf(out + len, cap - len, "%s`%s`", first ? "" : ", ",
                                        r[j].api);
                first = false;
                done[j] = true;
            }
        len += (size_t)snprintf(out + len, cap - len, " |\n");
    }
    free(done);
    return out;
}

static void check_base_names(void)
{
    static const char *cases[][2] = {
        { "cudaMalloc_v3020", "cudaMalloc" },
        { "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpyDtoHAsync" },
        { "cudaLaunchKernel_ptsz_v7000", "cudaLaunchKernel" },
        { "__cudaLaunchKernel_v13000", "__cudaLaunchKernel" },
        { "cuMemAlloc", "cuMemAlloc" },
        { "cuCtxSynchronize_v2", "cuCtxSynchronize" },
        { "cudaMemcpy_ptds_v7000", "cudaMemcpy" },
        { "cudaStreamGetCaptureInfo_v2_v11030", "cudaStreamGetCaptureInfo" },
    };
    char buf[128];
    for (size_t i = 0; i < KG_ARRAY_LEN(cases); i++) {
        kg_cw_base_name(cases[i][0], buf, sizeof buf);
        CHECK_MSG(strcmp(buf, cases[i][1]) == 0, "base name of %s: got %s, want %s", cases[i][0],
                  buf, cases[i][1]);
    }
}

static void check_table(void)
{
    size_t n;
    const kg_cw_rule *r = kg_cw_rules(&n);
    CHECK(n > 100);
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(r[i].api && r[i].api[0], "rule %zu has no API name", i);
        CHECK_MSG(kg_cw_category_name(r[i].category) != NULL, "rule %s has no category", r[i].api);
        CHECK_MSG(kg_cw_when_text(r[i].when) != NULL, "rule %s has no condition", r[i].api);
        CHECK_MSG(kg_cw_rule_find(r[i].api) == (int)i, "rule %s is listed twice", r[i].api);
        int cnt = 0;
        int rc = kg_cw_rule_cbid_count(i, &cnt);
        CHECK_MSG(rc == 0 && cnt >= 1, "rule %s matches no CUPTI callback id (rc %d: %s)", r[i].api,
                  rc, rc ? kg_error_last() : "");
    }
    /* The minimum list, with the category each must have. */
    static const struct {
        const char *api;
        kg_cw_category c;
    } must[] = {
        { "cudaMalloc", KG_CW_ALLOC },
        { "cudaMallocAsync", KG_CW_ALLOC },
        { "cudaFree", KG_CW_ALLOC },
        { "cudaFreeAsync", KG_CW_ALLOC },
        { "cudaMallocHost", KG_CW_ALLOC },
        { "cudaHostAlloc", KG_CW_ALLOC },
        { "cudaMallocManaged", KG_CW_ALLOC },
        { "cuMemAlloc", KG_CW_ALLOC },
        { "cuMemAllocAsync", KG_CW_ALLOC },
        { "cuMemFree", KG_CW_ALLOC },
        { "cudaDeviceSynchronize", KG_CW_SYNC },
        { "cudaStreamSynchronize", KG_CW_SYNC },
        { "cudaEventSynchronize", KG_CW_SYNC },
        { "cudaStreamQuery", KG_CW_SYNC },
        { "cudaEventQuery", KG_CW_SYNC },
        { "cuCtxSynchronize", KG_CW_SYNC },
        { "cudaMemcpy", KG_CW_HOST_COPY },
        { "cudaMemset", KG_CW_HOST_COPY },
        { "cudaMemcpyAsync", KG_CW_HOST_COPY },
        { "cuMemcpyDtoHAsync", KG_CW_HOST_COPY },
        { "cudaLaunchKernel", KG_CW_DEFAULT_STREAM },
        { "__cudaLaunchKernel", KG_CW_DEFAULT_STREAM },
        { "cuLaunchKernel", KG_CW_DEFAULT_STREAM },
        { "cudaGraphLaunch", KG_CW_DEFAULT_STREAM },
        { "cudaStreamCreate", KG_CW_OBJECTS },
        { "cudaEventCreate", KG_CW_OBJECTS },
        { "cudaGraphCreate", KG_CW_OBJECTS },
        { "cudaGraphInstantiate", KG_CW_OBJECTS },
        { "cudaLaunchHostFunc", KG_CW_HOST_FUNC },
        { "cuLaunchHostFunc", KG_CW_HOST_FUNC },
        { "cudaStreamAddCallback", KG_CW_HOST_FUNC },
        { "cuStreamAddCallback", KG_CW_HOST_FUNC },
    };
    for (size_t i = 0; i < KG_ARRAY_LEN(must); i++) {
        int k = kg_cw_rule_find(must[i].api);
        CHECK_MSG(k >= 0 && r[k].category == must[i].c, "%s missing or not in category %s",
                  must[i].api, kg_cw_category_name(must[i].c));
        /* Host functions are forbidden on every stream, not only a default one. */
        if (k >= 0 && must[i].c == KG_CW_HOST_FUNC)
            CHECK_MSG(r[k].when == KG_CW_ALWAYS, "%s must be forbidden always", must[i].api);
    }
    /* Allowed calls must not be in the table at all. */
    static const char *allowed[] = { "cudaStreamWaitEvent", "cudaGetLastError",
                                     "cudaFuncSetAttribute", "cuStreamWaitEvent" };
    for (size_t i = 0; i < KG_ARRAY_LEN(allowed); i++)
        CHECK_MSG(kg_cw_rule_find(allowed[i]) < 0, "%s must stay allowed", allowed[i]);
}

static void check_docs(const char *gen)
{
    const char *src = getenv("KG_SOURCE_DIR");
    char path[4096], *doc = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/docs/production-ci.md", src ? src : ".");
    int rc = kg_file_read(&doc, &len, path);
    CHECK_MSG(rc == 0, "cannot read %s: %s", path, rc ? kg_error_last() : "");
    if (rc)
        return;
    const char *b = strstr(doc, BEGIN_MARK), *e = b ? strstr(b, END_MARK) : NULL;
    CHECK_MSG(b && e, "%s lacks the markers %s ... %s", path, BEGIN_MARK, END_MARK);
    if (b && e) {
        b += strlen(BEGIN_MARK);
        bool same = (size_t)(e - b) == strlen(gen) && memcmp(b, gen, strlen(gen)) == 0;
        CHECK_MSG(same,
                  "the forbidden-API table in %s differs from the code's table; "
                  "regenerate it with `test_hotpath_table --print`:\n%s",
                  path, gen);
    }
    free(doc);
}

int main(int argc, char **argv)
{
    char *gen = generate();
    if (!gen) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--print") == 0) {
        fputs(gen, stdout);
        free(gen);
        return 0;
    }
    check_base_names();
    check_table();
    check_docs(gen);
    free(gen);
    return kg_test_done("test_hotpath_table");
}
