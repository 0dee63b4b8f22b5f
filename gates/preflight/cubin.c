/* Static kernel resources from the fatbins embedded in a host executable (see cubin.h).
 *
 * Formats (public reverse-engineering, checked here against `nvcc -Xptxas -v`):
 *  - fatbin container: u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 payload size;
 *    entries follow: u16 kind (1 PTX, 2 ELF), u16, u32 entry header size, u64 payload size,
 *    u32 compressed size at +16, u32 arch at +28, u64 flags at +40 (compressed payloads: 0x2000
 *    old LZ4, 0x8000 zstd), u64 uncompressed size at +56.
 *  - cubin: ELF64; per kernel `.text.<sym>`, `.nv.shared.<sym>` (NOBITS, size = static shared
 *    memory; on sm_90 it starts after a 1 KiB system window, `.nv.shared.reserved.0`),
 *    `.nv.constant0.<sym>`, `.nv.info.<sym>`; module `.nv.info` holds per-symbol SVAL records
 *    (u32 symbol index, u32 value): EIATTR_REGCOUNT 0x2f, FRAME_SIZE 0x11, MIN_STACK_SIZE 0x12,
 *    MAX_STACK_SIZE 0x23. Records: u8 format (1 NVAL, 2 BVAL, 3 HVAL, 4 SVAL), u8 attribute,
 *    then 2 bytes of value (BVAL/HVAL), or u16 size + size bytes (SVAL). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "preflight/cubin.h"
#include "core/kg_core.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_FLAG_COMPRESS_LZ4 0x2000u
#define FATBIN_FLAG_COMPRESS_ZSTD 0x8000u

#define EIFMT_NVAL 1
#define EIFMT_BVAL 2
#define EIFMT_HVAL 3
#define EIFMT_SVAL 4
#define EIATTR_MAX_THREADS 0x05
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_MIN_STACK_SIZE 0x12
#define EIATTR_MAXREG_COUNT 0x1b
#define EIATTR_MAX_STACK_SIZE 0x23
#define EIATTR_REGCOUNT 0x2f

#define SHT_SYMTAB 2
#define SHT_NOBITS 8
#define STT_FUNC 2
#define STO_CUDA_ENTRY 0x10 /* st_other bit of __global__ functions */
#define SM90_SMEM_WINDOW 1024

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16;
}
static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

int kg_cubin_set_new(kg_cubin_set **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : KG_ERR(KG_ENOMEM, "out of memory for the cubin set");
}

void kg_cubin_set_free(kg_cubin_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->k[i].symbol);
        free(s->k[i].name);
    }
    free(s->k);
    free(s);
}

static void note_arch(kg_cubin_set *s, int arch)
{
    int i = 0;
    while (i < s->n_archs && s->archs[i] < arch)
        i++;
    if ((i < s->n_archs && s->archs[i] == arch) || s->n_archs == (int)KG_ARRAY_LEN(s->archs))
        return;
    memmove(&s->archs[i + 1], &s->archs[i], (size_t)(s->n_archs - i) * sizeof s->archs[0]);
    s->archs[i] = arch;
    s->n_archs++;
}

/* ---- ELF (cubin) ---------------------------------------------------------------------- */

typedef struct {
    const unsigned char *p;
    size_t len;
    uint64_t shoff;
    unsigned shnum, shentsize;
    const char *shstr;
    size_t shstr_len;
    const char *what;
} elf_view;

typedef struct {
    const char *name;
    uint32_t type, info, link;
    uint64_t flags, off, size;
} elf_sec;

static int elf_open(elf_view *e, const unsigned char *p, size_t len, const char *what)
{
    memset(e, 0, sizeof *e);
    e->p = p;
    e->len = len;
    e->what = what;
    if (len < 64 || memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
        return KG_ERR(KG_EPARSE, "%s: not a 64-bit little-endian ELF", what);
    e->shoff = rd64(p + 0x28);
    e->shentsize = rd16(p + 0x3a);
    e->shnum = rd16(p + 0x3c);
    unsigned shstrndx = rd16(p + 0x3e);
    if (e->shentsize < 64 || e->shoff > len || (uint64_t)e->shnum * e->shentsize > len - e->shoff ||
        shstrndx >= e->shnum)
        return KG_ERR(KG_EPARSE, "%s: section header table out of bounds", what);
    const unsigned char *sh = p + e->shoff + (size_t)shstrndx * e->shentsize;
    uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
    if (off > len || size > len - off || size == 0 || p[off + size - 1] != '\0')
        return KG_ERR(KG_EPARSE, "%s: section name table out of bounds", what);
    e->shstr = (const char *)p + off;
    e->shstr_len = size;
    return 0;
}

static int elf_sec_get(const elf_view *e, unsigned i, elf_sec *s)
{
    const unsigned char *sh = e->p + e->shoff + (size_t)i * e->shentsize;
    uint32_t name = rd32(sh);
    s->type = rd32(sh + 4);
    s->flags = rd64(sh + 8);
    s->off = rd64(sh + 0x18);
    s->size = rd64(sh + 0x20);
    s->link = rd32(sh + 0x28);
    s->info = rd32(sh + 0x2c);
    if (name >= e->shstr_len)
        return KG_ERR(KG_EPARSE, "%s: section %u: name out of bounds", e->what, i);
    s->name = e->shstr + name;
    if (s->type != SHT_NOBITS && (s->off > e->len || s->size > e->len - s->off))
        return KG_ERR(KG_EPARSE, "%s: section %s out of bounds", e->what, s->name);
    return 0;
}

static int find_sec(const elf_view *e, const char *prefix, const char *sym, elf_sec *out)
{
    size_t pl = strlen(prefix);
    for (unsigned i = 1; i < e->shnum; i++) {
        elf_sec s;
        if (elf_sec_get(e, i, &s) < 0)
            return -1;
        if (strncmp(s.name, prefix, pl) == 0 && strcmp(s.name + pl, sym) == 0) {
            *out = s;
            return 1;
        }
    }
    return 0;
}

/* Walk EIATTR records; call `fn` for each. */
typedef void (*attr_fn)(void *ctx, int fmt, int attr, const unsigned char *val, size_t n);
static int walk_attrs(const elf_view *e, const elf_sec *s, attr_fn fn, void *ctx)
{
    const unsigned char *p = e->p + s->off, *end = p + s->size;
    while (p + 4 <= end) {
        int fmt = p[0], attr = p[1];
        if (fmt == EIFMT_SVAL) {
            size_t n = rd16(p + 2);
            if (p + 4 + n > end)
                return KG_ERR(KG_EPARSE, "%s: %s: attribute 0x%02x overruns the section", e->what,
                              s->name, attr);
            fn(ctx, fmt, attr, p + 4, n);
            p += 4 + n;
        } else if (fmt == EIFMT_NVAL || fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) {
            fn(ctx, fmt, attr, p + 2, fmt == EIFMT_NVAL ? 0 : 2);
            p += 4;
        } else {
            return KG_ERR(KG_EPARSE, "%s: %s: unknown attribute format %d", e->what, s->name, fmt);
        }
    }
    return 0;
}

typedef struct {
    uint32_t symidx;
    kg_cubin_kernel *k;
} module_ctx;

static void module_attr(void *vctx, int fmt, int attr, const unsigned char *v, size_t n)
{
    module_ctx *c = vctx;
    if (fmt != EIFMT_SVAL || n < 8 || rd32(v) != c->symidx)
        return;
    int val = (int)rd32(v + 4);
    switch (attr) {
    case EIATTR_REGCOUNT: c->k->regs = val; break;
    case EIATTR_FRAME_SIZE: c->k->frame_bytes = val; break;
    case EIATTR_MIN_STACK_SIZE: c->k->min_stack_bytes = val; break;
    case EIATTR_MAX_STACK_SIZE: c->k->max_stack_bytes = val; break;
    }
}

static void kernel_attr(void *vctx, int fmt, int attr, const unsigned char *v, size_t n)
{
    kg_cubin_kernel *k = vctx;
    if (attr == EIATTR_MAX_THREADS && fmt == EIFMT_SVAL && n >= 12)
        k->max_threads = (int)(rd32(v) * rd32(v + 4) * rd32(v + 8));
    else if (attr == EIATTR_MAXREG_COUNT && fmt == EIFMT_HVAL)
        k->maxreg = rd16(v);
}

static int push_kernel(kg_cubin_set *s, kg_cubin_kernel *k)
{
    if (kg_cubin_find_symbol(s, k->symbol, k->arch)) { /* same kernel in two containers */
        free(k->symbol);
        free(k->name);
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        kg_cubin_kernel *nk = realloc(s->k, cap * sizeof *nk);
        if (!nk) {
            free(k->symbol);
            free(k->name);
            return KG_ERR(KG_ENOMEM, "out of memory for cubin kernels");
        }
        s->k = nk;
        s->cap = cap;
    }
    s->k[s->n++] = *k;
    return 0;
}

/* One kernel symbol of a cubin: its attributes and sections. */
static int parse_kernel(kg_cubin_set *s, const elf_view *e, const elf_sec *info, uint32_t symidx,
                        const char *name, int arch, bool sm90_window)
{
    int rc = 0, f;
    elf_sec sec;
    kg_cubin_kernel k = { 0 };
    k.arch = arch;
    k.frame_bytes = k.min_stack_bytes = k.max_stack_bytes = -1;
    k.regs = -1;
    if (!(k.symbol = strdup(name))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    KG_TRY(kg_demangle_name(&k.name, name));
    if (info) {
        module_ctx c = { symidx, &k };
        KG_TRY(walk_attrs(e, info, module_attr, &c));
    }
    if ((f = find_sec(e, ".nv.info.", name, &sec)) > 0)
        KG_TRY(walk_attrs(e, &sec, kernel_attr, &k));
    if (f >= 0 && (f = find_sec(e, ".text.", name, &sec)) > 0 && k.regs < 0)
        k.regs = (int)(sec.info >> 24); /* older cubins: registers in sh_info's top byte */
    if (f >= 0 && (f = find_sec(e, ".nv.shared.", name, &sec)) > 0) {
        int64_t sz = (int64_t)sec.size - (sm90_window ? SM90_SMEM_WINDOW : 0);
        k.static_smem = sz > 0 ? (int)sz : 0;
    }
    if (f >= 0 && (f = find_sec(e, ".nv.constant0.", name, &sec)) > 0)
        k.const_bytes = (int)sec.size;
    if (f < 0) {
        rc = KG_ERR(KG_EPARSE, "%s: kernel %s: malformed section table", e->what, name);
        goto cleanup;
    }
    if (k.regs < 0) {
        rc = KG_ERR(KG_EPARSE, "%s: kernel %s: no register count (EIATTR_REGCOUNT)", e->what, name);
        goto cleanup;
    }
    k.local_bytes = k.frame_bytes > 0 ? k.frame_bytes : 0;
    rc = push_kernel(s, &k);
    k.symbol = k.name = NULL; /* owned by the set (or freed by push_kernel) */
cleanup:
    free(k.symbol);
    free(k.name);
    return rc;
}

int kg_cubin_add_elf(kg_cubin_set *s, const unsigned char *p, size_t len, int arch,
                     const char *what)
{
    int rc = 0;
    elf_view e;
    elf_sec symtab = { 0 }, strtab = { 0 }, info = { 0 }, sec;
    bool have_info = false, sm90_window = false;
    KG_TRY(elf_open(&e, p, len, what));
    for (unsigned i = 1; i < e.shnum; i++) {
        KG_TRY(elf_sec_get(&e, i, &sec));
        if (sec.type == SHT_SYMTAB)
            symtab = sec;
        else if (strcmp(sec.name, ".nv.info") == 0) {
            info = sec;
            have_info = true;
        } else if (strcmp(sec.name, ".nv.shared.reserved.0") == 0)
            sm90_window = arch >= 90;
    }
    if (!symtab.size)
        goto cleanup; /* no symbols: nothing to report */
    if (symtab.link >= e.shnum) {
        rc = KG_ERR(KG_EPARSE, "%s: .symtab links to a missing string table", what);
        goto cleanup;
    }
    KG_TRY(elf_sec_get(&e, symtab.link, &strtab));
    if (strtab.type == SHT_NOBITS || !strtab.size || p[strtab.off + strtab.size - 1] != '\0') {
        rc = KG_ERR(KG_EPARSE, "%s: symbol string table is not terminated", what);
        goto cleanup;
    }
    for (uint64_t off = 24; off + 24 <= symtab.size; off += 24) { /* entry 0 is null */
        const unsigned char *sym = p + symtab.off + off;
        uint32_t nm = rd32(sym);
        if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY))
            continue;
        if (nm >= strtab.size) {
            rc = KG_ERR(KG_EPARSE, "%s: symbol name out of bounds", what);
            goto cleanup;
        }
        KG_TRY(parse_kernel(s, &e, have_info ? &info : NULL, (uint32_t)(off / 24),
                            (const char *)p + strtab.off + nm, arch, sm90_window));
    }
    note_arch(s, arch);
cleanup:
    return rc;
}

/* ---- fatbin ----------------------------------------------------------------------------- */

/* zstd-compressed cubins (nvcc --compress-mode=size|balance|speed) are decompressed with the
 * system's libzstd, loaded on demand so neither the build nor a runner needs it otherwise. */
typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_is_error_fn)(size_t);

static int zstd_inflate(unsigned char **out, const unsigned char *src, size_t n, size_t want)
{
    static void *lib;
    static zstd_decompress_fn dec;
    static zstd_is_error_fn is_err;
    *out = NULL;
    if (!lib && (lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL)) != NULL) {
        dec = (zstd_decompress_fn)dlsym(lib, "ZSTD_decompress");
        is_err = (zstd_is_error_fn)dlsym(lib, "ZSTD_isError");
    }
    if (!dec || !is_err || want == 0 || want > ((size_t)1 << 30))
        return 1; /* cannot: counted as a compressed entry left unread */
    unsigned char *buf = malloc(want);
    if (!buf)
        return KG_ERR(KG_ENOMEM, "out of memory decompressing a cubin");
    size_t got = dec(buf, want, src, n);
    if (is_err(got) || got != want) {
        free(buf);
        return 1;
    }
    *out = buf;
    return 0;
}

int kg_cubin_add_fatbin(kg_cubin_set *s, const unsigned char *p, size_t len, const char *what)
{
    int rc = 0;
    size_t pos = 0;
    char label[512];
    while (pos + 16 <= len) {
        if (rd32(p + pos) != FATBIN_MAGIC) {
            pos += 8; /* containers are 8-byte aligned within the section */
            continue;
        }
        uint16_t hsize = rd16(p + pos + 6);
        uint64_t fsize = rd64(p + pos + 8);
        if (rd16(p + pos + 4) != 1 || hsize < 16 || fsize > len - pos - hsize)
            return KG_ERR(KG_EPARSE, "%s: fatbin container at +%zu: bad header", what, pos);
        s->containers++;
        size_t e = pos + hsize, end = pos + hsize + (size_t)fsize;
        while (e + 64 <= end) {
            uint16_t kind = rd16(p + e);
            uint32_t ehs = rd32(p + e + 4);
            uint64_t psize = rd64(p + e + 8);
            uint32_t arch = rd32(p + e + 28);
            uint64_t flags = rd64(p + e + 40);
            if (ehs < 64 || ehs > end - e || psize > end - e - ehs)
                return KG_ERR(KG_EPARSE, "%s: fatbin entry at +%zu overruns its container", what,
                              e);
            const unsigned char *payload = p + e + ehs;
            snprintf(label, sizeof label, "%s: cubin sm_%u at +%zu", what, arch, e);
            if (kind == FATBIN_KIND_ELF && (flags & FATBIN_FLAG_COMPRESS_ZSTD)) {
                size_t csize = rd32(p + e + 16), usize = (size_t)rd64(p + e + 56);
                unsigned char *elf = NULL;
                int z = csize <= psize ? zstd_inflate(&elf, payload, csize, usize) : 1;
                if (z < 0)
                    return z;
                if (z > 0)
                    s->compressed_elf++;
                else
                    rc = kg_cubin_add_elf(s, elf, usize, (int)arch, label);
                free(elf);
                if (rc < 0)
                    goto cleanup;
            } else if (kind == FATBIN_KIND_ELF) {
                if ((flags & FATBIN_FLAG_COMPRESS_LZ4) || psize < 4 ||
                    memcmp(payload, "\177ELF", 4) != 0)
                    s->compressed_elf++; /* old LZ4 format: not read */
                else
                    KG_TRY(kg_cubin_add_elf(s, payload, (size_t)psize, (int)arch, label));
            }
            e += ehs + (size_t)psize;
        }
        pos = (end + 7) & ~(size_t)7;
    }
cleanup:
    return rc;
}

int kg_cubin_load_exe(kg_cubin_set **out, const char *path)
{
    int rc = 0;
    char *buf = NULL;
    size_t len = 0;
    kg_cubin_set *s = NULL;
    elf_view e;
    elf_sec sec;
    bool found = false;
    *out = NULL;
    KG_TRY(kg_cubin_set_new(&s));
    KG_TRY(kg_file_read(&buf, &len, path));
    KG_TRY(elf_open(&e, (const unsigned char *)buf, len, path));
    for (unsigned i = 1; i < e.shnum; i++) {
        KG_TRY(elf_sec_get(&e, i, &sec));
        if (strcmp(sec.name, ".nv_fatbin") == 0 && sec.type != SHT_NOBITS) {
            found = true;
            KG_TRY(kg_cubin_add_fatbin(s, (const unsigned char *)buf + sec.off, (size_t)sec.size,
                                       path));
        }
    }
    if (!found) {
        rc = KG_ERR(KG_ENOTFOUND, "%s: no .nv_fatbin section (no device code linked in)", path);
        goto cleanup;
    }
    *out = s;
    s = NULL;
cleanup:
    kg_cubin_set_free(s);
    free(buf);
    return rc;
}

/* ---- lookup ----------------------------------------------------------------------------- */

const kg_cubin_kernel *kg_cubin_find_symbol(const kg_cubin_set *s, const char *symbol, int arch)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->k[i].arch == arch && strcmp(s->k[i].symbol, symbol) == 0)
            return &s->k[i];
    return NULL;
}

static bool cb_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

/* The spelling both sides of a match are compared in: the demangler writes
 * "(anonymous namespace)::k", "k<4u>" and "k<float, 4>" where KG_KERNEL records "k", "k<4>" and
 * "k<float,4>". Drops spaces, every "(anonymous namespace)::", a leading "::" or '&', and the
 * u/l suffixes of integer literals. False when the name does not fit (compared as is). */
static bool cb_name_norm(char *out, size_t n, const char *s)
{
    static const char anon[] = "(anonymous namespace)::";
    size_t o = 0;
    while (*s == ' ' || *s == '&')
        s++;
    if (s[0] == ':' && s[1] == ':')
        s += 2;
    while (*s) {
        if (strncmp(s, anon, sizeof anon - 1) == 0) {
            s += sizeof anon - 1;
            continue;
        }
        if (*s == ' ') {
            s++;
            continue;
        }
        if (*s >= '0' && *s <= '9' && (o == 0 || !cb_ident(out[o - 1]))) {
            const char *e = s;
            while (*e >= '0' && *e <= '9')
                e++;
            const char *f = e;
            while (*f == 'u' || *f == 'U' || *f == 'l' || *f == 'L')
                f++;
            if (o + (size_t)(e - s) + 1 > n)
                return false;
            memcpy(out + o, s, (size_t)(e - s));
            o += (size_t)(e - s);
            s = cb_ident(*f) ? e : f; /* "4u>" loses its suffix, "0x1f" stays */
            continue;
        }
        if (o + 2 > n)
            return false;
        out[o++] = *s++;
    }
    out[o] = '\0';
    return true;
}

int kg_kernel_name_match(const char *binary, const char *name)
{
    char b[2048], k[2048];
    if (!cb_name_norm(b, sizeof b, binary) || !cb_name_norm(k, sizeof k, name))
        return strcmp(binary, name) == 0 ? 2 : 0;
    if (strcmp(b, k) == 0)
        return 2;
    size_t bl = strlen(b), kl = strlen(k);
    if (kl == 0 || bl < kl + 2 || strcmp(b + bl - kl, k) != 0 ||
        memcmp(b + bl - kl - 2, "::", 2) != 0)
        return 0;
    /* The "::" must qualify the whole name, not sit inside a template argument. */
    int depth = 0;
    for (size_t i = 0; i < bl - kl - 2; i++)
        depth += (b[i] == '<' || b[i] == '(') - (b[i] == '>' || b[i] == ')');
    return depth == 0 ? 1 : 0;
}

bool kg_kernel_name_eq(const char *a, const char *b) { return kg_kernel_name_match(a, b) == 2; }

int kg_cubin_find_name(const kg_cubin_kernel **out, const kg_cubin_set *s, const char *name,
                       int arch)
{
    *out = NULL;
    /* The same name first; only without one, a name that leaves out its namespaces. */
    for (int want = 2; want >= 1 && !*out; want--)
        for (size_t i = 0; i < s->n; i++) {
            if (s->k[i].arch != arch || kg_kernel_name_match(s->k[i].name, name) != want)
                continue;
            if (*out)
                return KG_ERR(KG_EINVAL,
                              "kernel '%s' is ambiguous on sm_%d: %s and %s "
                              "(qualify it in KG_KERNEL)",
                              name, arch, (*out)->symbol, s->k[i].symbol);
            *out = &s->k[i];
        }
    return *out ? 0 : KG_ERR(KG_ENOTFOUND, "kernel '%s': no sm_%d cubin holds it", name, arch);
}
