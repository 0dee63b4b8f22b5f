#!/usr/bin/env bash
# The public header stands alone: include/kgate/kgate.h (the umbrella) and each of its parts
# (kgate/{error,case,registry,sweep,fill,cli}.h) compile by themselves, and with its macros
# and inline helpers in use, as C11 and as C++17 with -Wall -Wextra -Werror -pedantic, using
# kgate's own compilers (and clang/clang++ too where installed); and it includes nothing
# internal. So does the optional kgate.hpp (the returning check macros), where a function
# declares variables after its checks, which KG_CUDA_CHECK's goto cannot jump past in C++.
#   test_header.sh CUDA_INCLUDE_DIRS_COMMA_SEPARATED      (KG_SOURCE_DIR, KG_BUILD_DIR from CTest)
. "$(dirname "$0")/lib.sh"
: "${KG_SOURCE_DIR:?}" "${KG_BUILD_DIR:?}"
H="$SRC/include/kgate/kgate.h"
PARTS=(error case registry sweep fill cli)
CC=$(cmake_cache CMAKE_C_COMPILER) CXX=$(cmake_cache CMAKE_CXX_COMPILER)
inc=(-I"$SRC/include")
IFS=, read -r -a cuda_dirs <<<"${1:-}"
for d in "${cuda_dirs[@]}"; do [ -n "$d" ] && inc+=(-isystem "$d"); done

# Only the C library, the CUDA runtime API and other public kgate headers may be included.
for h in "$H" "$SRC/include/kgate/kgate.hpp" "${PARTS[@]/#/$SRC/include/kgate/}"; do
    case $h in *.hpp) ;; *kgate.h) ;; *) h=$h.h ;; esac
    if grep -nE '^[[:space:]]*#[[:space:]]*include' "$h" \
        | grep -vE '<(stddef|stdint|stdbool|stdarg)\.h>|<cuda_runtime_api\.h>|"kgate/[a-z_]+\.h"'; then
        bad "$(basename "$h") includes something beyond the C library, the CUDA runtime API and kgate/"
    else ok; fi
done

printf '#include "kgate/kgate.h"\n' >"$T/alone.c"
printf '#include "kgate/kgate.h"\n' >"$T/alone.cpp"
# Each part alone (the umbrella is not the only way in).
for p in "${PARTS[@]}"; do
    printf '#include "kgate/%s.h"\n' "$p" >"$T/part_$p.c"
    cp "$T/part_$p.c" "$T/part_$p.cpp"
done
# The planted defect: a part without its own includes does not stand alone, and the check says so.
mkdir -p "$T/bare/kgate"
grep -v '#include "kgate/' "$SRC/include/kgate/registry.h" >"$T/bare/kgate/registry_bare.h"
printf '#include "kgate/registry_bare.h"\n' >"$T/bare.c"
# The macros a case author uses, expanded under the same flags (kernels live in .cu files, so
# KG_KERNEL is left to the example's build).
cat >"$T/use.c" <<'EOF'
#include "kgate/kgate.h"
static const kg_parity_policy tol = KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.9999999);
static const kg_parity_policy bits = KG_PARITY_BITWISE_INIT;
static int step(int x) { return x < 0 ? kg_error_set(KG_EINVAL, __FILE__, __LINE__, "bad %d", x) : 0; }
int use_macros(void *dev, int x);
int use_macros(void *dev, int x)
{
    int rc = 0;
    KG_TRY(step(x));
    KG_CUDA_CHECK(cudaMemsetAsync(dev, 0x7f, 16, (cudaStream_t)0));
    KG_LAUNCH_CHECK();
    rc = tol.kind == KG_PARITY_TOLERANCE && bits.kind == KG_PARITY_BITWISE ? KG_OK : KG_EINTERNAL;
cleanup:
    return rc;
}
int use_output(kg_case_io *io, void *dev);
int use_output(kg_case_io *io, void *dev)
{
    io->outputs[0] = kg_output_make("out", dev, 16, KG_DTYPE_F32, 4, &tol);
    io->outputs[1] = kg_output_ref_dtype(kg_output_make("idx", dev, 4, KG_DTYPE_I32, 0, &bits),
                                         KG_DTYPE_I32);
    io->n_outputs = 2;
    return io->outputs[1].has_ref_dtype ? 0 : KG_EINTERNAL;
}
EOF
cp "$T/use.c" "$T/use.cpp"
# kgate.hpp: checks that return, with initializations after them (C++ and C alike).
cat >"$T/ret.c" <<'EOF'
#include "kgate/kgate.hpp"
static int step(int x) { return x < 0 ? kg_error_set(KG_EINVAL, __FILE__, __LINE__, "bad %d", x) : 0; }
int use_return(void *dev, int x);
int use_return(void *dev, int x)
{
    KG_TRY_RETURN(step(x));
    const size_t bytes = (size_t)x * 4;
    KG_CUDA_RETURN(cudaMemsetAsync(dev, 0x7f, bytes, (cudaStream_t)0));
    KG_LAUNCH_RETURN();
    const int done = 1;
    return done ? KG_OK : KG_EINTERNAL;
}
EOF
cp "$T/ret.c" "$T/ret.cpp"
# Why kgate.hpp exists: in C++ KG_CUDA_CHECK's goto may not cross an initialization.
cat >"$T/cross.cpp" <<'EOF'
#include "kgate/kgate.h"
int use_goto(void *dev);
int use_goto(void *dev)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaMemsetAsync(dev, 0, 4, (cudaStream_t)0));
    const size_t bytes = 16;
    KG_CUDA_CHECK(cudaMemsetAsync(dev, 0, bytes, (cudaStream_t)0));
cleanup:
    return rc;
}
EOF

WARN=(-Wall -Wextra -Werror -pedantic)
compile_with() { # compile_with CC CXX
    local cc=$1 cxx=$2
    for f in alone use ret "${PARTS[@]/#/part_}"; do
        check "$f as C11 ($cc)" 0 "" -- "$cc" -std=c11 "${WARN[@]}" -Wstrict-prototypes -Wshadow \
            "${inc[@]}" -fsyntax-only "$T/$f.c"
        check "$f as C++17 ($cxx)" 0 "" -- "$cxx" -std=c++17 "${WARN[@]}" -Wshadow "${inc[@]}" \
            -fsyntax-only "$T/$f.cpp"
    done
}
compile_with "$CC" "$CXX"
check "a part without its includes does not compile alone ($CC)" 1 "kg_case_desc" -- "$CC" -std=c11 \
    -I"$T/bare" "${inc[@]}" -fsyntax-only "$T/bare.c"
check "KG_CUDA_CHECK past an initialization is rejected in C++ ($CXX)" 1 "cross|bypass" -- "$CXX" -std=c++17 \
    "${inc[@]}" -fsyntax-only "$T/cross.cpp"
if command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1 \
    && [ "$(basename "$CC")" != clang ]; then
    compile_with clang clang++
fi
finish
