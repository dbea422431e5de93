# Declarations of the C API that attnrank._core binds.  Only functions whose
# signatures are settled are declared here; matrix-taking functions come with
# the strided matrix views (docs/python.md, "What comes next").

from libc.stdint cimport uint64_t

cdef extern from "attnrank/status.h" nogil:
    enum:
        AR_OK
        AR_EINVAL
        AR_ENOMEM
        AR_ENONFINITE
        AR_ENOCONV
        AR_EIO
        AR_EFORMAT
        AR_EUNSUPPORTED
        AR_EDOMAIN
        AR_ELAPACK
        AR_ESIZE
        AR_NSTATUS
        AR_ERROR_MSG_LEN

    ctypedef struct ar_error:
        char msg[512]

    const char *ar_strerror(int status)
    int ar_error_set(ar_error *err, int status, const char *fmt, ...)

    ctypedef enum ar_option_style:
        AR_OPTION_STYLE_CLI
        AR_OPTION_STYLE_PYTHON

    char *ar_option_render(char *text, ar_option_style style)
    const char *ar_error_message(ar_error *err, int status, ar_option_style style)

cdef extern from "attnrank/version.h" nogil:
    const char *ar_version()

cdef extern from "attnrank/rank.h" nogil:
    ctypedef enum ar_precision:
        AR_PREC_F64
        AR_PREC_F32
        AR_PREC_F16
        AR_PREC_BF16

    double ar_precision_eps(ar_precision p)
    const char *ar_precision_name(ar_precision p)
    int ar_precision_parse(const char *text, ar_precision *p)

    ctypedef struct ar_rank_opts:
        double rtol
        double atol
        ar_precision precision
        double energy_fraction
        uint64_t seed

    void ar_rank_opts_init(ar_rank_opts *opts)

    ctypedef enum ar_rank_rule:
        AR_RANK_RULE_RELATIVE
        AR_RANK_RULE_STORAGE

    const char *ar_rank_rule_name(ar_rank_rule rule)

    ctypedef struct ar_rank_metrics:
        size_t m, n
        size_t rank
        double threshold
        double rtol, atol
        ar_precision precision
        double stable_rank
        double roy_vetterli_rank
        double participation_ratio
        size_t energy_rank
        double energy_fraction
        double nuclear_rank
        ar_rank_rule rule
        size_t certain_rank
        double certain_threshold
        uint64_t seed
        size_t draws

    int ar_rank_metrics_compute(const double *s, size_t k, size_t m, size_t n,
                                const ar_rank_opts *opts, ar_rank_metrics *out)

cdef extern from "attnrank/matrix.h" nogil:
    ctypedef struct ar_cview:
        const double *data
        size_t rows, cols
        size_t row_stride
        size_t col_stride

    int ar_cview_init(ar_cview *v, const double *data, size_t rows, size_t cols,
                      size_t row_stride, size_t col_stride)

cdef extern from "attnrank/rank.h" nogil:
    int ar_rank_metrics_stored(ar_cview a, const double *s, size_t k, const ar_rank_opts *opts,
                               ar_rank_metrics *out)

cdef extern from "attnrank/spectrum.h" nogil:
    int ar_spectrum_svals_batch(const ar_cview *mats, size_t count, double *s,
                                size_t nthreads, size_t *failed_index)

# ---- represent, heads, params (attnrank._represent.pxi) -------------------

from libc.stdint cimport uint64_t

cdef extern from "attnrank/matrix.h" nogil:
    ctypedef struct ar_matrix:
        size_t rows, cols, ld
        double *data

    ctypedef struct ar_view:
        double *data
        size_t rows, cols
        size_t row_stride
        size_t col_stride

    void ar_matrix_free(ar_matrix *m)
    ar_matrix ar_matrix_empty()
    int ar_matrix_clone(ar_matrix *dst, ar_cview src)
    ar_cview ar_matrix_cview(const ar_matrix *m)
    ar_view ar_matrix_view(ar_matrix *m)

cdef extern from "attnrank/attention.h" nogil:
    ctypedef enum ar_axis:
        AR_AXIS_COL
        AR_AXIS_ROW
    const char *ar_axis_name(ar_axis axis)
    int ar_axis_parse(const char *text, ar_axis *axis)
    int ar_axis_infer_stack(const ar_cview *maps, size_t count, ar_precision precision,
                            double sum_tol, ar_axis *axis, size_t *slice, ar_error *err)
    ctypedef enum ar_head_kind:
        AR_HEADS_MULTI
        AR_HEADS_FIXED

cdef extern from "attnrank/model_config.h" nogil:
    ctypedef enum ar_config_flag:
        AR_CONFIG_ABSENT
    ctypedef struct ar_model_config:
        size_t hidden_size, heads, kv_heads, head_dim, layers, max_positions
        int rotary
        char model_type[64]
        char architecture[128]
        size_t sliding_window
    int ar_model_config_parse(const char *text, size_t len, const char *name,
                              ar_model_config *cfg, ar_error *err)
    int ar_model_config_read(const char *path, ar_model_config *cfg, ar_error *err)
    int ar_model_config_layer_sizes(const ar_model_config *cfg, const char *name, size_t *d,
                                    size_t *heads, size_t *n, size_t *head_size, ar_error *err)

cdef extern from "attnrank/mask.h" nogil:
    ctypedef enum ar_mask_kind:
        AR_MASK_NONE
        AR_MASK_CAUSAL
        AR_MASK_WINDOW
        AR_MASK_BAND
        AR_MASK_PREFIX
        AR_MASK_SINK_WINDOW
        AR_MASK_DOCUMENTS
        AR_MASK_PATTERN

    ctypedef struct ar_mask:
        ar_mask_kind kind
        size_t w, p, sinks, ndocs
        size_t *lengths
        size_t n
        unsigned char *allowed

    ar_mask ar_mask_none()
    void ar_mask_free(ar_mask *mask)
    int ar_mask_copy(ar_mask *dst, const ar_mask *src)
    const char *ar_mask_kind_name(ar_mask_kind kind)
    int ar_mask_parse(const char *text, ar_mask *mask, ar_error *err)
    void ar_mask_format(const ar_mask *mask, char *buf, size_t len)
    int ar_mask_check_size(const ar_mask *mask, size_t n, ar_error *err)
    int ar_mask_from_pattern(ar_mask *mask, const unsigned char *allowed, size_t n,
                             ar_error *err)
    void ar_mask_simplify(ar_mask *mask)
    void ar_mask_syntax_list(char *buf, size_t len, int any_length_only)
    int ar_mask_fixes_length(const ar_mask *mask)

    enum:
        AR_MASK_MAX_PARAMS
    ctypedef struct ar_mask_param:
        const char *name
        size_t value
        const size_t *values
        size_t count
    size_t ar_mask_params(const ar_mask *mask, ar_mask_param *params)

    ctypedef enum ar_generic_status:
        AR_GENERIC_PROVED
    const char *ar_generic_status_name(ar_generic_status status)

    ctypedef struct ar_mask_generic:
        size_t n, value
        ar_generic_status status
        size_t lower, worst_lower, worst_upper
        const char *formula

    enum:
        AR_MODEL_MAX_KINDS

    ctypedef struct ar_model_masks:
        size_t count
        char reason[320]

    int ar_model_masks_from_config(const ar_model_config *cfg, ar_model_masks *masks,
                                   ar_error *err)

cdef extern from "attnrank/bottleneck.h" nogil:
    ctypedef struct ar_smooth_report:
        double eps
        size_t zeros
        double min_before, min_after, max_change

    int ar_bottleneck_smooth(ar_view p, ar_axis axis, double eps, ar_smooth_report *rep)

    ctypedef struct ar_represent_opts:
        ar_axis axis
        ar_precision precision
        double rtol, atol, sum_tol, feasibility_tol
        ar_precision x_precision
        double x_rtol, smooth

    void ar_represent_opts_init(ar_represent_opts *opts)

    ctypedef struct ar_represent_result:
        ar_axis axis
        size_t n, d
        int x_given
        ar_precision precision
        double rtol, atol, threshold, log_norm2, log_norm_fro, sum_tol, max_sum_defect
        int smoothed
        ar_smooth_report smooth
        size_t x_rank
        double x_threshold, ones_residual
        int shift_forced
        size_t centred_rank
        int feasible
        double residual_key, residual_query, residual_rel, feasibility_tol
        size_t min_head_size
        int storage_rule
        double certain_threshold
        size_t certain_rank
        const double *centred_svals

    ctypedef struct ar_represent_workspace:
        pass

    int ar_represent_workspace_alloc(ar_represent_workspace **ws, size_t n)
    void ar_represent_workspace_free(ar_represent_workspace *ws)
    int ar_represent_analyze(ar_represent_workspace *ws, ar_cview p, const ar_cview *x,
                             const ar_represent_opts *opts, ar_represent_result *res,
                             ar_error *err)
    double ar_represent_logit_error(const ar_represent_result *res, size_t k)
    double ar_represent_logit_error_rel(const ar_represent_result *res, size_t k)

    ctypedef struct ar_certificate:
        ar_axis axis
        size_t head_size, d
        ar_matrix wq, wk
        double logit_max_abs, max_abs, kl_mean, kl_max
        double rounding_ratio

    enum:
        AR_HEAD_SIZE_MIN
    int ar_represent_certificate(ar_represent_workspace *ws, size_t head_size,
                                 ar_certificate *cert, ar_error *err)
    void ar_certificate_free(ar_certificate *cert)

    ctypedef enum ar_fit_method:
        AR_FIT_LBFGS
    ctypedef enum ar_fit_stop:
        AR_FIT_STOP_START
    const char *ar_fit_stop_name(ar_fit_stop stop)
    const char *ar_fit_method_name(ar_fit_method method)

    ctypedef struct ar_fit_opts:
        ar_axis axis
        uint64_t seed
        size_t max_iter
        ar_precision precision
        double sum_tol

    void ar_fit_opts_init(ar_fit_opts *opts)

    ctypedef struct ar_fit_result:
        size_t n, k
        ar_axis axis
        uint64_t seed
        double jitter, kl_mean, kl_max, fro_error, max_abs_error, start_kl_mean
        int start_kept
        size_t iterations
        int converged
        ar_fit_method method
        ar_fit_stop stop

    ctypedef struct ar_fit_workspace:
        pass
    int ar_fit_workspace_alloc(ar_fit_workspace **ws, size_t n)
    void ar_fit_workspace_free(ar_fit_workspace *ws)
    int ar_fit_lowrank(ar_fit_workspace *ws, ar_cview p, size_t k, const ar_fit_opts *opts,
                       ar_fit_result *res, ar_error *err)

    ctypedef enum ar_target_family:
        AR_TARGET_DIRICHLET
    const char *ar_target_family_name(ar_target_family family)

    ctypedef struct ar_family_error:
        ar_target_family family
        size_t samples, head_size
        double min_head_size_mean
        int logit_computed
        double logit_error, logit_error_rel
        int fit_computed
        double kl_mean, kl_max, max_abs_error

    enum:
        AR_HEADS_NFAMILIES

    ctypedef struct ar_head_config:
        ar_head_kind kind
        int defined
        size_t dp, logit_rank_bound
        int bottleneck, bottleneck_paper
        size_t rank_deficit, max_seq_len
        int unbounded
        ar_generic_status status
        uint64_t attention_params
        ar_family_error errors[3]

    ctypedef enum ar_heads_errors:
        AR_HEADS_ERRORS_SKIP
        AR_HEADS_ERRORS_ESTIMATE

    ctypedef struct ar_bottleneck_heads_opts:
        size_t head_size, samples
        uint64_t seed
        ar_heads_errors errors
        const ar_mask *mask

    void ar_bottleneck_heads_opts_init(ar_bottleneck_heads_opts *opts)

    ctypedef struct ar_bottleneck_heads_report:
        size_t d, h, n
        int head_size_given
        size_t needed_head_size
        int masked
        ar_mask_generic generic
        size_t max_heads_exact, max_heads_paper
        ar_head_config standard, fixed
        uint64_t seed
        size_t samples, logit_cap, fit_cap, fit_max_iter
        int errors_capped

    int ar_bottleneck_heads_analyze(size_t d, size_t h, size_t n,
                                    const ar_bottleneck_heads_opts *opts,
                                    ar_bottleneck_heads_report *rep, ar_error *err)

    ctypedef struct ar_bert_config:
        size_t d, h, dp, layers, ffn, vocab, positions, token_types

    void ar_bert_config_init(ar_bert_config *cfg, size_t d, size_t h, size_t dp)

    ctypedef struct ar_param_count:
        uint64_t embeddings, attention, ffn, layernorms, per_layer, encoder, pooler
        uint64_t mlm_head, total

    int ar_bert_params(const ar_bert_config *cfg, ar_param_count *out)

    ctypedef struct ar_paper_config:
        const char *table
        size_t d, h, dp
        double printed

    size_t ar_paper_configs(const ar_paper_config **configs)

cdef extern from "attnrank/masked.h" nogil:
    ctypedef struct ar_masked_opts:
        ar_axis axis
        ar_precision precision
        double tau, accuracy, sum_tol, smooth
        ar_precision x_precision
        double x_rtol
        uint64_t seed
        size_t extra_rank, polish_iter
        double verify_seconds

    void ar_masked_opts_init(ar_masked_opts *opts)

    ctypedef enum ar_masked_method:
        AR_MASKED_STAIRCASE
        AR_MASKED_BOUNDS

    ctypedef struct ar_masked_result:
        ar_axis axis
        size_t n, d
        int x_given
        size_t x_rank
        double x_threshold
        const ar_mask *mask
        int mask_inferred
        ar_precision precision
        double tau, accuracy, sum_tol, max_sum_defect
        int smoothed
        ar_smooth_report smooth
        double log_max_abs
        ar_masked_method method
        size_t blocks
        int exact
        size_t min_head_size, lower, upper
        int certified
        size_t block_lower
        double min_innovative, max_not_innovative
        int generic_known
        ar_mask_generic generic
        int storage_rule
        double log_rounding
        double rounding_ratio

    ctypedef struct ar_masked_workspace:
        pass

    int ar_masked_workspace_alloc(ar_masked_workspace **ws, size_t n)
    void ar_masked_workspace_free(ar_masked_workspace *ws)
    int ar_masked_analyze(ar_masked_workspace *ws, ar_cview p, const ar_cview *x,
                          const ar_mask *mask, const ar_masked_opts *opts,
                          ar_masked_result *res, ar_error *err)
    int ar_masked_certificate(ar_masked_workspace *ws, size_t head_size,
                              ar_certificate *cert, ar_error *err)
    int ar_masked_logit_error_lower(const ar_masked_workspace *ws, size_t k, double *bound)
    int ar_masked_fit(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, ar_error *err)

# ---- softmax bottleneck, weights (attnrank._softmax_bottleneck.pxi, _weights.pxi) ----

cdef extern from "attnrank/softmax_bottleneck.h" nogil:
    ctypedef struct ar_sbn_opts:
        size_t d
        int bias
        ar_rank_opts rank
        double sum_tol
        int fit
        uint64_t seed
        double jitter
        size_t max_iter
        double grad_tol

    void ar_sbn_opts_init(ar_sbn_opts *opts)

    ctypedef struct ar_sbn_fit:
        size_t d
        int bias
        uint64_t seed
        double jitter
        double kl_mean, kl_max, fro_error, max_abs_error, start_kl_mean
        int start_kept
        size_t iterations
        int converged
        double grad_norm
        int gsl_status

    ctypedef struct ar_sbn_result:
        size_t n_contexts, vocab, d
        int bias
        ar_precision precision
        double rtol, atol, threshold, sum_tol, max_row_defect, log_norm
        size_t rank_log, rank_centred, rank_double_centred
        int ones_in_rowspace
        size_t required_d
        int sufficient, yang_fails, yang_silent_but_fails, yang_wrong_with_bias
        size_t nsv
        double *singular_values
        double centred_norm, logit_error, logit_error_rel
        int fit_computed
        ar_sbn_fit fit

    void ar_sbn_result_free(ar_sbn_result *r)
    double ar_sbn_logit_error(const ar_sbn_result *r, size_t k)

    ctypedef struct ar_sbn_workspace:
        pass

    int ar_sbn_workspace_alloc(ar_sbn_workspace **ws, size_t n_contexts, size_t vocab)
    void ar_sbn_workspace_free(ar_sbn_workspace *ws)
    int ar_sbn_analyze(ar_sbn_workspace *ws, ar_cview p, ar_precision prec,
                       const ar_sbn_opts *opts, ar_sbn_result *r, ar_error *err)

cdef extern from "attnrank/status.h" nogil:
    int ar_error_printable(ar_error *err, int rc)

cdef extern from "attnrank/safetensors.h" nogil:
    ctypedef struct ar_safetensors:
        pass
    enum: AR_ST_MAX_DIMS
    ctypedef enum ar_st_dtype:
        AR_ST_F64
        AR_ST_F32
        AR_ST_F16
        AR_ST_BF16
        AR_ST_BOOL
        AR_ST_U8
        AR_ST_I8
        AR_ST_F8_E4M3
        AR_ST_F8_E5M2
        AR_ST_I16
        AR_ST_U16
        AR_ST_I32
        AR_ST_U32
        AR_ST_I64
        AR_ST_U64
    ctypedef struct ar_st_tensor_desc:
        const char *name
        ar_st_dtype dtype
        size_t ndim
        size_t shape[AR_ST_MAX_DIMS]
        const void *data
    int ar_st_dtype_parse(const char *text, ar_st_dtype *dtype)
    int ar_safetensors_from_tensors(ar_safetensors **st, const ar_st_tensor_desc *tensors,
                                    size_t count, const char *name, ar_error *err)

    int ar_safetensors_open(ar_safetensors **st, const char *path, ar_error *err)
    void ar_safetensors_close(ar_safetensors *st)
    const char *ar_safetensors_dir(const ar_safetensors *st)

cdef extern from "attnrank/weights.h" nogil:
    ctypedef enum ar_weights_family:
        AR_WF_BERT
        AR_WF_GPT2
        AR_WF_LLAMA
        AR_WF_CUSTOM

    const char *ar_weights_family_name(ar_weights_family family)

    ctypedef enum ar_weights_rule:
        AR_WRULE_NOISE
        AR_WRULE_GIVEN

    const char *ar_weights_rule_name(ar_weights_rule rule)
    double ar_weights_unit_roundoff(ar_precision p)
    double ar_weights_subnormal_abs(ar_precision p)

    ctypedef struct ar_weights_noise:
        double unit_roundoff, subnormal_abs, norm_a, norm_b, fro_a, fro_b, err_a, err_b
        double arith_floor, tau_cert
        size_t certain_rank
        uint64_t seed
        size_t draws
        double factor, draw_max, draw_min, tau_noise
        int capped
        size_t default_rank

    ctypedef void (*ar_weights_progress_fn)(void *ctx, size_t done, size_t total, size_t layer)

    ctypedef struct ar_weights_opts:
        size_t n
        int layer_range
        size_t layer_first, layer_last
        const char *q_pattern
        const char *k_pattern
        ar_weights_rule rule
        double rtol, atol
        uint64_t seed
        size_t noise_draws
        double noise_factor, energy_fraction
        size_t heads, head_dim, kv_heads, context
        int precision_given
        ar_precision precision
        const ar_mask *mask
        ar_weights_progress_fn progress
        void *progress_ctx

    void ar_weights_opts_init(ar_weights_opts *opts)

    ctypedef struct ar_qk_head:
        size_t layer, head, kv_head
        ar_precision precision
        double *singular_values
        ar_rank_metrics metrics
        ar_weights_noise noise
        size_t reach_context
        int bottleneck_context
        size_t reach_n
        int bottleneck_n

    ctypedef struct ar_weights_verdict:
        int defined
        size_t n
        ar_head_config model, fixed
        size_t max_heads_exact, heads_bottlenecked, needed
        ar_mask_generic generic
        size_t kind

    ctypedef struct ar_weights_report:
        ar_weights_family family
        char *q_pattern
        char *k_pattern
        int fused
        size_t nfiles, ntensors
        int config_found
        ar_model_config config
        size_t d, heads, kv_heads, head_dim, context
        int rotary, q_bias, k_bias
        size_t layers_found, nlayers
        size_t *layer_index
        char **q_names
        char **k_names
        ar_weights_rule rule
        int rtol_given
        double rtol, atol
        uint64_t seed
        size_t noise_draws
        double noise_factor
        ar_precision precision
        double energy_fraction
        ar_qk_head *qk
        ar_weights_verdict at_context, at_n
        ar_model_masks masks
        size_t rank_min, rank_max
        double rank_mean, roy_vetterli_mean, stable_rank_mean
        size_t rank_deficient
        size_t certain_rank_min, certain_rank_max, default_rank_min, default_rank_max
        double certain_rank_mean, default_rank_mean

    int ar_weights_analyze_model(const ar_safetensors *st, const ar_model_config *cfg,
                                 const ar_weights_opts *opts, ar_weights_report *rep,
                                 ar_error *err)
    void ar_weights_report_free(ar_weights_report *rep)
    const ar_qk_head *ar_weights_head(const ar_weights_report *rep, size_t l, size_t k)

# ---- seprank, depthwidth, collapse (_seprank.pxi, _depthwidth.pxi, _collapse.pxi) ----

cdef extern from "attnrank/seprank.h" nogil:
    enum:
        AR_SEPRANK_MAX_POSITIONS
        AR_SEPRANK_DEFAULT_MAX_DIM
        AR_SEPRANK_MAX_PRIMES

    ctypedef struct ar_partition:
        size_t n, na, nb
        size_t a[32]
        size_t b[32]

    int ar_partition_parse(const char *text, size_t n, ar_partition *p, ar_error *err)
    void ar_partition_format(const ar_partition *p, char *buf, size_t len)

    ctypedef enum ar_seprank_regime:
        AR_REGIME_DOUBLE_EXPONENTIAL
        AR_REGIME_LINEAR
    const char *ar_seprank_regime_name(ar_seprank_regime r)

    ctypedef enum ar_seprank_readout:
        AR_SEPRANK_READOUT_RANDOM
        AR_SEPRANK_READOUT_ENTRY

    ctypedef enum ar_seprank_rational:
        AR_SEPRANK_RATIONAL_AUTO
        AR_SEPRANK_RATIONAL_OFF
        AR_SEPRANK_RATIONAL_ON

    ctypedef struct ar_seprank_config:
        size_t layers, d, heads, n
        int residual
        size_t position
        ar_seprank_readout readout
        size_t entry
        ar_partition partition
        size_t templates, max_dim
        uint64_t seed
        int do_float, do_exact
        size_t nprimes
        ar_seprank_rational rational
        double rtol, atol
        size_t threads
        double max_bytes

    void ar_seprank_config_init(ar_seprank_config *cfg)

    ctypedef struct ar_seprank_result:
        ar_seprank_config config
        uint64_t seed
        size_t rows, cols
        int have_float
        size_t float_rank
        double threshold, rtol, atol
        double *singular_values
        size_t nsv
        int have_exact
        size_t exact_rank, nprimes
        uint64_t primes[3]
        size_t prime_ranks[3]
        int primes_agree, have_rational
        size_t rational_rank
        int float_undercounts, saturated
        double bound_log_monomial, bound_log_split, bound_log_parity, bound_log, l_th
        ar_seprank_regime regime

    int ar_seprank_run(const ar_seprank_config *cfg, ar_seprank_result *res, ar_error *err)
    void ar_seprank_result_free(ar_seprank_result *res)

cdef extern from "attnrank/depthwidth.h" nogil:
    const double AR_DW_DEFAULT_TOLERANCE

    ctypedef struct ar_dw_law:
        double intercept, slope, params_coeff

    ar_dw_law ar_dw_law_paper()
    int ar_dw_transition_d(const ar_dw_law *law, double layers, double *d)
    int ar_dw_transition_layers(const ar_dw_law *law, double d, double *layers)
    double ar_dw_l_th(double d)

    ctypedef struct ar_dw_optimum:
        ar_dw_law law
        double params, layers, d, l_th

    int ar_dw_optimal(const ar_dw_law *law, double params, ar_dw_optimum *out)

    ctypedef struct ar_dw_verdict:
        ar_dw_law law
        double layers, d, params, transition_layers, transition_d
        double optimal_layers, optimal_d, depth_ratio, tolerance, l_th
        int depth_efficient, near_optimal

    int ar_dw_verdict_of(const ar_dw_law *law, double layers, double d, double tolerance,
                         ar_dw_verdict *out)
    const char *ar_dw_verdict_name(const ar_dw_verdict *v)

    ctypedef struct ar_dw_fit:
        size_t npoints
        int weighted
        double intercept, slope, intercept_err, slope_err, cov, r2, chi2, chi2_red

    int ar_dw_fit_table(ar_cview points, ar_dw_fit *out, ar_error *err)

cdef extern from "attnrank/collapse.h" nogil:
    ctypedef struct ar_collapse_norms:
        double norm_fro, res_fro, rel_res_fro, norm_1inf, res_1inf, rel_res_1inf

    ctypedef struct ar_collapse_opts:
        size_t n, d, heads, layers
        int skip, mlp
        size_t mlp_width
        uint64_t seed
        ar_rank_opts rank
        double fit_floor
        int have_bound
        double gamma, beta, max_bytes

    void ar_collapse_opts_init(ar_collapse_opts *opts)
    int ar_collapse_check(const ar_collapse_opts *opts, ar_error *err)

    ctypedef struct ar_collapse_depth:
        size_t depth
        ar_collapse_norms norms
        ar_rank_metrics rank
        double *singular_values
        double ratio, bound_log

    ctypedef struct ar_collapse_result:
        ar_collapse_opts opts
        size_t head_size, nsv, count
        ar_collapse_depth *depths
        size_t fit_last
        double geometric_slope, geometric_factor, order, order_log_c
        size_t order_pairs
        double worst_bound_margin

    void ar_collapse_result_free(ar_collapse_result *r)
    int ar_collapse_run(const ar_collapse_opts *opts, ar_collapse_result *r, ar_error *err)

# ---- check (attnrank._check.pxi) -------------------------------------------

cdef extern from "attnrank/depthwidth.h" nogil:
    ctypedef struct ar_dw_law:
        double intercept
        double slope
        double params_coeff
    ar_dw_law ar_dw_law_paper()
    ctypedef struct ar_dw_fit:
        size_t npoints
        int weighted
        double intercept, slope
        double intercept_err, slope_err
        double cov
        double r2
        double chi2, chi2_red
    int ar_dw_fit_table(ar_cview points, ar_dw_fit *out, ar_error *err)

cdef extern from "attnrank/check.h" nogil:
    ctypedef enum ar_check_condition:
        AR_CHECK_NO_BOTTLENECK
        AR_CHECK_DEPTH_EFFICIENT
        AR_CHECK_NEAR_OPTIMAL
        AR_CHECK_NCONDITIONS
    ctypedef enum ar_check_status:
        AR_CHECK_PROVED
        AR_CHECK_VERIFIED
        AR_CHECK_CONJECTURAL
        AR_CHECK_EMPIRICAL
    const char *ar_check_condition_name(ar_check_condition cond)
    const char *ar_check_status_name(ar_check_status status)
    int ar_check_require_parse(const char *text, unsigned *require, ar_error *err)
    ctypedef struct ar_check_opts:
        unsigned require
        size_t head_size
        size_t layers
        const ar_mask *mask
        const char *mask_text
        int strict
        const ar_dw_law *law
    void ar_check_opts_init(ar_check_opts *opts)
    ctypedef struct ar_check_verdict:
        ar_check_condition condition
        int holds
        ar_check_status status
        char why[768]
    ctypedef struct ar_check_result:
        size_t d, heads, n, layers
        size_t head_size
        size_t count
        ar_check_verdict verdicts[3]
        size_t failed
        int uses_law
    int ar_check_evaluate(size_t d, size_t heads, size_t n, const ar_check_opts *opts,
                          ar_check_result *out, ar_error *err)

# ---- head scores (attnrank._head_scores.pxi) -------------------------------

from libc.stdint cimport int64_t

cdef extern from "attnrank/head_scores.h" nogil:
    ctypedef enum ar_head_score:
        AR_HEAD_SCORE_PREVIOUS_TOKEN
        AR_HEAD_SCORE_FIRST_TOKEN
        AR_HEAD_SCORE_DIAGONAL
        AR_HEAD_SCORE_INDUCTION
        AR_HEAD_SCORE_DUPLICATE_TOKEN
        AR_HEAD_NSCORES
    const char *ar_head_score_name(ar_head_score score)
    ctypedef enum ar_head_targets:
        AR_HEAD_TARGETS_NONE
        AR_HEAD_TARGETS_TOKENS
        AR_HEAD_TARGETS_PERIOD
    const char *ar_head_targets_name(ar_head_targets targets)
    ctypedef struct ar_head_scores_opts:
        ar_head_targets targets
        const int64_t *tokens
        size_t n_tokens
        size_t period
    void ar_head_scores_opts_init(ar_head_scores_opts *opts)
    ctypedef struct ar_head_scores:
        size_t n
        ar_head_targets targets
        double previous_token
        double first_token
        double diagonal
        double induction
        double duplicate_token
        size_t previous_token_queries
        size_t induction_queries
        unsigned defined
    int ar_head_scores_compute(ar_cview p, ar_axis axis, const ar_head_scores_opts *opts,
                               ar_head_scores *out, ar_error *err)

# ---- represent on a stack (attnrank._represent.pxi) ------------------------

cdef extern from "attnrank/represent_stack.h" nogil:
    ctypedef void (*ar_represent_stack_progress_fn)(void *ctx, size_t done, size_t total)
    ctypedef struct ar_represent_stack_opts:
        ar_represent_opts represent
        ar_masked_opts masked
        const ar_mask *mask
        int infer_mask
        int head_size_given
        size_t head_size
        ar_represent_stack_progress_fn progress
        void *progress_ctx
    void ar_represent_stack_opts_init(ar_represent_stack_opts *opts)
    ctypedef struct ar_represent_stack_slice:
        size_t lower
        size_t upper
        int exact
        int certified
        char mask[64]
        int mask_inferred
        int representable
    ctypedef struct ar_represent_stack_result:
        size_t count
        ar_represent_stack_slice *slices
        size_t exact
        size_t max
        size_t median
        size_t failed
        size_t failed_slice
    int ar_represent_stack_run(const ar_cview *maps, size_t count,
                               const ar_represent_stack_opts *opts,
                               ar_represent_stack_result *out, ar_error *err)
    void ar_represent_stack_result_free(ar_represent_stack_result *out)
