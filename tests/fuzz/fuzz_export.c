/* libFuzzer: the exporters (JUnit, Markdown, HTML) over any report the loader accepts; each
 * output goes to a file in $KG_FUZZ_OUT (tmpfs in CI) and must not hang or crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static char junit[512], md[512], html[512];
    char *text = malloc(size + 1);
    cJSON *root = NULL;
    if (!text)
        return 0;
    if (!junit[0]) {
        const char *d = getenv("KG_FUZZ_OUT") ? getenv("KG_FUZZ_OUT") : "/tmp";
        snprintf(junit, sizeof junit, "%s/f.xml", d);
        snprintf(md, sizeof md, "%s/f.md", d);
        snprintf(html, sizeof html, "%s/f.html", d);
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (kg_json_parse_strict(&root, text, size, "fuzz") == 0) {
        (void)kg_export_junit(root, junit);
        (void)kg_export_markdown(root, md);
        (void)kg_export_html(root, html);
    }
    cJSON_Delete(root);
    free(text);
    return 0;
}
