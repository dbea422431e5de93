/* Building the JSON of a result record (internal; include/attnrank/json.h
 * is the public side).  One builder per record: every value goes in through
 * jb_set / jb_append, which remember an allocation failure, so a record
 * function builds its whole object and checks once, in jb_dump.
 *
 * Values: a real that is not finite is null (jansson refuses NaN and Inf),
 * or with AR_JSON_NONFINITE the string "nan", "inf" or "-inf"; an unsigned
 * count above INT64_MAX is a decimal string (jansson integers are signed
 * 64-bit). */
#ifndef ATTNRANK_ANALYSES_JSON_BUILD_H
#define ATTNRANK_ANALYSES_JSON_BUILD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attnrank/json.h"
#include "attnrank/rank.h"
#include "attnrank/status.h"

typedef struct jb {
    unsigned flags; /* AR_JSON_* */
    int failed;     /* a value or an insertion could not be allocated */
} jb;

void jb_init(jb *b, unsigned flags);
/* obj[key] = v (v's reference taken); a NULL obj or v marks the failure. */
void jb_set(jb *b, json_t *obj, const char *key, json_t *v);
void jb_append(jb *b, json_t *arr, json_t *v);

json_t *jb_real(const jb *b, double x);
json_t *jb_size(size_t v);
json_t *jb_u64(uint64_t v);
json_t *jb_bool(int v);
json_t *jb_doubles(jb *b, const double *v, size_t n);
/* The tolerance block of a rank: threshold, rtol, atol, precision, and under
 * the storage rule rule, certain_threshold, certain_rank, seed, draws. */
json_t *jb_tolerance(jb *b, const ar_rank_metrics *m);
/* The tolerance of a float64 rank with the relative rule: threshold, rtol,
 * atol, precision "float64". */
json_t *jb_tolerance_f64(jb *b, double threshold, double rtol, double atol);
/* rank, tolerance, stable_rank, roy_vetterli_rank, participation_ratio,
 * energy_rank, energy_fraction, nuclear_rank, set into obj. */
void jb_rank_metrics_into(jb *b, json_t *obj, const ar_rank_metrics *m);

/* schema2: the blocks of masks and positional biases (mask_json.c). */
json_t *jb_mask(jb *b, const ar_mask *m);
/* generic_min_head_size, generic_status, generic_lower, worst_case_lower,
 * worst_case_upper, formula, set into obj. */
void jb_mask_generic_into(jb *b, json_t *obj, const ar_mask_generic *g);
json_t *jb_model_bias(jb *b, const ar_model_bias_report *r);

/* The depth-width law applied, {intercept, slope, params_coeff, source},
 * and points .. chi2_red of its refit: blocks of the depthwidth and check
 * records (depthwidth_json.c). */
json_t *jb_dw_law(jb *b, const ar_dw_law *law, const char *source);
json_t *jb_dw_fit(jb *b, const ar_dw_fit *f);

/* The compact text of root (released): AR_ENOMEM naming `what` when any
 * step failed; *text then NULL. */
int jb_dump(jb *b, json_t *root, const char *what, char **text, ar_error *err);

#endif
