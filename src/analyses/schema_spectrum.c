/* The record schema of the rank metrics of a singular spectrum, one matrix and
 * a stack (spectrum): each record's name, base, description and keys in JSON
 * order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_tolerance_fields[] = {
    {.key = "threshold", .kind = AR_SCHEMA_REAL},
    {.key = "rtol", .kind = AR_SCHEMA_REAL},
    {.key = "atol", .kind = AR_SCHEMA_REAL},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "rule", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OMIT, .fallback = "\"relative\""},
    {.key = "certain_threshold", .kind = AR_SCHEMA_ANY,
     .flags = AR_SCHEMA_OMIT, .fallback = "null"},
    {.key = "certain_rank", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OMIT, .fallback = "null"},
    {.key = "seed", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OMIT, .fallback = "null"},
    {.key = "draws", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OMIT, .fallback = "null"},
};

static const ar_schema_field f_rankmetrics_fields[] = {
    {.key = "rows", .kind = AR_SCHEMA_INT},
    {.key = "cols", .kind = AR_SCHEMA_INT},
    AR_SCHEMA_RANK_METRICS_FIELDS,
};

static const ar_schema_field f_spectrum_fields[] = {
    {.key = "index", .kind = AR_SCHEMA_INTS, .flags = AR_SCHEMA_LEADS, .fallback = "[]"},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS, .fallback = "null"},
};

static const ar_schema_field f_spectrumstack_fields[] = {
    {.key = "matrices", .kind = AR_SCHEMA_RECORDS, .record = "Spectrum"},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS},
};

const ar_schema_record ar_schema_spectrum[] = {
    {.name = "Tolerance", .base = NULL,
     .doc =
         "The tolerance block of a rank: singular values above `threshold` count.\n"
         "\n"
         "threshold\n"
         "    the cut actually used;\n"
         "rtol, atol\n"
         "    the relative and absolute tolerances (`threshold = max(atol, rtol *\n"
         "    sigma_1)`; rtol resolved from its default `max(m, n) *\n"
         "    eps(precision)` when not given; under the storage rule `rtol` is\n"
         "    `threshold / sigma_1`);\n"
         "precision\n"
         "    the storage precision of the data (`\"float64\"`, `\"float32\"`,\n"
         "    `\"float16\"`, `\"bfloat16\"`);\n"
         "rule\n"
         "    `\"relative\"` (numpy's rule: float64 data, or a given rtol/atol) or\n"
         "    `\"storage\"` (float32/float16/bfloat16 data: the cut is the\n"
         "    matrix's own rounding noise, docs/theory/spectra.md);\n"
         "certain_threshold, certain_rank\n"
         "    storage rule only (else None): a rigorous bound of the rounding\n"
         "    error's spectral norm and the number of singular values above it (a\n"
         "    lower bound of the rank of every matrix that rounds to the stored\n"
         "    one; at least 1 for a nonzero matrix);\n"
         "seed, draws\n"
         "    storage rule only: the seed and number of the Monte Carlo draws that\n"
         "    set `threshold`.",
     .fields = f_tolerance_fields,
     .nfields = AR_SCHEMA_N(f_tolerance_fields)},
    {.name = "RankMetrics", .base = NULL,
     .doc =
         "Numerical rank and effective ranks of a singular spectrum\n"
         "(docs/theory/spectra.md, sec. 2), with what was used to compute them.\n"
         "\n"
         "rows, cols\n"
         "    the shape (m, n) of the matrix the spectrum came from;\n"
         "rank\n"
         "    the numerical rank: the number of singular values above\n"
         "    `tolerance.threshold`;\n"
         "tolerance\n"
         "    a Tolerance;\n"
         "stable_rank\n"
         "    `||A||_F^2 / ||A||_2^2`;\n"
         "roy_vetterli_rank\n"
         "    `exp(H(p))` with `p_i = sigma_i / sum(sigma)`;\n"
         "participation_ratio\n"
         "    `(sum s^2)^2 / sum s^4`;\n"
         "energy_rank\n"
         "    the least k with `sum_{i<=k} s_i^2 >= energy_fraction * sum s^2`;\n"
         "energy_fraction\n"
         "    the fraction f of the energy rank;\n"
         "nuclear_rank\n"
         "    `(||A||_* / ||A||_F)^2`;\n"
         "rank_margin\n"
         "    `min(s_r / t, t / s_{r+1})` for the rank r at the threshold t: the\n"
         "    rank is r for every threshold in `[t / margin, t * margin)`\n"
         "    (`inf` when no singular value limits it; near 1, the rank hangs on\n"
         "    the tolerance).\n"
         "\n"
         "Every effective rank is 0 for an all-zero (or empty) spectrum.",
     .fields = f_rankmetrics_fields,
     .nfields = AR_SCHEMA_N(f_rankmetrics_fields)},
    {.name = "Spectrum", .base = "RankMetrics",
     .doc =
         "Singular values of one matrix with its rank metrics (every field of\n"
         "RankMetrics), and where it sits in a stack.\n"
         "\n"
         "index\n"
         "    the matrix's indices over the stack's leading axes (`()` for a\n"
         "    single matrix);\n"
         "singular_values\n"
         "    the singular values, descending, a float64 numpy array of\n"
         "    `min(rows, cols)` values.",
     .fields = f_spectrum_fields,
     .nfields = AR_SCHEMA_N(f_spectrum_fields)},
    {.name = "SpectrumStack", .base = NULL,
     .doc =
         "Spectra of a stack of matrices.\n"
         "\n"
         "matrices\n"
         "    one Spectrum per matrix, in C order over the leading axes;\n"
         "singular_values\n"
         "    all singular values, shape `leading axes + (min(rows, cols),)`.",
     .fields = f_spectrumstack_fields,
     .nfields = AR_SCHEMA_N(f_spectrumstack_fields)},
};
const size_t ar_schema_spectrum_count = AR_SCHEMA_N(ar_schema_spectrum);
