/* libFuzzer: the resource baseline and spill allowlist loaders (first byte picks which). */
#include <stdlib.h>
#include <string.h>
#include "preflight/preflight.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 1) {
        kg_res_baseline b;
        if (kg_res_baseline_parse(&b, text, "fuzz") == 0)
            kg_res_baseline_free(&b);
    } else {
        kg_spill_allowlist a;
        if (kg_spill_allowlist_parse(&a, text, "fuzz") == 0)
            kg_spill_allowlist_free(&a);
    }
    free(text);
    return 0;
}
