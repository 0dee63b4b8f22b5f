/* The preflight loaders link cubin.c for kg_kernel_name_eq; its demangler (C++) is never
 * reached from them. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "preflight/cubin.h"

int kg_demangle_name(char **out, const char *mangled)
{
    *out = strdup(mangled);
    return *out ? 0 : KG_ENOMEM;
}
