/* libFuzzer: the marks loader (kg_marks_parse), and saving what it accepted must load back. */
#include <stdlib.h>
#include <string.h>
#include "marks/marks.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1);
    kg_marks *m = NULL, *back = NULL;
    char *out = NULL;
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (kg_marks_parse(&m, text, "fuzz") == 0) {
        if (kg_marks_serialize(&out, m) != 0 || kg_marks_parse(&back, out, "back") != 0 ||
            kg_marks_count(back) != kg_marks_count(m))
            abort(); /* kgate must load back what it writes */
    }
    kg_marks_free(back);
    kg_marks_free(m);
    free(out);
    free(text);
    return 0;
}
