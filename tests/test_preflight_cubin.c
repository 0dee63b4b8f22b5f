/* The static preflight's fatbin/cubin reader (gates/cubin.c).
 *  - no argument: robustness on malformed input (every error is KG_EPARSE/KG_ENOTFOUND with a
 *    message, never a crash), demangling and name matching;
 *  - `test_preflight_cubin FILE`: print "symbol arch regs local smem" for every kernel in FILE's
 *    fatbins (test_preflight_ptxas.sh compares that with ptxas, on compressed builds too);
 *  - `test_preflight_cubin --find FILE NAME...`: look KG_KERNEL spellings up in a fatbin
 *    (test_preflight_names.sh, with kernels nvcc compiled in an anonymous namespace). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "preflight/cubin.h"
#include "core/kg_core.h"
#include "kg_test.h"

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static int dump(const char *path)
{
    kg_cubin_set *s = NULL;
    char *data = NULL;
    size_t len = 0;
    int rc = kg_file_read(&data, &len, path);
    /* A bare .fatbin file (nvcc -fatbin) or an executable with a .nv_fatbin section. */
    if (rc == 0 && len >= 4 && memcmp(data, "\x50\xed\x55\xba", 4) == 0) {
        rc = kg_cubin_set_new(&s);
        if (rc == 0)
            rc = kg_cubin_add_fatbin(s, (const unsigned char *)data, len, path);
    } else if (rc == 0) {
        rc = kg_cubin_load_exe(&s, path);
    }
    free(data);
    if (rc < 0) {
        kg_cubin_set_free(s);
        fprintf(stderr, "%s\n", kg_error_last());
        return 1;
    }
    for (size_t i = 0; i < s->n; i++)
        printf("%s sm_%d %d %d %d\n", s->k[i].symbol, s->k[i].arch, s->k[i].regs,
               s->k[i].local_bytes, s->k[i].static_smem);
    fprintf(stderr, "%d container(s), %zu kernel(s), %d compressed entries unread\n", s->containers,
            s->n, s->compressed_elf);
    kg_cubin_set_free(s);
    return 0;
}

/* `--find FILE NAME...`: look every NAME (a KG_KERNEL spelling) up on every architecture of
 * FILE's fatbins; print "NAME -> symbol sm_N", exit 1 if one is not found (or ambiguous). */
static int find(const char *path, int n, char **names)
{
    kg_cubin_set *s = NULL;
    char *data = NULL;
    size_t len = 0;
    int bad = 0, rc = kg_file_read(&data, &len, path);
    if (rc == 0)
        rc = kg_cubin_set_new(&s);
    if (rc == 0)
        rc = kg_cubin_add_fatbin(s, (const unsigned char *)data, len, path);
    free(data);
    for (int i = 0; rc == 0 && i < n; i++)
        for (int a = 0; a < s->n_archs; a++) {
            const kg_cubin_kernel *k = NULL;
            if (kg_cubin_find_name(&k, s, names[i], s->archs[a]) < 0) {
                printf("%s -> %s\n", names[i], kg_error_last());
                bad = 1;
            } else {
                printf("%s -> %s sm_%d\n", names[i], k->symbol, k->arch);
            }
        }
    if (rc < 0)
        fprintf(stderr, "%s\n", kg_error_last());
    kg_cubin_set_free(s);
    return rc < 0 || bad || !n;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return dump(argv[1]);
    if (argc > 2 && strcmp(argv[1], "--find") == 0)
        return find(argv[2], argc - 3, argv + 3);

    kg_cubin_set *s = NULL;
    CHECK(kg_cubin_set_new(&s) == 0);
    unsigned char buf[256];
    /* A container header claiming more payload than there is. */
    memset(buf, 0, sizeof buf);
    put32(buf, 0xBA55ED50u);
    buf[4] = 1;
    buf[6] = 16;
    put32(buf + 8, 100000);
    CHECK(kg_cubin_add_fatbin(s, buf, sizeof buf, "t") == KG_EPARSE);
    CHECK(strstr(kg_error_last(), "bad header") != NULL);
    /* An entry overrunning its container. */
    put32(buf + 8, 128);
    buf[16] = 2;           /* kind ELF */
    put32(buf + 20, 64);   /* entry header size */
    put32(buf + 24, 4096); /* payload size > container */
    CHECK(kg_cubin_add_fatbin(s, buf, sizeof buf, "t") == KG_EPARSE);
    CHECK(strstr(kg_error_last(), "overruns") != NULL);
    /* An ELF entry whose payload is not an ELF: counted as unread, not parsed. */
    put32(buf + 24, 32);
    CHECK(kg_cubin_add_fatbin(s, buf, sizeof buf, "t") == 0);
    CHECK(s->compressed_elf == 1 && s->n == 0);
    /* Cubins: not an ELF, a section table out of bounds. */
    CHECK(kg_cubin_add_elf(s, buf, sizeof buf, 90, "c") == KG_EPARSE);
    memcpy(buf, "\177ELF\2\1\1", 7);
    put32(buf + 0x28, 0x7fffff00u);
    buf[0x3a] = 64;
    buf[0x3c] = 3;
    CHECK(kg_cubin_add_elf(s, buf, sizeof buf, 90, "c") == KG_EPARSE);
    CHECK(strstr(kg_error_last(), "out of bounds") != NULL);
    /* No fatbin in this test's own executable (host code only). */
    kg_cubin_set *none = NULL;
    CHECK(kg_cubin_load_exe(&none, "/proc/self/exe") == KG_ENOTFOUND);
    CHECK(strstr(kg_error_last(), ".nv_fatbin") != NULL);
    kg_cubin_set_free(s);

    /* Demangling to source-level names, and matching with spaces ignored. */
    char *n = NULL;
    CHECK(kg_demangle_name(&n, "_Z11axpy_kernelfPKfS0_Pfm") == 0 && strcmp(n, "axpy_kernel") == 0);
    free(n);
    CHECK(kg_demangle_name(&n, "_Z2tkIfLi64EEvPT_i") == 0 && strcmp(n, "tk<float, 64>") == 0);
    free(n);
    CHECK(kg_demangle_name(&n, "_ZN2ns6kernelEPf") == 0 && strcmp(n, "ns::kernel") == 0);
    free(n);
    CHECK(kg_demangle_name(&n, "plain_c_kernel") == 0 && strcmp(n, "plain_c_kernel") == 0);
    free(n);
    CHECK(kg_kernel_name_eq("tk<float, 64>", "tk<float,64>"));
    CHECK(!kg_kernel_name_eq("tk<float, 64>", "tk<float, 6>"));
    /* Demangler spellings against KG_KERNEL's #fn. */
    CHECK(kg_demangle_name(&n, "_ZN12_GLOBAL__N_11kEPf") == 0 &&
          strcmp(n, "(anonymous namespace)::k") == 0);
    CHECK(n && kg_kernel_name_match(n, "k") == 2);
    free(n);
    CHECK(kg_kernel_name_match("ns::(anonymous namespace)::k", "ns::k") == 2);
    CHECK(kg_kernel_name_match("tk<4u, 8ul>", "tk<4,8>") == 2);
    CHECK(kg_kernel_name_match("tk<(anonymous namespace)::pol>", "tk<pol>") == 2);
    CHECK(kg_kernel_name_match("ns::inner::k<float>", "k<float>") == 1);
    CHECK(kg_kernel_name_match("ns::inner::k<float>", "inner::k<float>") == 1);
    CHECK(kg_kernel_name_match("ns::k", "::ns::k") == 2);
    CHECK(kg_kernel_name_match("ns::k", "&ns::k") == 2);
    CHECK(kg_kernel_name_match("k2u", "k2") == 0); /* an identifier keeps its letters */
    CHECK(kg_kernel_name_match("tk<0x1f>", "tk<0x1f>") == 2);
    CHECK(kg_kernel_name_match("tk<a::k>", "k>") == 0); /* "::" inside a template argument */
    CHECK(kg_kernel_name_match("myk", "k") == 0);
    CHECK(kg_kernel_name_match("ns::k", "s::k") == 0);
    /* Lookup: the same name wins over a shorter one; two namesakes are ambiguous. */
    kg_cubin_kernel ks[] = {
        { .symbol = "_ZN1a1kEv", .name = "a::k", .arch = 90 },
        { .symbol = "_ZN1b1kEv", .name = "b::k", .arch = 90 },
        { .symbol = "_Z1kv", .name = "k", .arch = 90 },
        { .symbol = "_ZN12_GLOBAL__N_13anoEv", .name = "(anonymous namespace)::ano", .arch = 90 },
        { .symbol = "_ZN1a3oneEv", .name = "a::one", .arch = 90 },
    };
    kg_cubin_set fake = { .k = ks, .n = KG_ARRAY_LEN(ks) };
    const kg_cubin_kernel *hit = NULL;
    CHECK(kg_cubin_find_name(&hit, &fake, "k", 90) == 0 && hit == &ks[2]);
    CHECK(kg_cubin_find_name(&hit, &fake, "b::k", 90) == 0 && hit == &ks[1]);
    CHECK(kg_cubin_find_name(&hit, &fake, "ano", 90) == 0 && hit == &ks[3]);
    CHECK(kg_cubin_find_name(&hit, &fake, "one", 90) == 0 && hit == &ks[4]);
    CHECK(kg_cubin_find_name(&hit, &fake, "one", 80) == KG_ENOTFOUND);
    ks[2].arch = 80; /* now only a::k and b::k answer to "k" on sm_90 */
    CHECK(kg_cubin_find_name(&hit, &fake, "k", 90) == KG_EINVAL);
    CHECK(strstr(kg_error_last(), "ambiguous") != NULL);
    return kg_test_done("test_preflight_cubin");
}
