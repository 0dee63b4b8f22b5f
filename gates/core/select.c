/* Case selection: the registered cases whose ids match --filter (POSIX extended regex). */
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

/* The next comma-separated item of `list` at *p: [*b, *e), advancing *p; false at the end. */
static bool sel_item(const char **p, const char **b, const char **e)
{
    while (**p == ',')
        (*p)++;
    if (!**p)
        return false;
    *b = *p;
    while (**p && **p != ',')
        (*p)++;
    *e = *p;
    return true;
}

bool kg_case_has_tag(const kg_case_desc *d, const char *tag)
{
    const char *p = d->tags ? d->tags : "", *b, *e;
    size_t n = tag ? strlen(tag) : 0;
    while (n && sel_item(&p, &b, &e))
        if ((size_t)(e - b) == n && memcmp(b, tag, n) == 0)
            return true;
    return false;
}

double kg_case_timeout_s(const kg_case_desc *d, double cli_timeout_s)
{
    return cli_timeout_s > 0 ? cli_timeout_s : d->timeout_s > 0 ? d->timeout_s : 0;
}

/* --tag a,b: the case has one of them. */
static bool sel_tags(const kg_case_desc *d, const char *tags)
{
    char one[128];
    const char *p = tags, *b, *e;
    while (sel_item(&p, &b, &e)) {
        snprintf(one, sizeof one, "%.*s", (int)(e - b), b);
        if (kg_case_has_tag(d, one))
            return true;
    }
    return false;
}

/* --filter: the id, or one of the tags, matches. */
static bool sel_filter(const kg_case_desc *d, const regex_t *re)
{
    char one[128];
    const char *p = d->tags ? d->tags : "", *b, *e;
    if (regexec(re, d->id, 0, NULL, 0) == 0)
        return true;
    while (sel_item(&p, &b, &e)) {
        snprintf(one, sizeof one, "%.*s", (int)(e - b), b);
        if (regexec(re, one, 0, NULL, 0) == 0)
            return true;
    }
    return false;
}

int kg_select(kg_selection *out, const kg_registry *reg, const char *filter, const char *tags)
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
    for (size_t i = 0; i < n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, i);
        if ((!have_re || sel_filter(d, &re)) && (!tags || sel_tags(d, tags)))
            out->idx[out->n++] = i;
    }
    if (out->n == 0) {
        rc = tags
                 ? KG_ERR(KG_ENOTFOUND, "--tag '%s'%s%s%s matches no case (see `kgate list`)", tags,
                          filter ? " with --filter '" : "", filter ? filter : "", filter ? "'" : "")
             : filter
                 ? KG_ERR(KG_ENOTFOUND, "--filter '%s' matches no case (see `kgate list`)", filter)
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
