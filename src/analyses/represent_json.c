/* The JSON records of represent (ar_represent_run_json on one map, masked
 * or not, with or without a positional bias; ar_represent_stack_json on a
 * stack): the objects `attnrank represent --json` prints and
 * attnrank.Represent, MaskedRepresent and RepresentStack are built from. */
#include "attnrank/json.h"

#include "json_build.h"

static json_t *smoothing_json(jb *b, const ar_smooth_report *s)
{
    json_t *o = json_object();
    jb_set(b, o, "eps", jb_real(b, s->eps));
    jb_set(b, o, "zeros", jb_size(s->zeros));
    jb_set(b, o, "min_before", jb_real(b, s->min_before));
    jb_set(b, o, "min_after", jb_real(b, s->min_after));
    jb_set(b, o, "max_change", jb_real(b, s->max_change));
    return o;
}

/* rounding_ratio only where it means something: the masked storage rule. */
static json_t *certificate_json(jb *b, const ar_certificate *c, int rounding)
{
    json_t *o = json_object();
    jb_set(b, o, "head_size", jb_size(c->head_size));
    jb_set(b, o, "d", jb_size(c->d));
    jb_set(b, o, "max_abs_error", jb_real(b, c->max_abs));
    jb_set(b, o, "kl_mean", jb_real(b, c->kl_mean));
    jb_set(b, o, "kl_max", jb_real(b, c->kl_max));
    jb_set(b, o, "logit_max_abs", jb_real(b, c->logit_max_abs));
    if (rounding)
        jb_set(b, o, "rounding_ratio", jb_real(b, c->rounding_ratio));
    return o;
}

static json_t *fit_json(jb *b, const ar_fit_result *f)
{
    json_t *o = json_object();
    jb_set(b, o, "head_size", jb_size(f->k));
    jb_set(b, o, "kl_mean", jb_real(b, f->kl_mean));
    jb_set(b, o, "kl_max", jb_real(b, f->kl_max));
    jb_set(b, o, "fro_error", jb_real(b, f->fro_error));
    jb_set(b, o, "max_abs_error", jb_real(b, f->max_abs_error));
    jb_set(b, o, "start_kl_mean", jb_real(b, f->start_kl_mean));
    jb_set(b, o, "jitter", jb_real(b, f->jitter));
    jb_set(b, o, "iterations", jb_size(f->iterations));
    jb_set(b, o, "converged", jb_bool(f->converged));
    jb_set(b, o, "start_kept", jb_bool(f->start_kept));
    jb_set(b, o, "seed", jb_u64(f->seed));
    jb_set(b, o, "stop", json_string(ar_fit_stop_name(f->stop)));
    jb_set(b, o, "method", json_string(ar_fit_method_name(f->method)));
    return o;
}

/* A bias given as a matrix, not by a spec: a file without a name. */
static const ar_bias_spec matrix_bias = {.kind = AR_BIAS_FILE};

static json_t *bias_json(jb *b, const ar_represent_run_result *r, const ar_bias_spec *s)
{
    if (s == NULL)
        s = &matrix_bias;
    const ar_bias_rank_result *br = &r->bias_rank;
    json_t *o = json_object();
    jb_set(b, o, "kind", json_string(ar_bias_kind_name(s->kind)));
    if (s->kind == AR_BIAS_ALIBI || s->kind == AR_BIAS_ALIBI_CAUSAL)
        jb_set(b, o, "slope", jb_real(b, s->slope));
    else if (s->path[0] != '\0')
        jb_set(b, o, "source", json_string(s->path));
    jb_set(b, o, "bias_rank", br->exact ? jb_size(br->lower) : json_null());
    jb_set(b, o, "bias_rank_lower", jb_size(br->lower));
    jb_set(b, o, "bias_rank_upper", jb_size(br->upper));
    jb_set(b, o, "reach", jb_size(r->bias_reach));
    return o;
}

/* The keys both analyses end with: the certificate, the errors below the
 * minimum, the fit or why it was skipped, the bias. */
static void tail_into(jb *b, json_t *o, const ar_represent_run_result *r, int rounding,
                      const ar_bias_spec *bias)
{
    if (r->have_certificate)
        jb_set(b, o, "certificate", certificate_json(b, &r->certificate, rounding));
    if (r->have_logit_error) {
        jb_set(b, o, "logit_error", jb_real(b, r->logit_error));
        jb_set(b, o, "logit_error_rel", jb_real(b, r->logit_error_rel));
    }
    if (r->have_logit_error_lower)
        jb_set(b, o, "logit_error_lower", jb_real(b, r->logit_error_lower));
    if (r->have_fit)
        jb_set(b, o, "fit", fit_json(b, &r->fit));
    else if (r->fit_skipped[0] != '\0')
        jb_set(b, o, "fit_skipped", json_string(r->fit_skipped));
    if (r->biased)
        jb_set(b, o, "positional_bias", bias_json(b, r, bias));
}

static json_t *plain_tolerance_json(jb *b, const ar_represent_result *p)
{
    json_t *o = json_object();
    jb_set(b, o, "threshold", jb_real(b, p->threshold));
    jb_set(b, o, "rtol", jb_real(b, p->rtol));
    jb_set(b, o, "atol", jb_real(b, p->atol));
    jb_set(b, o, "precision", json_string(ar_precision_name(p->precision)));
    jb_set(b, o, "log_norm2", jb_real(b, p->log_norm2));
    jb_set(b, o, "sum_tol", jb_real(b, p->sum_tol));
    jb_set(b, o, "feasibility_tol", jb_real(b, p->feasibility_tol));
    if (p->storage_rule) {
        jb_set(b, o, "rule", json_string("storage"));
        jb_set(b, o, "certain_threshold", jb_real(b, p->certain_threshold));
        jb_set(b, o, "certain_rank", jb_size(p->certain_rank));
    }
    return o;
}

static json_t *plain_x_json(jb *b, const ar_represent_result *p)
{
    json_t *o = json_object();
    jb_set(b, o, "given", jb_bool(p->x_given));
    if (p->x_given) {
        jb_set(b, o, "d", jb_size(p->d));
        jb_set(b, o, "rank", jb_size(p->x_rank));
        jb_set(b, o, "threshold", jb_real(b, p->x_threshold));
        jb_set(b, o, "ones_residual", jb_real(b, p->ones_residual));
        jb_set(b, o, "shift_forced", jb_bool(p->shift_forced));
    }
    return o;
}

static json_t *residual_json(jb *b, const ar_represent_run_result *r)
{
    const ar_represent_result *p = &r->plain;
    json_t *o = json_object();
    jb_set(b, o, "key", jb_real(b, p->residual_key));
    jb_set(b, o, "query", jb_real(b, p->residual_query));
    jb_set(b, o, "relative", jb_real(b, p->residual_rel));
    jb_set(b, o, "failed",
           p->feasible ? json_null() : json_string(ar_represent_side_name(r->failed)));
    return o;
}

static json_t *plain_json(jb *b, const ar_represent_run_result *r, const ar_bias_spec *bias)
{
    const ar_represent_result *p = &r->plain;
    json_t *o = json_object();
    jb_set(b, o, "n", jb_size(p->n));
    jb_set(b, o, "axis", json_string(ar_axis_name(p->axis)));
    jb_set(b, o, "tolerance", plain_tolerance_json(b, p));
    jb_set(b, o, "max_sum_defect", jb_real(b, p->max_sum_defect));
    if (p->smoothed)
        jb_set(b, o, "smoothing", smoothing_json(b, &p->smooth));
    jb_set(b, o, "x", plain_x_json(b, p));
    jb_set(b, o, "feasible", jb_bool(p->feasible));
    jb_set(b, o, "residual", residual_json(b, r));
    jb_set(b, o, "centred_rank", jb_size(p->centred_rank));
    jb_set(b, o, "min_head_size", p->feasible ? jb_size(p->min_head_size) : json_null());
    jb_set(b, o, "head_size", jb_size(r->head_size));
    jb_set(b, o, "representable", jb_bool(r->representable));
    jb_set(b, o, "singular_values", jb_doubles(b, p->centred_svals, p->n));
    tail_into(b, o, r, 0, bias);
    return o;
}

static json_t *masked_tolerance_json(jb *b, const ar_masked_result *m)
{
    json_t *o = json_object();
    jb_set(b, o, "tau", jb_real(b, m->tau));
    jb_set(b, o, "accuracy", jb_real(b, m->accuracy));
    jb_set(b, o, "precision", json_string(ar_precision_name(m->precision)));
    jb_set(b, o, "sum_tol", jb_real(b, m->sum_tol));
    if (m->storage_rule) {
        jb_set(b, o, "rule", json_string("storage"));
        jb_set(b, o, "log_rounding", jb_real(b, m->log_rounding));
    }
    return o;
}

static json_t *masked_x_json(jb *b, const ar_masked_result *m)
{
    json_t *o = json_object();
    jb_set(b, o, "given", jb_bool(m->x_given));
    if (m->x_given) {
        jb_set(b, o, "d", jb_size(m->d));
        jb_set(b, o, "rank", jb_size(m->x_rank));
        jb_set(b, o, "threshold", jb_real(b, m->x_threshold));
    }
    return o;
}

/* true, false, or null for undecided (between the bounds). */
static json_t *verdict_json(int representable)
{
    return representable < 0 ? json_null() : jb_bool(representable == 1);
}

static const char *status_name(int exact)
{
    return exact ? "exact" : "bounds";
}

static json_t *masked_json(jb *b, const ar_represent_run_result *r, const ar_bias_spec *bias)
{
    const ar_masked_result *m = &r->masked_res;
    json_t *o = json_object();
    jb_set(b, o, "n", jb_size(m->n));
    jb_set(b, o, "axis", json_string(ar_axis_name(m->axis)));
    jb_set(b, o, "mask", jb_mask(b, m->mask));
    jb_set(b, o, "mask_source", json_string(m->mask_inferred ? "inferred" : "given"));
    jb_set(b, o, "tolerance", masked_tolerance_json(b, m));
    jb_set(b, o, "max_sum_defect", jb_real(b, m->max_sum_defect));
    if (m->smoothed)
        jb_set(b, o, "smoothing", smoothing_json(b, &m->smooth));
    jb_set(b, o, "x", masked_x_json(b, m));
    jb_set(b, o, "method", json_string(m->method == AR_MASKED_STAIRCASE ? "staircase" : "bounds"));
    jb_set(b, o, "status", json_string(status_name(m->exact)));
    /* the storage rule's default estimate has a value even between the bounds */
    if (m->exact || m->storage_rule)
        jb_set(b, o, "min_head_size", jb_size(m->min_head_size));
    jb_set(b, o, "min_head_size_lower", jb_size(m->lower));
    jb_set(b, o, "min_head_size_upper", m->certified ? jb_size(m->upper) : json_null());
    jb_set(b, o, "block_lower", jb_size(m->block_lower));
    jb_set(b, o, "blocks", jb_size(m->blocks));
    json_t *gap = json_object();
    jb_set(b, gap, "min_innovative", jb_real(b, m->min_innovative));
    jb_set(b, gap, "max_not_innovative", jb_real(b, m->max_not_innovative));
    jb_set(b, o, "innovation_gap", gap);
    if (m->generic_known)
        jb_mask_generic_into(b, o, &m->generic);
    jb_set(b, o, "head_size", jb_size(r->head_size));
    jb_set(b, o, "representable", verdict_json(r->representable));
    tail_into(b, o, r, m->storage_rule, bias);
    return o;
}

int ar_represent_run_json(const ar_represent_run_result *r, const ar_bias_spec *bias,
                          unsigned flags, char **text, ar_error *err)
{
    if (r == NULL || (r->masked && r->masked_res.mask == NULL))
        return ar_error_set(err, AR_EINVAL, "ar_represent_run_json: NULL or failed run");
    jb b;
    jb_init(&b, flags);
    return jb_dump(&b, r->masked ? masked_json(&b, r, bias) : plain_json(&b, r, bias),
                   "ar_represent_run_json", text, err);
}

/* Slice k's indices over the leading axes lead[0..nlead), in C order (the
 * last axis varies fastest), each put in front of the later ones. */
static json_t *index_json(jb *b, const size_t *lead, size_t nlead, size_t k)
{
    json_t *a = json_array();
    for (size_t t = nlead; t > 0; t--) {
        json_t *v = jb_size(k % lead[t - 1]);
        if (a == NULL || v == NULL || json_array_insert_new(a, 0, v) != 0)
            b->failed = 1;
        k /= lead[t - 1];
    }
    return a;
}

static json_t *slice_json(jb *b, const ar_represent_stack_result *r, const size_t *lead,
                          size_t nlead, size_t k)
{
    const ar_represent_stack_slice *s = &r->slices[k];
    json_t *o = json_object();
    jb_set(b, o, "index", index_json(b, lead, nlead, k));
    jb_set(b, o, "mask", json_string(s->mask));
    jb_set(b, o, "mask_source", json_string(s->mask_inferred ? "inferred" : "given"));
    jb_set(b, o, "status", json_string(status_name(s->exact)));
    jb_set(b, o, "min_head_size_lower", jb_size(s->lower));
    jb_set(b, o, "min_head_size", s->exact ? jb_size(s->lower) : json_null());
    jb_set(b, o, "min_head_size_upper", s->certified ? jb_size(s->upper) : json_null());
    /* a verdict only for a tested head size */
    if (r->head_size_given)
        jb_set(b, o, "representable", verdict_json(s->representable));
    return o;
}

static json_t *summary_json(jb *b, const ar_represent_stack_result *r)
{
    json_t *o = json_object();
    jb_set(b, o, "slices", jb_size(r->count));
    jb_set(b, o, "exact", jb_size(r->exact));
    jb_set(b, o, "max_min_head_size", jb_size(r->max));
    jb_set(b, o, "median_min_head_size", jb_size(r->median));
    return o;
}

/* The leading axes hold exactly count slices (none of them 0 unless count is). */
static int lead_holds(const size_t *lead, size_t nlead, size_t count)
{
    if (nlead > 0 && lead == NULL)
        return 0;
    size_t total = 1;
    for (size_t t = 0; t < nlead; t++)
        total *= lead[t];
    return total == count;
}

int ar_represent_stack_json(const ar_represent_stack_result *r, const size_t *lead, size_t nlead,
                            unsigned flags, char **text, ar_error *err)
{
    if (r == NULL || (r->count > 0 && r->slices == NULL) || !lead_holds(lead, nlead, r->count))
        return ar_error_set(err, AR_EINVAL,
                            "ar_represent_stack_json: NULL result or leading axes that do not "
                            "hold its slices");
    jb b;
    jb_init(&b, flags);
    json_t *slices = json_array();
    for (size_t k = 0; k < r->count; k++)
        jb_append(&b, slices, slice_json(&b, r, lead, nlead, k));
    json_t *o = json_object();
    jb_set(&b, o, "n", jb_size(r->n));
    jb_set(&b, o, "axis", json_string(ar_axis_name(r->axis)));
    jb_set(&b, o, "slices", slices);
    jb_set(&b, o, "summary", summary_json(&b, r));
    return jb_dump(&b, o, "ar_represent_stack_json", text, err);
}
