/* The static preflight's fatbin/cubin reader (gates/cubin.c).
 *  - no argument: robustness on malformed input (every error is KG_EPARSE/KG_ENOTFOUND with a
 *    message, never a crash), demangling and name matching;
 *  - `test_preflight_cubin FILE`: print "symbol arch regs local smem" for every kernel in FILE's
 *    fatbins (test_preflight_ptxas.sh compares that with ptxas, on compressed builds too). */
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
    fprintf(stderr, "%d container(s), %zu kernel(s), %d compressed entries unread\n",
            s->containers, s->n, s->compressed_elf);
    kg_cubin_set_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return dump(argv[1]);

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
    buf[16] = 2;              /* kind ELF */
    put32(buf + 20, 64);      /* entry header size */
    put32(buf + 24, 4096);    /* payload size > container */
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
    return kg_test_done("test_preflight_cubin");
}
