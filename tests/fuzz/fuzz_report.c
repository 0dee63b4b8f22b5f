/* libFuzzer: the strict JSON loader, the signature check and the advance parser of a report,
 * and every candidate it accepts must be a mark the marks loader accepts. */
#include <stdlib.h>
#include <string.h>
#include "marks/advance.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1);
    cJSON *root = NULL;
    kg_advance_input *in = NULL;
    kg_marks *m = NULL;
    kg_mark_moves mv = { 0 };
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (kg_json_parse_strict(&root, text, size, "fuzz") == 0) {
        (void)kg_report_json_verify(root, "fuzz-key-0123456789abcdef", "fuzz");
        if (kg_advance_parse(&in, root, "fuzz", "fuzz") == 0 && kg_marks_new(&m) == 0) {
            for (size_t i = 0; i < in->n_cands; i++)
                if (kg_mark_validate(&in->cands[i].cand, "fuzz") != 0)
                    abort();
            (void)kg_advance_apply(m, in, &mv);
        }
    }
    kg_mark_moves_free(&mv);
    kg_marks_free(m);
    kg_advance_input_free(in);
    cJSON_Delete(root);
    free(text);
    return 0;
}
