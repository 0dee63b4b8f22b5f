/* Error state: one thread-local message readable through kg_error_last(). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

static _Thread_local char kg_errbuf[2048];

const char *kg_error_last(void) { return kg_errbuf; }

const char *kg_error_name(int code)
{
    switch (code) {
    case KG_OK: return "KG_OK";
    case KG_EINVAL: return "KG_EINVAL";
    case KG_ENOMEM: return "KG_ENOMEM";
    case KG_EIO: return "KG_EIO";
    case KG_EPARSE: return "KG_EPARSE";
    case KG_ECUDA: return "KG_ECUDA";
    case KG_ENODEV: return "KG_ENODEV";
    case KG_ECUBLAS: return "KG_ECUBLAS";
    case KG_ECUPTI: return "KG_ECUPTI";
    case KG_EGIT: return "KG_EGIT";
    case KG_EHTTP: return "KG_EHTTP";
    case KG_EEXISTS: return "KG_EEXISTS";
    case KG_ENOTFOUND: return "KG_ENOTFOUND";
    case KG_ECONFLICT: return "KG_ECONFLICT";
    case KG_EREFUSED: return "KG_EREFUSED";
    case KG_EINTERNAL: return "KG_EINTERNAL";
    default: return "KG_E?";
    }
}

static bool err_debug(void)
{
    const char *v = getenv("KGATE_DEBUG");
    return v && strcmp(v, "1") == 0;
}

int kg_error_set(int code, const char *file, int line, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* file:line is for whoever debugs kgate (KGATE_DEBUG=1, `kgate --verbose CMD`), and then
     * only on runtime failures; a user reads the message plainly. */
    if (err_debug() && (code == KG_ECUDA || code == KG_ECUBLAS || code == KG_ECUPTI ||
                        code == KG_EGIT || code == KG_EHTTP || code == KG_EINTERNAL)) {
        const char *base = strrchr(file, '/');
        snprintf(kg_errbuf, sizeof kg_errbuf, "%s [%s:%d]", msg, base ? base + 1 : file, line);
    } else {
        snprintf(kg_errbuf, sizeof kg_errbuf, "%s", msg);
    }
    /* At the boundary: the report key never reaches a message in any encoding, and text an
     * input file put into a message never reaches a terminal as an escape sequence. */
    kg_redact_all(kg_errbuf, kg_report_key());
    kg_str_printable(msg, sizeof msg, kg_errbuf);
    snprintf(kg_errbuf, sizeof kg_errbuf, "%s", msg);
    return code;
}

/* The one mapping of KG_E* codes to exit codes (README.md, "Exit codes"). */
int kg_exit_code_for_error(int rc)
{
    switch (rc) {
    case KG_EINVAL:
    case KG_EPARSE:
    case KG_EEXISTS:
    case KG_ENOTFOUND:
    case KG_EREFUSED: return KG_EXIT_USAGE;
    case KG_ENODEV: return KG_EXIT_NO_GPU;
    default: return KG_EXIT_RUNTIME;
    }
}

static _Thread_local char kg_usage_hint[256];

void kg_cli_usage_hint(const char *line)
{
    snprintf(kg_usage_hint, sizeof kg_usage_hint, "%s", line ? line : "");
}

int kg_cli_fail(int rc)
{
    fprintf(stderr, "kgate: %s\n", kg_error_last());
    if (kg_usage_hint[0])
        fprintf(stderr, "%s\n", kg_usage_hint);
    kg_usage_hint[0] = '\0';
    return kg_exit_code_for_error(rc);
}
