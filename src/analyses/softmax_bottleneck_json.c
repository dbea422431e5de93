/* The JSON record of a softmax-bottleneck result (ar_sbn_result_json): the
 * object `attnrank softmax-bottleneck --json` prints without its "source"
 * and attnrank.SoftmaxBottleneck is built from. */
#include "attnrank/json.h"

#include "json_build.h"

static json_t *tolerance_json(jb *b, const ar_sbn_result *r)
{
    json_t *o = json_object();
    jb_set(b, o, "threshold", jb_real(b, r->threshold));
    jb_set(b, o, "rtol", jb_real(b, r->rtol));
    jb_set(b, o, "atol", jb_real(b, r->atol));
    jb_set(b, o, "precision", json_string(ar_precision_name(r->precision)));
    jb_set(b, o, "relative_to", json_string("sigma_1(log P)"));
    jb_set(b, o, "sum_tol", jb_real(b, r->sum_tol));
    jb_set(b, o, "max_row_defect", jb_real(b, r->max_row_defect));
    return o;
}

static json_t *yang_json(jb *b, const ar_sbn_result *r)
{
    json_t *o = json_object();
    jb_set(b, o, "condition", json_string("rank(log P) - 1 > d"));
    jb_set(b, o, "applies", jb_bool(!r->bias));
    jb_set(b, o, "proves_failure", jb_bool(r->yang_fails));
    jb_set(b, o, "silent_but_fails", jb_bool(r->yang_silent_but_fails));
    jb_set(b, o, "wrong_with_bias", jb_bool(r->yang_wrong_with_bias));
    return o;
}

static json_t *fit_json(jb *b, const ar_sbn_fit *f)
{
    json_t *o = json_object();
    jb_set(b, o, "d", jb_size(f->d));
    jb_set(b, o, "bias", jb_bool(f->bias));
    jb_set(b, o, "seed", jb_u64(f->seed));
    jb_set(b, o, "jitter", jb_real(b, f->jitter));
    jb_set(b, o, "kl_mean", jb_real(b, f->kl_mean));
    jb_set(b, o, "kl_max", jb_real(b, f->kl_max));
    jb_set(b, o, "fro_error", jb_real(b, f->fro_error));
    jb_set(b, o, "max_abs_error", jb_real(b, f->max_abs_error));
    jb_set(b, o, "start_kl_mean", jb_real(b, f->start_kl_mean));
    jb_set(b, o, "start_kept", jb_bool(f->start_kept));
    jb_set(b, o, "iterations", jb_size(f->iterations));
    jb_set(b, o, "converged", jb_bool(f->converged));
    jb_set(b, o, "grad_norm", jb_real(b, f->grad_norm));
    jb_set(b, o, "gsl_status", json_integer(f->gsl_status));
    return o;
}

int ar_sbn_result_json(const ar_sbn_result *r, unsigned flags, char **text, ar_error *err)
{
    if (r == NULL || (r->nsv > 0 && r->singular_values == NULL))
        return ar_error_set(err, AR_EINVAL, "ar_sbn_result_json: NULL result");
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    jb_set(&b, o, "contexts", jb_size(r->n_contexts));
    jb_set(&b, o, "vocab", jb_size(r->vocab));
    jb_set(&b, o, "d", jb_size(r->d));
    jb_set(&b, o, "bias", jb_bool(r->bias));
    jb_set(&b, o, "axis", json_string("row"));
    jb_set(&b, o, "tolerance", tolerance_json(&b, r));
    jb_set(&b, o, "rank_log", jb_size(r->rank_log));
    jb_set(&b, o, "rank_centred", jb_size(r->rank_centred));
    jb_set(&b, o, "rank_double_centred", jb_size(r->rank_double_centred));
    jb_set(&b, o, "ones_in_rowspace", jb_bool(r->ones_in_rowspace == 1));
    jb_set(&b, o, "required_d", jb_size(r->required_d));
    jb_set(&b, o, "sufficient", jb_bool(r->sufficient));
    jb_set(&b, o, "yang", yang_json(&b, r));
    jb_set(&b, o, "logit_error", jb_real(&b, r->logit_error));
    jb_set(&b, o, "logit_error_rel", jb_real(&b, r->logit_error_rel));
    jb_set(&b, o, "log_norm", jb_real(&b, r->log_norm));
    jb_set(&b, o, "singular_values", jb_doubles(&b, r->singular_values, r->nsv));
    jb_set(&b, o, "fit", r->fit_computed ? fit_json(&b, &r->fit) : json_null());
    return jb_dump(&b, o, "ar_sbn_result_json", text, err);
}
