/* Status codes shared by every attnrank function.
 *
 * Library functions return an int status: AR_OK (0) on success, a positive
 * AR_E* code otherwise.  They never abort or exit.  Every function returning
 * a status takes an ar_error *err as its last parameter, filled on failure
 * with what the code cannot say (file, line, value); err may be NULL when the
 * caller does not want the message.  Functions whose int is a truth value or
 * a count take none (docs/api.md, "Which functions take ar_error").
 *
 * One condition, one code, in every module:
 * - a size that is well-formed but above what a dependency can index (a
 *   dimension above INT_MAX for BLAS/LAPACK's int, a field rank's int) is
 *   AR_EUNSUPPORTED, never AR_EINVAL or AR_ENOMEM;
 * - a size whose buffer would not fit in size_t, or an allocation that
 *   failed, is AR_ENOMEM;
 * - shapes of operands that disagree are AR_ESIZE; a NULL pointer, an
 *   invalid view or an out-of-range option is AR_EINVAL.
 * GSL's error handler aborts by default, and the library never sets it:
 * it checks GSL's preconditions first, hands GSL library-owned memory and
 * uses its entry points that return codes; it runs none of GSL's
 * minimisers (they allocate through GSL's handler).
 * FLINT aborts on a failed allocation too: seprank's exact ranks call it
 * only after an upper estimate of its memory passed a cap and a probe
 * allocation (AR_ENOMEM otherwise, seprank.h). */
#ifndef ATTNRANK_STATUS_H
#define ATTNRANK_STATUS_H

#include <stddef.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ar_status {
    AR_OK = 0,
    AR_EINVAL,      /* bad argument: size, NULL pointer, value out of range */
    AR_ENOMEM,      /* allocation failed or would exceed a memory limit */
    AR_ENONFINITE,  /* NaN or Inf in an input */
    AR_ENOCONV,     /* an iterative method did not converge */
    AR_EIO,         /* file could not be opened, read or written */
    AR_EFORMAT,     /* file content is malformed */
    AR_EUNSUPPORTED,/* well-formed but not supported (dtype, layout) */
    AR_EDOMAIN,     /* input outside the mathematical domain (e.g. P <= 0) */
    AR_ELAPACK,     /* LAPACK reported an illegal argument (a bug) */
    AR_ESIZE,       /* sizes of operands do not agree */
    AR_NSTATUS
};

/* Human-readable text of a status code; never NULL. */
AR_API const char *ar_strerror(int status);

/* A detailed message for the caller.  Functions fill msg on failure. */
#define AR_ERROR_MSG_LEN 512
typedef struct ar_error {
    char msg[AR_ERROR_MSG_LEN];
} ar_error;

/* Write a formatted message into err (if not NULL) and return status.
 * Lets a function report and fail in one statement. */
AR_API int ar_error_set(ar_error *err, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Option names in messages.  A library message that names an option of the
 * faces (the CLI's flags, the Python package's keywords) writes it as a
 * token, never in one face's spelling:
 *     {opt:NAME}         an option:          CLI --NAME, Python NAME=
 *     {opt:NAME=VALUE}   one with its value: CLI --NAME VALUE, Python
 *                        NAME=VALUE for a number (1e-9) or a metavariable
 *                        (EPS, PATH: capitals, digits, _), else NAME='VALUE'
 *     {flag:NAME}        a switch:           CLI --NAME, Python NAME=True
 * NAME is lower case with '-' between words (the CLI's spelling); Python
 * spells each '-' as '_'.  Messages (ar_error, and the text fields of
 * results that explain a verdict) keep the tokens until a face renders them
 * with ar_option_render or ar_error_message, once, where it prints.  Text
 * that is not a well-formed token (file content, user input) is copied
 * unchanged. */
typedef enum ar_option_style {
    AR_OPTION_STYLE_CLI = 0,   /* --smooth 1e-9 */
    AR_OPTION_STYLE_PYTHON = 1 /* smooth=1e-9 */
} ar_option_style;

/* Render every option token of the NUL-terminated text in place, in style
 * (an unknown style renders as the CLI's).  Rendering never lengthens the
 * text, and rendered text has no tokens left (rendering twice is harmless).
 * Returns text; NULL stays NULL. */
AR_API char *ar_option_render(char *text, ar_option_style style);

/* err's message with its option tokens rendered in style (in place), or
 * ar_strerror(status) when err is NULL or its message is empty; never NULL.
 * What a C program prints for a failed call. */
AR_API const char *ar_error_message(ar_error *err, int status, ar_option_style style);

/* When rc != AR_OK, replace control characters in err's message by '?', so a
 * message quoting file content (tensor names, say) stays one printable line.
 * Returns rc. */
AR_API int ar_error_printable(ar_error *err, int rc);

#ifdef __cplusplus
}
#endif

#endif
