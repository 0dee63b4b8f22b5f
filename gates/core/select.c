/* Case selection: the registered cases whose ids match --filter (POSIX extended regex). */
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

int kg_select(kg_selection *out, const kg_registry *reg, const char *filter)
{
    int rc = 0;
    regex_t re;
    bool have_re = false;
    size_t n = kg_registry_count(reg);
    memset(out, 0, sizeof *out);
    if (filter) {
        int e = regcomp(&re, filter, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char eb[128];
            regerror(e, &re, eb, sizeof eb);
            return KG_ERR(KG_EINVAL, "--filter '%s': invalid regular expression: %s", filter, eb);
        }
        have_re = true;
    }
    out->idx = calloc(n ? n : 1, sizeof *out->idx);
    if (!out->idx) {
        rc = KG_ERR(KG_ENOMEM, "out of memory selecting cases");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        if (!have_re || regexec(&re, kg_registry_get(reg, i)->id, 0, NULL, 0) == 0)
            out->idx[out->n++] = i;
    if (out->n == 0) {
        rc = filter ? KG_ERR(KG_ENOTFOUND, "--filter '%s' matches no case (see `kgate list`)",
                             filter)
                    : KG_ERR(KG_ENOTFOUND, "no case is registered");
        goto cleanup;
    }
cleanup:
    if (have_re)
        regfree(&re);
    if (rc < 0)
        kg_selection_free(out);
    return rc;
}

void kg_selection_free(kg_selection *s)
{
    free(s->idx);
    s->idx = NULL;
    s->n = 0;
}



int kg_selection_exclude(kg_selection *s, const kg_registry *reg, const char *exclude)
{
    regex_t re;
    size_t kept = 0;
    if (!exclude)
        return 0;
    int e = regcomp(&re, exclude, REG_EXTENDED | REG_NOSUB);
    if (e != 0) {
        char eb[128];
        regerror(e, &re, eb, sizeof eb);
        return KG_ERR(KG_EINVAL, "--exclude '%s': invalid regular expression: %s", exclude, eb);
    }
    for (size_t i = 0; i < s->n; i++)
        if (regexec(&re, kg_registry_get(reg, s->idx[i])->id, 0, NULL, 0) != 0)
            s->idx[kept++] = s->idx[i];
    regfree(&re);
    s->n = kept;
    if (kept == 0)
        return KG_ERR(KG_ENOTFOUND, "--exclude '%s' leaves no case", exclude);
    return 0;
}
