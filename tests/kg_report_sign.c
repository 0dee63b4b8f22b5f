/* Test helper: sign a report file in place with KGATE_REPORT_KEY, as `kgate run --production`
 * signs its report (kg_report_json_sign), so CPU tests can replay the production path with
 * `marks advance --from-report`. Usage: kg_report_sign REPORT.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

int main(int argc, char **argv)
{
    cJSON *root = NULL;
    char *text = NULL;
    int rc = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: kg_report_sign REPORT.json (key from " KG_REPORT_KEY_ENV ")\n");
        return 2;
    }
    KG_TRY(kg_json_load(&root, argv[1]));
    KG_TRY(kg_report_json_sign(root, kg_report_key()));
    if (!(text = cJSON_Print(root))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    KG_TRY(kg_file_write_atomic(argv[1], text, strlen(text)));
cleanup:
    cJSON_free(text);
    cJSON_Delete(root);
    return rc < 0 ? kg_cli_fail(rc) : 0;
}
