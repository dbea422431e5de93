/* A depth-width law read back from JSON (include/attnrank/depthwidth.h):
 * the one reader behind the CLI's --law and Python's law=. */
#include "attnrank/depthwidth.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The value under key in obj, or in obj["law"] (a mode's output); NULL when
 * absent from both. */
static json_t *law_value(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL && json_is_object(json_object_get(obj, "law")))
        v = json_object_get(json_object_get(obj, "law"), key);
    return v;
}

/* A finite number under key in obj (or obj["law"]); 0 when absent or not one. */
static int law_number(json_t *obj, const char *key, double *out)
{
    json_t *v = law_value(obj, key);
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return isfinite(*out);
}

static int law_of(json_t *root, ar_dw_law *law, ar_error *err)
{
    double a = 0.0, b = 0.0, c = AR_DW_PAPER_PARAMS_COEFF;
    int ok = json_is_object(root) && law_number(root, "intercept", &a) &&
             law_number(root, "slope", &b);
    /* looked up as the other two: a mode's output keeps its law's coefficient */
    if (ok && law_value(root, "params_coeff") != NULL)
        ok = law_number(root, "params_coeff", &c) && c > 0.0;
    if (!ok)
        return ar_error_set(err, AR_EFORMAT,
                            "needs numbers \"intercept\" and \"slope\" (and an optional positive "
                            "\"params_coeff\"), as the JSON of a refit has them");
    law->intercept = a;
    law->slope = b;
    law->params_coeff = c;
    return AR_OK;
}

static int law_from(json_t *root, const json_error_t *jerr, ar_dw_law *law, ar_error *err)
{
    if (root == NULL)
        return ar_error_set(err, AR_EFORMAT, "line %d: not a JSON law file: %s", jerr->line,
                            jerr->text);
    int rc = law_of(root, law, err);
    json_decref(root);
    return rc;
}

int ar_dw_law_parse_json(const char *text, size_t len, ar_dw_law *law, ar_error *err)
{
    if (text == NULL || law == NULL)
        return ar_error_set(err, AR_EINVAL, "law: NULL argument");
    json_error_t jerr;
    return law_from(json_loadb(text, len, 0, &jerr), &jerr, law, err);
}

int ar_dw_law_read_file(const char *path, ar_dw_law *law, ar_error *err)
{
    if (path == NULL || law == NULL)
        return ar_error_set(err, AR_EINVAL, "law: NULL argument");
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    json_error_t jerr;
    json_t *root = json_loadf(fp, 0, &jerr);
    fclose(fp);
    ar_error inner = {{0}};
    int rc = law_from(root, &jerr, law, &inner);
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "%s: %s", path, inner.msg);
}
