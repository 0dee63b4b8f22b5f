/* Authentic reports: HMAC-SHA256 (mbedtls' libmbedcrypto, no hand-written crypto) over the
 * canonical bytes of a report, with a key from a CI secret (KGATE_REPORT_KEY).
 *
 * Canonical bytes: the report object without its top-level "signature" member, printed by
 * cJSON without white space (cJSON_PrintUnformatted: members in file order, numbers and strings
 * as cJSON prints them). A report is loaded strictly (no duplicate key, nothing trailing), so
 * parsing the written file and printing it again gives the bytes that were signed. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <mbedtls/constant_time.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

#define KG_SIG_HEX (2 * 32)

/* At least KG_REPORT_KEY_MIN characters other than white space, at least 8 of them
 * different: 16 spaces or 16 times 'a' is no secret. */
static int sg_check_key(const char *key)
{
    size_t solid = 0, distinct = 0;
    unsigned char seen[256] = { 0 };
    for (const unsigned char *p = (const unsigned char *)(key ? key : ""); *p; p++) {
        if (isspace(*p))
            continue;
        solid++;
        distinct += !seen[*p];
        seen[*p] = 1;
    }
    if (solid < KG_REPORT_KEY_MIN || distinct < 8)
        return KG_ERR(KG_EREFUSED,
                      KG_REPORT_KEY_ENV " must hold at least %d characters other "
                                        "than white space, at least 8 of them different (a random "
                                        "secret: `openssl rand -hex 32`)",
                      KG_REPORT_KEY_MIN);
    return 0;
}

/* What the canonical form cannot represent, so that an edit of it would keep the signature:
 * a number that is not finite (1e999 reads as inf, which cJSON prints as null). A string with
 * a NUL (\u0000, which cJSON cuts there) is refused by the strict parser before this. */
static int sg_representable(const cJSON *v, const char *name)
{
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
        return KG_ERR(KG_EREFUSED,
                      "%s: field '%.80s' holds a number that is not finite: it "
                      "cannot be signed (an edit of it would keep the signature)",
                      name, v->string ? v->string : "(array item)");
    for (const cJSON *c = v->child; c; c = c->next) {
        int rc = sg_representable(c, name);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* HMAC-SHA256 of `root` without its signature member, as lowercase hex. */
static int sg_mac(char hex[KG_SIG_HEX + 1], const cJSON *root, const char *key)
{
    int rc = 0;
    unsigned char mac[32];
    cJSON *copy = cJSON_Duplicate(root, 1);
    char *text = NULL;
    if (!copy) {
        rc = KG_ERR(KG_ENOMEM, "out of memory signing a report");
        goto cleanup;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(copy, KG_RK_SIGNATURE);
    if (!(text = cJSON_PrintUnformatted(copy))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory signing a report");
        goto cleanup;
    }
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!md || mbedtls_md_hmac(md, (const unsigned char *)key, strlen(key),
                               (const unsigned char *)text, strlen(text), mac) != 0) {
        rc = KG_ERR(KG_EINTERNAL, "mbedtls: HMAC-SHA256 failed");
        goto cleanup;
    }
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
cleanup:
    mbedtls_platform_zeroize(mac, sizeof mac);
    cJSON_free(text);
    cJSON_Delete(copy);
    return rc;
}

int kg_report_json_sign(cJSON *root, const char *key)
{
    int rc = 0;
    char hex[KG_SIG_HEX + 1];
    cJSON *sig = NULL;
    if (!cJSON_IsObject(root))
        return KG_ERR(KG_EINVAL, "kg_report_json_sign: not a report object");
    KG_TRY(sg_check_key(key));
    KG_TRY(sg_representable(root, "kg_report_json_sign"));
    KG_TRY(sg_mac(hex, root, key));
    if (!(sig = cJSON_CreateObject()) ||
        !cJSON_AddStringToObject(sig, KG_RK_SIG_ALG, KG_RV_SIG_HMAC_SHA256) ||
        !cJSON_AddStringToObject(sig, KG_RK_SIG_VALUE, hex)) {
        cJSON_Delete(sig);
        return KG_ERR(KG_ENOMEM, "out of memory signing a report");
    }
    /* Last member, so the signed bytes are a prefix-stable view of the report. */
    cJSON_DeleteItemFromObjectCaseSensitive(root, KG_RK_SIGNATURE);
    cJSON_AddItemToObject(root, KG_RK_SIGNATURE, sig);
cleanup:
    return rc;
}

int kg_report_json_verify(const cJSON *root, const char *key, const char *name)
{
    int rc = 0;
    char hex[KG_SIG_HEX + 1];
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(root, KG_RK_SIGNATURE);
    if (!sig)
        return KG_ERR(KG_EREFUSED,
                      "%s: unsigned report: only a report signed by `kgate run "
                      "--production` with " KG_REPORT_KEY_ENV " advances marks",
                      name);
    const char *alg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sig, KG_RK_SIG_ALG));
    const char *val = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sig, KG_RK_SIG_VALUE));
    if (!cJSON_IsObject(sig) || cJSON_GetArraySize(sig) != 2 || !alg ||
        strcmp(alg, KG_RV_SIG_HMAC_SHA256) != 0 || !val || strlen(val) != KG_SIG_HEX)
        return KG_ERR(KG_EREFUSED,
                      "%s: field 'signature' must be {\"alg\": \"%s\", \"value\": "
                      "<64 hex digits>}",
                      name, KG_RV_SIG_HMAC_SHA256);
    if (!key)
        return KG_ERR(KG_EREFUSED,
                      "%s: cannot check the report's signature: " KG_REPORT_KEY_ENV " is not set",
                      name);
    KG_TRY(sg_check_key(key));
    KG_TRY(sg_representable(root, name));
    KG_TRY(sg_mac(hex, root, key));
    if (mbedtls_ct_memcmp(hex, val, KG_SIG_HEX) != 0)
        rc = KG_ERR(KG_EREFUSED,
                    "%s: the signature does not match the report (edited, forged "
                    "or signed with another " KG_REPORT_KEY_ENV ")",
                    name);
cleanup:
    mbedtls_platform_zeroize(hex, sizeof hex);
    return rc;
}
