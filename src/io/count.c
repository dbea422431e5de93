/* Counts as text: what a size means on the command line and in a
 * configurations file is one rule, written here. */
#include "attnrank/io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest integer a double holds exactly: above it, "1.2345678901234567e18"
 * would silently round, so exponent form stops there. */
#define EXACT_DOUBLE_INT 9007199254740992.0 /* 2^53 */

static int refuse(const char *text, ar_error *err)
{
    return ar_error_set(err, AR_EINVAL, "expected a non-negative integer, got '%.64s'",
                        text != NULL ? text : "(null)");
}

int ar_count_parse(const char *text, uint64_t *out, ar_error *err)
{
    if (text == NULL || out == NULL || *text < '0' || *text > '9')
        return refuse(text, err);
    char *end = NULL;
    errno = 0;
    if (strspn(text, "0123456789") == strlen(text)) {
        unsigned long long v = strtoull(text, &end, 10);
        if (errno != 0 || *end != '\0')
            return refuse(text, err);
        *out = (uint64_t)v;
        return AR_OK;
    }
    if (strspn(text, "0123456789.eE+-") != strlen(text))
        return refuse(text, err);
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0.0 || v != floor(v) ||
        v > EXACT_DOUBLE_INT)
        return refuse(text, err);
    *out = (uint64_t)v;
    return AR_OK;
}
