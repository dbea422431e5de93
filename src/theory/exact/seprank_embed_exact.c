/* Inputs of an embedded separation-rank instance over F_p
 * (docs/theory/embedding-rank.md): E (d x r), the token coordinates z and the
 * positions uniform over the whole field, templates E z reduced with FLINT's
 * nmod arithmetic (no overflow of residue products). */
#include "attnrank/seprank.h"
#include "attnrank/random.h"

#include <flint/flint.h>
#include <flint/nmod_vec.h>
#include <stdlib.h>
#include "theory/depthwidth/seprank_internal.h"

int ar_seprank_embed_mod_inputs(const ar_seprank_config *cfg, size_t prime_index, size_t m,
                                uint64_t *templates, uint64_t *offsets)
{
    if (cfg == NULL || templates == NULL || !cfg->embedding.enabled || cfg->embedding.rank == 0)
        return AR_EINVAL;
    uint64_t p = ar_seprank_prime(prime_index);
    size_t d = cfg->d, r = cfg->embedding.rank, n = cfg->n;
    uint64_t role = AR_SEPRANK_ROLE_MOD_EMBED + 3 * (uint64_t)prime_index;
    ar_rng *re = ar_rng_alloc(ar_seprank_role_seed(cfg, role));
    ar_rng *rz = ar_rng_alloc(ar_seprank_role_seed(cfg, role + 1));
    ar_rng *rp = ar_rng_alloc(ar_seprank_role_seed(cfg, role + 2));
    /* E row-major d x r, z one token after another (r residues each), so
     * the first m tokens do not depend on m. */
    mp_limb_t *e = malloc((d * r + r) * sizeof(mp_limb_t));
    int rc = AR_OK;
    if (re == NULL || rz == NULL || rp == NULL || e == NULL) {
        rc = AR_ENOMEM;
        goto done;
    }
    mp_limb_t *z = e + d * r;
    for (size_t i = 0; i < d * r; i++)
        e[i] = ar_seprank_field_uniform(re, p);
    nmod_t mod;
    nmod_init(&mod, p);
    int limbs = _nmod_vec_dot_bound_limbs((slong)r, mod);
    for (size_t t = 0; t < m; t++) {
        for (size_t j = 0; j < r; j++)
            z[j] = ar_seprank_field_uniform(rz, p);
        for (size_t i = 0; i < d; i++)
            templates[t * d + i] = _nmod_vec_dot(e + i * r, z, (slong)r, mod, limbs);
    }
    for (size_t i = 0; offsets != NULL && i < n * d; i++)
        offsets[i] = ar_seprank_field_uniform(rp, p);
done:
    ar_rng_free(re);
    ar_rng_free(rz);
    ar_rng_free(rp);
    free(e);
    return rc;
}
