/* Signed but edited (issue #28, item 6): a signed report whose run_id gains a \u0000 escape
 * (cJSON cuts the string there, so the canonical form is unchanged) or whose null becomes
 * 1e999 (read as inf, printed as null) must be refused, by the strict loader or by the
 * signature check; the unedited report is accepted, and a non-finite number is never signed.
 * A key that is no secret (16 spaces, one letter repeated: item 8) signs and verifies nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "kg_test.h"

#define KEY "0123456789abcdef0123456789abcdef-test-key"

/* Load `text` as the strict loader does and check its signature: 0 when accepted. */
static int accept_text(const char *text)
{
    cJSON *r = NULL;
    int rc = kg_json_parse_strict(&r, text, strlen(text), "forged.json");
    if (rc == 0)
        rc = kg_report_json_verify(r, KEY, "forged.json");
    cJSON_Delete(r);
    return rc;
}

/* text with the first `from` replaced by `to` (the caller frees). */
static char *edit(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    if (!p)
        return NULL;
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
    return s;
}

int main(void)
{
    cJSON *r = cJSON_Parse(
        "{\"schema_version\": 1, \"run_id\": \"run-7\", \"mode\": \"production\","
        " \"figure\": null, \"results\": []}");
    CHECK(r && kg_report_json_sign(r, KEY) == 0);
    char *text = cJSON_Print(r);
    CHECK_MSG(accept_text(text) == 0, "the unedited report is refused: %s", kg_error_last());
    char *nul = edit(text, "\"run-7\"", "\"run-7\\u0000-replayed\"");
    CHECK(nul && accept_text(nul) < 0);
    CHECK_MSG(strstr(kg_error_last(), "NUL"), "the NUL escape: '%s'", kg_error_last());
    char *inf = edit(text, "null", "1e999");
    CHECK(inf && accept_text(inf) < 0);
    CHECK_MSG(strstr(kg_error_last(), "not finite"), "1e999: '%s'", kg_error_last());
    char *esc = edit(text, "\"run-7\"",
                     "\"run-7\\\\u0000\""); /* an escaped backslash: plain text */
    cJSON *e = NULL;
    CHECK_MSG(esc && kg_json_parse_strict(&e, esc, strlen(esc), "esc.json") == 0,
              "a literal backslash-u0000 refused: %s", kg_error_last());
    cJSON_Delete(e);
    cJSON *n = cJSON_CreateObject();
    cJSON_AddNumberToObject(n, "x", INFINITY);
    CHECK_MSG(kg_report_json_sign(n, KEY) < 0, "a non-finite number was signed");
    cJSON_Delete(n);
    /* No secret (issue #28 item 8): 16 spaces, 16 times one letter, white space padding. */
    static const char *const weak[] = { "                ", "aaaaaaaaaaaaaaaa",
                                        "abababababababababab", " \t\n 0123456789abc \t\n" };
    for (size_t i = 0; i < sizeof weak / sizeof weak[0]; i++) {
        cJSON *w = cJSON_Parse("{\"x\": 1}");
        CHECK_MSG(kg_report_json_sign(w, weak[i]) < 0, "weak key %zu accepted for signing", i);
        CHECK_MSG(strstr(kg_error_last(), "other than white space"), "weak key %zu: '%s'", i,
                  kg_error_last());
        CHECK_MSG(kg_report_json_verify(r, weak[i], "r.json") < 0, "weak key %zu verifies", i);
        cJSON_Delete(w);
    }
    cJSON *w = cJSON_Parse("{\"x\": 1}");
    CHECK_MSG(kg_report_json_sign(w, "0123456789abcdef") == 0, "a 16-character key refused: %s",
              kg_error_last());
    cJSON_Delete(w);
    free(esc), free(inf), free(nul);
    cJSON_free(text);
    cJSON_Delete(r);
    printf("test_sign: %d passed, %d failed\n", kg_t_pass, kg_t_fail);
    return kg_t_fail ? 1 : 0;
}
