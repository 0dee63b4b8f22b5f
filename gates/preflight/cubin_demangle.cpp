// Demangling for the static preflight: abi::__cxa_demangle, then cut the return type (function
// templates carry one) and the parameter list, so the result matches kg_kernel_ref.name.
#include <cxxabi.h>
#include <cstdlib>
#include <cstring>
#include "preflight/cubin.h"
#include "core/kg_core.h"

// End of the name part: the '(' that opens the last top-level parameter list.
static size_t params_start(const char *s, size_t n)
{
    int depth = 0;
    for (size_t i = n; i-- > 0;) {
        char c = s[i];
        if (c == ')' || c == '>' || c == ']')
            depth++;
        else if (c == '(' || c == '<' || c == '[') {
            depth--;
            if (depth == 0 && c == '(')
                return i;
        }
    }
    return n;
}

extern "C" int kg_demangle_name(char **out, const char *mangled)
{
    int status = 0;
    *out = nullptr;
    char *full = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    const char *src = (status == 0 && full) ? full : mangled;
    size_t n = std::strlen(src);
    size_t end = (status == 0 && full) ? params_start(src, n) : n;
    // The name starts after the last top-level space before `end` (a return type's end).
    size_t begin = 0;
    int depth = 0;
    for (size_t i = 0; i < end; i++) {
        char c = src[i];
        if (c == '<' || c == '(' || c == '[')
            depth++;
        else if (c == '>' || c == ')' || c == ']')
            depth--;
        else if (c == ' ' && depth == 0)
            begin = i + 1;
    }
    char *r = static_cast<char *>(std::malloc(end - begin + 1));
    if (!r) {
        std::free(full);
        return KG_ERR(KG_ENOMEM, "out of memory demangling %s", mangled);
    }
    std::memcpy(r, src + begin, end - begin);
    r[end - begin] = '\0';
    std::free(full);
    *out = r;
    return 0;
}
