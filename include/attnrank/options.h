/* Checks of the values a face was given for an analysis's options, worded
 * once in the library with the option named as a token (status.h: the CLI
 * renders {opt:rtol} as --rtol, Python as rtol=).  A face calls them for
 * the values it was given; the analyses' own checks (ar_X_check) call them
 * for the values in their options structs.  Each returns AR_OK or
 * AR_EINVAL with the message in err (which may be NULL). */
#ifndef ATTNRANK_OPTIONS_H
#define ATTNRANK_OPTIONS_H

#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* value finite and >= 0: "{opt:NAME}: must be >= 0, got V" (NaN and -inf
 * included), "{opt:NAME}: must be finite, got inf". */
AR_API int ar_option_check_nonneg(const char *name, double value, ar_error *err);

/* value finite and > 0: "{opt:NAME}: must be > 0, got V". */
AR_API int ar_option_check_positive(const char *name, double value, ar_error *err);

/* value in the interval from lo to hi, each end open or closed
 * (lo_open, hi_open nonzero: open): "{opt:NAME}: must be in (0, 1], got
 * V", the interval written as given ("[0, 1)", "(0, 1)"). NaN is outside
 * every interval. */
AR_API int ar_option_check_interval(const char *name, double value, double lo, int lo_open,
                                    double hi, int hi_open, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
