/* JUnit XML from a kgate report: one <testsuite> per gate, one <testcase> per case x gate
 * (classname = gate). FAIL -> <failure>, ERROR -> <error>, SKIP -> <skipped/>, each carrying the
 * message and the figures; valid against the Jenkins xUnit junit-10.xsd (tests/data). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report/export.h"

/* The figures as "key = value" lines, so a CI's test page shows the numbers behind a verdict. */
static void figures_text(kg_sbuf *b, const cJSON *figures)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, figures)
    {
        char *v = cJSON_IsString(f) ? NULL : cJSON_PrintUnformatted(f);
        kg_sbuf_xml(b, f->string);
        kg_sbuf_puts(b, " = ");
        kg_sbuf_xml(b, cJSON_IsString(f) ? f->valuestring : (v ? v : "?"));
        kg_sbuf_puts(b, "&#10;");
        cJSON_free(v);
    }
}

static void property(kg_sbuf *b, const char *name, const char *value)
{
    if (!value)
        return;
    kg_sbuf_puts(b, "      <property name=\"");
    kg_sbuf_xml(b, name);
    kg_sbuf_puts(b, "\" value=\"");
    kg_sbuf_xml(b, value);
    kg_sbuf_puts(b, "\"/>\n");
}

static void properties(kg_sbuf *b, const kg_export_view *v, const cJSON *report)
{
    char seed[32];
    kg_sbuf_puts(b, "    <properties>\n");
    property(b, "kgate.mode", v->diagnostic ? "diagnostic (NON-CERTIFYING)" : "production");
    property(b, "kgate.command", v->command);
    property(b, "kgate.run_id", v->run_id);
    if (!isnan(v->seed)) {
        snprintf(seed, sizeof seed, "%.0f", v->seed);
        property(b, "kgate.seed", seed);
    }
    property(b, "kgate.device", v->device_name);
    property(b, "kgate.device_class", v->device_class);
    const cJSON *p, *prov = cJSON_GetObjectItemCaseSensitive(report, KG_RK_PROVENANCE);
    cJSON_ArrayForEach(p, prov)
    {
        if (cJSON_IsString(p)) {
            char name[96];
            snprintf(name, sizeof name, KG_RK_PROVENANCE ".%s", p->string);
            property(b, name, p->valuestring);
        }
    }
    kg_sbuf_puts(b, "    </properties>\n");
}

static void testcase(kg_sbuf *b, const kg_export_row *r, bool diagnostic)
{
    static const char *tags[] = { NULL, NULL, "failure", "skipped", "error" };
    const char *tag = tags[r->verdict];
    kg_sbuf_puts(b, "    <testcase name=\"");
    kg_sbuf_xml(b, r->case_id);
    kg_sbuf_puts(b, "\" classname=\"");
    kg_sbuf_xml(b, r->gate);
    kg_sbuf_printf(b, "\" time=\"%.6f\">\n", r->seconds);
    if (tag) {
        kg_sbuf_printf(b, "      <%s type=\"", tag);
        kg_sbuf_xml(b, r->decision && r->verdict == KG_VERDICT_FAIL ? r->decision
                                                                  : kg_verdict_name(r->verdict));
        kg_sbuf_puts(b, "\" message=\"");
        if (diagnostic)
            kg_sbuf_puts(b, "[DIAGNOSTIC] ");
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "\">");
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "&#10;");
        figures_text(b, r->figures);
        kg_sbuf_printf(b, "</%s>\n", tag);
    }
    /* Passing results keep their figures too (a WARN says what to look at). */
    if (!tag && (r->verdict == KG_VERDICT_WARN || cJSON_GetArraySize(r->figures) > 0)) {
        kg_sbuf_printf(b, "      <system-out>%s: ", kg_verdict_name(r->verdict));
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "&#10;");
        figures_text(b, r->figures);
        kg_sbuf_puts(b, "</system-out>\n");
    }
    kg_sbuf_puts(b, "    </testcase>\n");
}

int kg_export_junit(const cJSON *report, const char *path)
{
    int rc = 0;
    kg_export_view v;
    kg_sbuf b = KG_SBUF_INIT;
    const char **gates = NULL;
    size_t ngates = 0;
    char host[256] = "localhost";
    KG_TRY(kg_export_view_build(&v, report));
    gates = calloc(v.n ? v.n : 1, sizeof *gates);
    if (!gates) {
        rc = KG_ERR(KG_ENOMEM, "out of memory writing %s", path);
        goto cleanup;
    }
    /* Gates in the order the report first mentions them. */
    for (size_t o = 0; o < v.n; o++)
        for (size_t i = 0; i < v.n; i++) {
            if (v.rows[i].order != o)
                continue;
            size_t k = 0;
            while (k < ngates && strcmp(gates[k], v.rows[i].gate) != 0)
                k++;
            if (k == ngates)
                gates[ngates++] = v.rows[i].gate;
        }
    gethostname(host, sizeof host - 1);
    double total = 0;
    for (size_t i = 0; i < v.n; i++)
        total += v.rows[i].seconds;
    kg_sbuf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    kg_sbuf_printf(&b, "<testsuites name=\"kgate%s\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
                       "time=\"%.6f\">\n",
                   v.diagnostic ? " (DIAGNOSTIC, non-certifying)" : "", v.n,
                   v.counts[KG_VERDICT_FAIL], v.counts[KG_VERDICT_ERROR], total);
    for (size_t g = 0; g < ngates; g++) {
        int n = 0, nf = 0, ne = 0, ns = 0;
        double t = 0;
        for (size_t i = 0; i < v.n; i++)
            if (strcmp(v.rows[i].gate, gates[g]) == 0) {
                n++;
                nf += v.rows[i].verdict == KG_VERDICT_FAIL;
                ne += v.rows[i].verdict == KG_VERDICT_ERROR;
                ns += v.rows[i].verdict == KG_VERDICT_SKIP;
                t += v.rows[i].seconds;
            }
        kg_sbuf_puts(&b, "  <testsuite name=\"");
        kg_sbuf_xml(&b, gates[g]);
        kg_sbuf_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
                           "time=\"%.6f\" timestamp=\"", n, nf, ne, ns, t);
        kg_sbuf_xml(&b, v.started_at ? v.started_at : "");
        kg_sbuf_puts(&b, "\" hostname=\"");
        kg_sbuf_xml(&b, host);
        kg_sbuf_puts(&b, "\">\n");
        properties(&b, &v, report);
        for (size_t i = 0; i < v.n; i++)
            if (strcmp(v.rows[i].gate, gates[g]) == 0)
                testcase(&b, &v.rows[i], v.diagnostic);
        kg_sbuf_puts(&b, "  </testsuite>\n");
    }
    kg_sbuf_puts(&b, "</testsuites>\n");
    KG_TRY(kg_sbuf_write(&b, path));
cleanup:
    free(gates);
    kg_sbuf_free(&b);
    kg_export_view_free(&v);
    return rc;
}
