/* The options of an analysis as data: one table per analysis, the one home
 * of each option's name, kind, help text and "given" rule.  The CLI builds
 * its flags, --help and man page from it; the Python package its keywords
 * and the parameter sections of its docstrings.  An entry writes into the
 * analysis's own options struct (ar_collapse_opts, ...) at its offset.
 *
 * The setters convert and store; the rules on the values stay the
 * analysis's own check (ar_collapse_check, ...), which both faces call.  The
 * one rule a setter applies is AR_OPTION_NONNEG: a given tolerance must be
 * >= 0, because its default is a negative sentinel (AR_TOL_DEFAULT) that
 * the analysis cannot tell from a given negative value; its twin for
 * counts is AR_OPTION_POSITIVE, whose default is 0. */
#ifndef ATTNRANK_OPTION_TABLE_H
#define ATTNRANK_OPTION_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_option_kind {
    AR_OPTION_COUNT = 0,  /* size_t, in ar_count_parse's syntax (io.h) */
    AR_OPTION_SEED = 1,   /* uint64_t, the same syntax */
    AR_OPTION_REAL = 2,   /* double, finite */
    AR_OPTION_SWITCH = 3, /* int, 1 when given; takes no value */
    AR_OPTION_TEXT = 4    /* const char *, not empty; borrowed: it must outlive the run */
} ar_option_kind;

/* ar_option_spec.flags */
enum {
    AR_OPTION_REQUIRED = 1u, /* the CLI refuses a run without it (Python: positional) */
    AR_OPTION_NONNEG = 2u,   /* REAL: a given value must be >= 0 (ar_option_check_nonneg) */
    AR_OPTION_POSITIVE = 4u  /* COUNT: a given value must be >= 1 (0 is the default's sentinel) */
};

/* given_offset of an option whose being given is not recorded. */
#define AR_OPTION_UNTRACKED ((size_t)-1)

typedef struct ar_option_spec {
    const char *name;    /* lower case, '-' between words: "mlp-width" is the CLI's
                          * --mlp-width and Python's mlp_width */
    ar_option_kind kind;
    unsigned flags;      /* AR_OPTION_REQUIRED | AR_OPTION_NONNEG */
    size_t offset;       /* of the value in the options struct */
    size_t given_offset; /* of an int set to 1 when the option is given, or AR_OPTION_UNTRACKED */
    const char *metavar; /* "N", "FILE"; NULL for a switch */
    const char *help;    /* one line, as --help prints it */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_option_spec;

typedef struct ar_option_table {
    const char *analysis;        /* "collapse": the CLI's subcommand */
    const char *summary;         /* the description --help and the docstring open with */
    const ar_option_spec *specs; /* count entries, in --help's order */
    size_t count;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_option_table;

/* The entry of table named name (its first len characters; '_' matches
 * '-'), or NULL. */
AR_API const ar_option_spec *ar_option_find(const ar_option_table *table, const char *name,
                                            size_t len);

/* Store a value given as text, by the kind's syntax, into opts (the
 * options struct the table describes) and mark it given.  AR_EINVAL
 * "{opt:NAME}: expected ..., got 'TEXT'" for text of the wrong form,
 * an empty value, or a switch (which takes no text). */
AR_API int ar_option_set_text(const ar_option_spec *spec, void *opts, const char *text,
                              ar_error *err);

/* Store a value already converted by a face: a count or seed
 * (ar_option_set_count), a real (ar_option_set_real, finite; NONNEG
 * checked), a switch (ar_option_set_switch: on nonzero stores 1 and marks
 * it given, zero stores 0).  AR_EINVAL for a spec of another kind or a
 * count above SIZE_MAX. */
AR_API int ar_option_set_count(const ar_option_spec *spec, void *opts, uint64_t value,
                               ar_error *err);
AR_API int ar_option_set_real(const ar_option_spec *spec, void *opts, double value,
                              ar_error *err);
AR_API int ar_option_set_switch(const ar_option_spec *spec, void *opts, int on, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
