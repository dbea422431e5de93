/* The textual syntax of a bias (include/attnrank/bias.h): the CLI's
 * `--bias` value and Python's `bias=` string. */
#include "attnrank/bias.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BIAS_SYNTAXES "none, alibi:M, alibi-causal:M, t5:FILE, file:PATH"

const char *ar_bias_kind_name(ar_bias_kind kind)
{
    switch (kind) {
    case AR_BIAS_NONE: return "none";
    case AR_BIAS_ALIBI: return "alibi";
    case AR_BIAS_ALIBI_CAUSAL: return "alibi_causal";
    case AR_BIAS_T5: return "t5";
    case AR_BIAS_FILE: return "file";
    default: return "unknown";
    }
}

static int parse_slope(const char *text, const char *whole, double *slope, ar_error *err)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (*text == '\0' || end == text || *end != '\0' || errno == ERANGE || !isfinite(v) || v < 0.0)
        return ar_error_set(err, AR_EINVAL,
                            "bias '%s': the ALiBi slope must be a finite number >= 0", whole);
    *slope = v;
    return AR_OK;
}

static int copy_path(const char *text, const char *whole, ar_bias_spec *spec, ar_error *err)
{
    size_t len = strlen(text);
    if (len == 0)
        return ar_error_set(err, AR_EINVAL, "bias '%s': the file name is empty", whole);
    if (len >= sizeof spec->path)
        return ar_error_set(err, AR_EINVAL, "bias '%.40s...': the file name is longer than %d bytes",
                            whole, AR_BIAS_PATH_MAX - 1);
    memcpy(spec->path, text, len + 1);
    return AR_OK;
}

int ar_bias_parse(const char *text, ar_bias_spec *spec, ar_error *err)
{
    if (text == NULL || spec == NULL)
        return ar_error_set(err, AR_EINVAL, "bias: NULL text or spec");
    memset(spec, 0, sizeof *spec);
    if (strcmp(text, "none") == 0) {
        spec->kind = AR_BIAS_NONE;
        return AR_OK;
    }
    if (strncmp(text, "alibi:", 6) == 0) {
        spec->kind = AR_BIAS_ALIBI;
        return parse_slope(text + 6, text, &spec->slope, err);
    }
    if (strncmp(text, "alibi-causal:", 13) == 0) {
        spec->kind = AR_BIAS_ALIBI_CAUSAL;
        return parse_slope(text + 13, text, &spec->slope, err);
    }
    if (strncmp(text, "t5:", 3) == 0) {
        spec->kind = AR_BIAS_T5;
        return copy_path(text + 3, text, spec, err);
    }
    if (strncmp(text, "file:", 5) == 0) {
        spec->kind = AR_BIAS_FILE;
        return copy_path(text + 5, text, spec, err);
    }
    return ar_error_set(err, AR_EINVAL, "unknown bias '%s' (expected one of " BIAS_SYNTAXES ")",
                        text);
}
