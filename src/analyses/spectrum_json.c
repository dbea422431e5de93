/* The JSON record of one analysed matrix (ar_spectrum_matrix_json): an
 * entry of `attnrank spectrum --json`'s "matrices" and what attnrank.Spectrum
 * is built from. */
#include "attnrank/json.h"

#include "json_build.h"

int ar_spectrum_matrix_json(const ar_rank_metrics *m, const size_t *index, size_t nindex,
                            const double *s, size_t k, long expected_rank, unsigned flags,
                            char **text, ar_error *err)
{
    if (m == NULL || (nindex > 0 && index == NULL) || (k > 0 && s == NULL))
        return ar_error_set(err, AR_EINVAL, "ar_spectrum_matrix_json: NULL argument");
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    json_t *idx = json_array();
    for (size_t i = 0; i < nindex; i++)
        jb_append(&b, idx, jb_size(index[i]));
    jb_set(&b, o, "index", idx);
    jb_set(&b, o, "rows", jb_size(m->m));
    jb_set(&b, o, "cols", jb_size(m->n));
    jb_rank_metrics_into(&b, o, m);
    jb_set(&b, o, "singular_values", jb_doubles(&b, s, k));
    if (expected_rank >= 0)
        jb_set(&b, o, "expected_rank", json_integer((json_int_t)expected_rank));
    return jb_dump(&b, o, "ar_spectrum_matrix_json", text, err);
}
