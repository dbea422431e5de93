#include "attnrank/status.h"
#include "attnrank/version.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_text[AR_NSTATUS] = {
    [AR_OK] = "success",
    [AR_EINVAL] = "invalid argument",
    [AR_ENOMEM] = "out of memory",
    [AR_ENONFINITE] = "non-finite value (NaN or Inf) in input",
    [AR_ENOCONV] = "iteration did not converge",
    [AR_EIO] = "input/output error",
    [AR_EFORMAT] = "malformed file",
    [AR_EUNSUPPORTED] = "unsupported format or layout",
    [AR_EDOMAIN] = "input outside the domain of the computation",
    [AR_ELAPACK] = "LAPACK rejected an argument (internal error)",
    [AR_ESIZE] = "operand sizes do not agree",
};

const char *ar_strerror(int status)
{
    if (status < 0 || status >= AR_NSTATUS || status_text[status] == NULL)
        return "unknown status";
    return status_text[status];
}

int ar_error_set(ar_error *err, int status, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

int ar_error_printable(ar_error *err, int rc)
{
    if (err != NULL && rc != AR_OK)
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    return rc;
}

const char *ar_version(void)
{
    return AR_VERSION_STRING;
}

int ar_version_number(void)
{
    return AR_VERSION_NUMBER;
}
