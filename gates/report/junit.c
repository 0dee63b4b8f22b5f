/* JUnit XML from a kgate report: one <testsuite> per gate, one <testcase> per case x gate
 * (classname = gate). FAIL and XPASS -> <failure>, ERROR -> <error> (a faulted case: type
 * "FAULT <class>", the worker's last lines in <system-err>), SKIP and XFAIL -> <skipped>, each
 * carrying the message and the figures; valid against the Jenkins xUnit junit-10.xsd
 * (tests/data). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report/export.h"

/* The figures as "key = value" lines, so a CI's test page shows the numbers behind a verdict.
 * A fault's scalars are "fault.class = signal" lines; its output tail goes to <system-err>. */
static void figures_text(kg_sbuf *b, const cJSON *figures, const char *prefix)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, figures) {
        if (!prefix && strcmp(f->string, KG_FIG_FAULT) == 0 && cJSON_IsObject(f)) {
            figures_text(b, f, KG_FIG_FAULT);
            continue;
        }
        if (prefix && strcmp(f->string, KG_FIG_FAULT_OUTPUT) == 0)
            continue;
        char *v = cJSON_IsString(f) ? NULL : cJSON_PrintUnformatted(f);
        if (prefix) {
            kg_sbuf_xml(b, prefix);
            kg_sbuf_puts(b, ".");
        }
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
    if (v->incomplete)
        property(b, "kgate." KG_RK_INCOMPLETE, "true (interrupted): the results so far");
    property(b, "kgate.run_id", v->run_id);
    if (!isnan(v->seed)) {
        snprintf(seed, sizeof seed, "%.0f", v->seed);
        property(b, "kgate.seed", seed);
    }
    property(b, "kgate.device", v->device_name);
    property(b, "kgate.device_class", v->device_class);
    const cJSON *p, *prov = cJSON_GetObjectItemCaseSensitive(report, KG_RK_PROVENANCE);
    cJSON_ArrayForEach(p, prov) {
        if (cJSON_IsString(p)) {
            char name[96];
            snprintf(name, sizeof name, KG_RK_PROVENANCE ".%s", p->string);
            property(b, name, p->valuestring);
        }
    }
    kg_sbuf_puts(b, "    </properties>\n");
}

/* The element a verdict is written as; NULL: a plain passing <testcase>.
 *
 * XPASS is a <failure>: the case passed the gate it declares it fails, which fails the run (the
 * stale xfail_gate is to be removed), so every viewer must count it with the failures.
 *
 * XFAIL is a <skipped> whose message starts "expected failure (reason): ...". It passes the
 * run, so it must not be a <failure>; but a plain passing <testcase> hides it: GitLab's test
 * report shows a passing case without its <system-out>, and the GitHub reporters
 * (dorny/test-reporter, mikepenz/action-junit-report) list passes without any text, so the
 * known-broken case would read as a green pass. <skipped> is what pytest's junitxml writes for
 * an xfail and what both read right: counted apart from passes and failures (GitLab's
 * "skipped" tab, the reporters' skipped count), never failing the pipeline, with the message
 * (GitLab shows the element's text, the reporters its message) saying it is an expected
 * failure. type="XFAIL" tells it from a SKIP (a case that did not run). */
static const char *junit_tag(kg_verdict v)
{
    switch (v) {
    case KG_VERDICT_FAIL:
    case KG_VERDICT_XPASS: return "failure";
    case KG_VERDICT_SKIP:
    case KG_VERDICT_XFAIL: return "skipped";
    case KG_VERDICT_ERROR: return "error";
    default: return NULL;
    }
}

/* A faulted case: the worker's last output lines, for the test page's stderr panel. */
static void fault_tail(kg_sbuf *b, const kg_export_row *r)
{
    const cJSON *line;
    if (!r->fault_class)
        return;
    kg_sbuf_puts(b, "      <system-err>FAULT ");
    kg_sbuf_xml(b, r->fault_class);
    kg_sbuf_puts(b, ": the worker's last output:&#10;");
    cJSON_ArrayForEach(line, r->fault_tail) {
        if (!cJSON_IsString(line))
            continue;
        kg_sbuf_xml(b, line->valuestring);
        kg_sbuf_puts(b, "&#10;");
    }
    kg_sbuf_puts(b, "</system-err>\n");
}

static void testcase(kg_sbuf *b, const kg_export_row *r, bool diagnostic)
{
    const char *tag = junit_tag(r->verdict);
    kg_sbuf_puts(b, "    <testcase name=\"");
    kg_sbuf_xml(b, r->case_id);
    kg_sbuf_puts(b, "\" classname=\"");
    kg_sbuf_xml(b, r->gate);
    kg_sbuf_printf(b, "\" time=\"%.6f\">\n", r->seconds);
    if (tag) {
        kg_sbuf_printf(b, "      <%s type=\"", tag);
        if (r->fault_class) {
            kg_sbuf_puts(b, "FAULT ");
            kg_sbuf_xml(b, r->fault_class);
        } else {
            kg_sbuf_xml(b, r->decision && r->verdict == KG_VERDICT_FAIL
                               ? r->decision
                               : kg_verdict_name(r->verdict));
        }
        kg_sbuf_puts(b, "\" message=\"");
        if (diagnostic)
            kg_sbuf_puts(b, "[DIAGNOSTIC] ");
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "\">");
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "&#10;");
        figures_text(b, r->figures, NULL);
        kg_sbuf_printf(b, "</%s>\n", tag);
    }
    /* Passing results keep their figures too (a WARN says what to look at). */
    if (!tag && (r->verdict == KG_VERDICT_WARN || cJSON_GetArraySize(r->figures) > 0)) {
        kg_sbuf_printf(b, "      <system-out>%s: ", kg_verdict_name(r->verdict));
        kg_sbuf_xml(b, r->message);
        kg_sbuf_puts(b, "&#10;");
        figures_text(b, r->figures, NULL);
        kg_sbuf_puts(b, "</system-out>\n");
    }
    fault_tail(b, r);
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
    kg_sbuf_printf(&b,
                   "<testsuites name=\"kgate%s%s\" tests=\"%zu\" failures=\"%d\" "
                   "errors=\"%d\" time=\"%.6f\">\n",
                   v.diagnostic ? " (DIAGNOSTIC, non-certifying)" : "",
                   v.incomplete ? " (incomplete: interrupted)" : "", v.n,
                   v.counts[KG_VERDICT_FAIL] + v.counts[KG_VERDICT_XPASS],
                   v.counts[KG_VERDICT_ERROR], total);
    for (size_t g = 0; g < ngates; g++) {
        int n = 0, nf = 0, ne = 0, ns = 0;
        double t = 0;
        for (size_t i = 0; i < v.n; i++)
            if (strcmp(v.rows[i].gate, gates[g]) == 0) {
                const char *tag = junit_tag(v.rows[i].verdict);
                n++;
                nf += tag && strcmp(tag, "failure") == 0;
                ne += tag && strcmp(tag, "error") == 0;
                ns += tag && strcmp(tag, "skipped") == 0;
                t += v.rows[i].seconds;
            }
        kg_sbuf_puts(&b, "  <testsuite name=\"");
        kg_sbuf_xml(&b, gates[g]);
        kg_sbuf_printf(&b,
                       "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
                       "time=\"%.6f\" timestamp=\"",
                       n, nf, ne, ns, t);
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
