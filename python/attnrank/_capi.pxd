# Declarations of the C API that attnrank._core binds.  Only functions whose
# signatures are settled are declared here; matrix-taking functions come with
# the strided matrix views (docs/python.md, "What comes next").

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

    void ar_rank_opts_init(ar_rank_opts *opts)

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

cdef extern from "attnrank/spectrum.h" nogil:
    int ar_spectrum_svals_batch(const ar_cview *mats, size_t count, double *s,
                                size_t nthreads, size_t *failed_index)
