/* Exact side of the separation-rank measurement: the network evaluated
 * entirely over F_p with FLINT's nmod arithmetic (products of two residues
 * below 2^62 never overflow: FLINT reduces double-word products with a
 * precomputed inverse), its grid tensor, rank modulo p (nmod_mat_lu), and a
 * rational check with fmpz arithmetic and fmpz_mat_rank on small cases.
 * FLINT aborts when an allocation fails: every FLINT matrix or vector below
 * is preceded by ar_seprank_flint_admit (seprank_memory.c). */
#include "attnrank/seprank.h"
#include "attnrank/random.h"

#include <flint/flint.h>
#include <flint/fmpz.h>
#include <flint/fmpz_mat.h>
#include <flint/nmod_mat.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/random_internal.h"
#include "theory/depthwidth/seprank_internal.h"

/* Residues are uint64_t in the public header and mp_limb_t in FLINT. */
_Static_assert(sizeof(uint64_t) == sizeof(mp_limb_t), "mp_limb_t must be 64-bit");

uint64_t ar_seprank_prime(size_t k)
{
    /* Walk down from 2^62 with n_nextprime on disjoint windows: prime k is
     * the first prime above 2^62 - (k + 1) 2^32.  Deterministic, distinct. */
    if (k >= 16)
        return 0;
    ulong start = (UWORD(1) << 62) - (ulong)(k + 1) * (UWORD(1) << 32);
    return (uint64_t)n_nextprime(start, 1);
}

uint64_t ar_seprank_field_uniform(ar_rng *rng, uint64_t p)
{
    if (rng == NULL || p == 0)
        return 0;
    /* Largest multiple of p that fits in 64 bits: reject above it. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % p + 1) % p;
    for (;;) {
        uint64_t hi = (uint64_t)ar_rng_u64(rng) & 0xffffffffULL;
        uint64_t lo = (uint64_t)ar_rng_u64(rng) & 0xffffffffULL;
        uint64_t x = (hi << 32) | lo;
        if (x <= limit)
            return x % p;
    }
}

/* ------------------------------------------------------------------ */
/* modular network                                                     */

int ar_san_mod_alloc(ar_san_mod *net, size_t layers, size_t d, size_t heads, size_t n,
                     int residual, uint64_t p, ar_error *err)
{
    if (net == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(net, 0, sizeof *net);
    if (layers == 0 || d == 0 || heads == 0 || d % heads != 0 || n == 0 ||
        n > AR_SEPRANK_MAX_POSITIONS || layers > 64 || d > 65536 || p < 3 ||
        p >= (UINT64_C(1) << 63) || !n_is_prime(p))
        return ar_error_set(err, AR_EINVAL,
                            "network over F_p: sizes out of range or p no odd prime below 2^63");
    net->w = calloc(layers * 4 * d * d, sizeof(uint64_t));
    net->readout = calloc(d, sizeof(uint64_t));
    if (net->w == NULL || net->readout == NULL) {
        free(net->w);
        free(net->readout);
        memset(net, 0, sizeof *net);
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    net->layers = layers;
    net->d = d;
    net->heads = heads;
    net->dp = d / heads;
    net->n = n;
    net->residual = residual ? 1 : 0;
    net->p = p;
    net->readout[0] = 1;
    return AR_OK;
}

void ar_san_mod_free(ar_san_mod *net)
{
    if (net == NULL)
        return;
    free(net->w);
    free(net->readout);
    memset(net, 0, sizeof *net);
}

void ar_san_mod_randomize(ar_san_mod *net, ar_rng *rng)
{
    if (net == NULL || rng == NULL || net->w == NULL)
        return;
    size_t count = net->layers * 4 * net->d * net->d;
    for (size_t i = 0; i < count; i++)
        net->w[i] = ar_seprank_field_uniform(rng, net->p);
    for (size_t i = 0; i < net->d; i++)
        net->readout[i] = ar_seprank_field_uniform(rng, net->p);
}

int ar_san_mod_set_entry(ar_san_mod *net, size_t position, size_t entry, ar_error *err)
{
    if (net == NULL || net->w == NULL || position >= net->n || entry >= net->d)
        return ar_error_set(err, AR_EINVAL,
                            "network: NULL, empty, or position or entry out of range");
    memset(net->readout, 0, net->d * sizeof(uint64_t));
    net->readout[entry] = 1;
    net->position = position;
    return AR_OK;
}

uint64_t *ar_san_mod_weight(ar_san_mod *net, size_t l, ar_san_weight which, size_t row,
                             size_t col)
{
    if (net == NULL || l >= net->layers || (int)which < 0 || (int)which > 3 || row >= net->d ||
        col >= net->d)
        return NULL;
    return net->w + (((l * 4 + (size_t)which) * net->d + row) * net->d + col);
}

static const mp_limb_t *wmat(const ar_san_mod *net, size_t l, int which)
{
    return (const mp_limb_t *)net->w + (l * 4 + (size_t)which) * net->d * net->d;
}

/* Scratch of one modular evaluation (allocated once per thread). */
typedef struct mod_ws {
    mp_limb_t *buf, *q, *k, *v, *u, *y, *y2, *ro;
    nmod_t mod;
    int limbs_d, limbs_dp;   /* FLINT dot-product accumulator sizes */
} mod_ws;

static int mod_ws_alloc(mod_ws *ws, const ar_san_mod *net)
{
    size_t d = net->d, n = net->n;
    ws->buf = calloc(6 * d * n + d, sizeof(mp_limb_t));
    if (ws->buf == NULL)
        return AR_ENOMEM;
    ws->q = ws->buf;
    ws->k = ws->buf + d * n;
    ws->v = ws->buf + 2 * d * n;
    ws->u = ws->buf + 3 * d * n;
    ws->y = ws->buf + 4 * d * n;
    ws->y2 = ws->buf + 5 * d * n;
    ws->ro = ws->buf + 6 * d * n;
    nmod_init(&ws->mod, net->p);
    ws->limbs_d = _nmod_vec_dot_bound_limbs((slong)d, ws->mod);
    ws->limbs_dp = _nmod_vec_dot_bound_limbs((slong)net->dp, ws->mod);
    return AR_OK;
}

static void mod_ws_free(mod_ws *ws)
{
    free(ws->buf);
    memset(ws, 0, sizeof *ws);
}

/* out = W x over F_p, W row-major d x d. */
static void matvec_mod(const mp_limb_t *w, const mp_limb_t *x, mp_limb_t *out, size_t d,
                       const mod_ws *ws)
{
    for (size_t r = 0; r < d; r++)
        out[r] = _nmod_vec_dot(w + r * d, x, (slong)d, ws->mod, ws->limbs_d);
}

static void attend_mod(const ar_san_mod *net, const mod_ws *ws, size_t i)
{
    size_t d = net->d, dp = net->dp;
    mp_limb_t *ui = ws->u + i * d;
    for (size_t r = 0; r < d; r++)
        ui[r] = 0;
    for (size_t h = 0; h < net->heads; h++) {
        size_t off = h * dp;
        for (size_t j = 0; j < net->n; j++) {
            mp_limb_t s = _nmod_vec_dot(ws->q + i * d + off, ws->k + j * d + off, (slong)dp,
                                        ws->mod, ws->limbs_dp);
            const mp_limb_t *vj = ws->v + j * d + off;
            for (size_t t = 0; t < dp; t++)
                ui[off + t] = nmod_add(ui[off + t], nmod_mul(s, vj[t], ws->mod), ws->mod);
        }
    }
}

/* ro = r^T W_O of the last layer. */
static void mod_readout_through_wo(const ar_san_mod *net, mod_ws *ws)
{
    const mp_limb_t *wo = wmat(net, net->layers - 1, 3);
    size_t d = net->d;
    for (size_t c = 0; c < d; c++) {
        mp_limb_t s = 0;
        for (size_t r = 0; r < d; r++)
            s = nmod_add(s, nmod_mul(wo[r * d + c], net->readout[r], ws->mod), ws->mod);
        ws->ro[c] = s;
    }
}

/* Same control flow as san_run in seprank.c, over F_p. */
static mp_limb_t mod_run(const ar_san_mod *net, mod_ws *ws, int have_qkv0, int full)
{
    size_t d = net->d, n = net->n;
    for (size_t l = 0; l < net->layers; l++) {
        int last = (l + 1 == net->layers) && !full;
        if (!(l == 0 && have_qkv0)) {
            for (size_t j = 0; j < n; j++) {
                if (!last || j == net->position)
                    matvec_mod(wmat(net, l, 0), ws->y + j * d, ws->q + j * d, d, ws);
                matvec_mod(wmat(net, l, 1), ws->y + j * d, ws->k + j * d, d, ws);
                matvec_mod(wmat(net, l, 2), ws->y + j * d, ws->v + j * d, d, ws);
            }
        }
        if (last) {
            size_t i = net->position;
            attend_mod(net, ws, i);
            mp_limb_t f = _nmod_vec_dot(ws->ro, ws->u + i * d, (slong)d, ws->mod, ws->limbs_d);
            if (net->residual)
                f = nmod_add(f, _nmod_vec_dot((const mp_limb_t *)net->readout, ws->y + i * d,
                                              (slong)d, ws->mod, ws->limbs_d),
                             ws->mod);
            return f;
        }
        for (size_t i = 0; i < n; i++) {
            attend_mod(net, ws, i);
            matvec_mod(wmat(net, l, 3), ws->u + i * d, ws->y2 + i * d, d, ws);
            if (net->residual)
                for (size_t r = 0; r < d; r++)
                    ws->y2[i * d + r] = nmod_add(ws->y2[i * d + r], ws->y[i * d + r], ws->mod);
        }
        mp_limb_t *t = ws->y;
        ws->y = ws->y2;
        ws->y2 = t;
    }
    return 0;
}

static int mod_check_input(const ar_san_mod *net, const uint64_t *x)
{
    if (net == NULL || x == NULL || net->w == NULL)
        return AR_EINVAL;
    for (size_t i = 0; i < net->n * net->d; i++)
        if (x[i] >= net->p)
            return AR_EDOMAIN;
    return AR_OK;
}

int ar_san_mod_forward(const ar_san_mod *net, const uint64_t *x, uint64_t *y, ar_error *err)
{
    int rc = mod_check_input(net, x);
    if (rc != AR_OK || y == NULL)
        return rc != AR_OK ? ar_error_set(err, rc, "network input: %s", ar_strerror(rc))
                           : ar_error_set(err, AR_EINVAL, "NULL argument");
    mod_ws ws;
    if (mod_ws_alloc(&ws, net) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    memcpy(ws.y, x, net->n * net->d * sizeof(mp_limb_t));
    mod_run(net, &ws, 0, 1);
    memcpy(y, ws.y, net->n * net->d * sizeof(mp_limb_t));
    mod_ws_free(&ws);
    return AR_OK;
}

int ar_san_mod_eval(const ar_san_mod *net, const uint64_t *x, uint64_t *value, ar_error *err)
{
    int rc = mod_check_input(net, x);
    if (rc != AR_OK || value == NULL)
        return rc != AR_OK ? ar_error_set(err, rc, "network input: %s", ar_strerror(rc))
                           : ar_error_set(err, AR_EINVAL, "NULL argument");
    mod_ws ws;
    if (mod_ws_alloc(&ws, net) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    memcpy(ws.y, x, net->n * net->d * sizeof(mp_limb_t));
    mod_readout_through_wo(net, &ws);
    *value = mod_run(net, &ws, 0, 0);
    mod_ws_free(&ws);
    return AR_OK;
}

/* ------------------------------------------------------------------ */
/* modular grid and rank                                               */

typedef struct grid_mod_job {
    const ar_san_mod *net;
    size_t m, npos;          /* templates; 1, or n when inputs depend on the position */
    const ar_partition *part;
    mp_limb_t *g;
    size_t ld, cols;
    const mp_limb_t *inputs; /* per (template, position slot): the input, d residues */
    const mp_limb_t *qkv0;   /* per (template, position slot): W_Q x, W_K x, W_V x */
    size_t row_begin, row_end;
    int status;
} grid_mod_job;

static void *grid_mod_worker(void *arg)
{
    grid_mod_job *job = arg;
    const ar_san_mod *net = job->net;
    const ar_partition *part = job->part;
    size_t d = net->d, n = net->n, m = job->m;
    mod_ws ws;
    if (mod_ws_alloc(&ws, net) != AR_OK) {
        job->status = AR_ENOMEM;
        return NULL;
    }
    mod_readout_through_wo(net, &ws);
    size_t which[AR_SEPRANK_MAX_POSITIONS];
    for (size_t row = job->row_begin; row < job->row_end; row++) {
        size_t rr = row;
        for (size_t i = 0; i < part->na; i++) {
            which[part->a[i]] = rr % m;
            rr /= m;
        }
        for (size_t col = 0; col < job->cols; col++) {
            size_t cc = col;
            for (size_t i = 0; i < part->nb; i++) {
                which[part->b[i]] = cc % m;
                cc /= m;
            }
            for (size_t j = 0; j < n; j++) {
                size_t slot = which[j] * job->npos + (job->npos > 1 ? j : 0);
                const mp_limb_t *t = job->qkv0 + slot * 3 * d;
                memcpy(ws.q + j * d, t, d * sizeof(mp_limb_t));
                memcpy(ws.k + j * d, t + d, d * sizeof(mp_limb_t));
                memcpy(ws.v + j * d, t + 2 * d, d * sizeof(mp_limb_t));
                memcpy(ws.y + j * d, job->inputs + slot * d, d * sizeof(mp_limb_t));
            }
            job->g[row * job->ld + col] = mod_run(net, &ws, 1, 0);
        }
    }
    mod_ws_free(&ws);
    job->status = AR_OK;
    return NULL;
}

int ar_grid_mod(const ar_san_mod *net, const uint64_t *templates, size_t m,
                const ar_partition *part, uint64_t *g, size_t ld, size_t threads, ar_error *err)
{
    int rc = ar_grid_mod_offsets(net, templates, m, NULL, part, g, ld, threads);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "grid over F_p: %s", ar_strerror(rc));
}

int ar_grid_mod_offsets(const ar_san_mod *net, const uint64_t *templates, size_t m,
                        const uint64_t *offsets, const ar_partition *part, uint64_t *g,
                        size_t ld, size_t threads)
{
    if (net == NULL || templates == NULL || part == NULL || g == NULL || net->w == NULL ||
        m == 0 || part->n != net->n)
        return AR_EINVAL;
    size_t rows, cols;
    int rc = ar_grid_shape(part, m, 0, &rows, &cols, NULL);
    if (rc != AR_OK)
        return rc;
    if (ld < cols)
        return AR_ESIZE;
    size_t d = net->d, npos = offsets != NULL ? net->n : 1;
    for (size_t i = 0; i < m * d; i++)
        if (templates[i] >= net->p)
            return AR_EDOMAIN;
    for (size_t i = 0; offsets != NULL && i < net->n * d; i++)
        if (offsets[i] >= net->p)
            return AR_EDOMAIN;
    mp_limb_t *inputs = malloc(m * npos * 4 * d * sizeof(mp_limb_t));
    if (inputs == NULL)
        return AR_ENOMEM;
    mp_limb_t *qkv0 = inputs + m * npos * d;
    mod_ws tmp;
    nmod_init(&tmp.mod, net->p);
    tmp.limbs_d = _nmod_vec_dot_bound_limbs((slong)d, tmp.mod);
    const mp_limb_t *tp = (const mp_limb_t *)templates;
    for (size_t t = 0; t < m; t++)
        for (size_t j = 0; j < npos; j++) {
            mp_limb_t *x = inputs + (t * npos + j) * d, *out = qkv0 + (t * npos + j) * 3 * d;
            for (size_t i = 0; i < d; i++)
                x[i] = offsets != NULL ? nmod_add(tp[t * d + i], offsets[j * d + i], tmp.mod)
                                       : tp[t * d + i];
            matvec_mod(wmat(net, 0, 0), x, out, d, &tmp);
            matvec_mod(wmat(net, 0, 1), x, out + d, d, &tmp);
            matvec_mod(wmat(net, 0, 2), x, out + 2 * d, d, &tmp);
        }
    if (threads == 0)
        threads = 1;
    if (threads > rows)
        threads = rows;
    if (threads > 64)
        threads = 64;
    grid_mod_job jobs[64];
    pthread_t tid[64];
    int started[64] = {0};
    for (size_t k = 0; k < threads; k++) {
        jobs[k] = (grid_mod_job){net, m, npos, part, (mp_limb_t *)g, ld, cols, inputs, qkv0,
                                 rows * k / threads, rows * (k + 1) / threads, AR_OK};
        if (k > 0 && pthread_create(&tid[k], NULL, grid_mod_worker, &jobs[k]) == 0)
            started[k] = 1;
        else if (k > 0)
            grid_mod_worker(&jobs[k]);
    }
    grid_mod_worker(&jobs[0]);
    rc = jobs[0].status;
    for (size_t k = 1; k < threads; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        if (jobs[k].status != AR_OK)
            rc = jobs[k].status;
    }
    free(inputs);
    return rc;
}

/* Rank of an initialised nmod_mat, destroying it (LU in place). */
static size_t nmod_mat_rank_inplace(nmod_mat_t a, int *ok)
{
    *ok = 1;
    if (a->r == 0 || a->c == 0)
        return 0;
    slong *perm = malloc((size_t)a->r * sizeof(slong));
    if (perm == NULL) {
        *ok = 0;
        return 0;
    }
    slong r = nmod_mat_lu(perm, a, 0);
    free(perm);
    return (size_t)r;
}

int ar_seprank_rank_mod(const uint64_t *g, size_t rows, size_t cols, size_t ld, uint64_t p,
                        size_t *rank, ar_error *err)
{
    if (rank == NULL || p < 2 || (rows > 0 && cols > 0 && (g == NULL || ld < cols)))
        return ar_error_set(err, AR_EINVAL, "rank over F_p: NULL argument, p < 2 or ld < cols");
    if (rows == 0 || cols == 0) {
        *rank = 0;
        return AR_OK;
    }
    size_t bytes;
    int rc = ar_seprank_nmod_bytes(rows, cols, &bytes);
    if (rc == AR_OK)
        rc = ar_seprank_flint_admit(bytes, AR_SEPRANK_DEFAULT_MAX_BYTES, "rank mod p", err);
    if (rc != AR_OK)
        return rc;
    nmod_mat_t a;
    nmod_mat_init(a, (slong)rows, (slong)cols, p);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            nmod_mat_entry(a, i, j) = g[i * ld + j] % p;
    int ok;
    *rank = nmod_mat_rank_inplace(a, &ok);
    nmod_mat_clear(a);
    return ok ? AR_OK : ar_error_set(err, AR_ENOMEM, "out of memory");
}

/* Network and templates (and, with embedded positions, the offsets) of one
 * prime, from the configuration's role seeds. */
static int build_mod_instance(const ar_seprank_config *cfg, size_t m, size_t prime_index,
                              ar_san_mod *net, uint64_t **templates, uint64_t **offsets)
{
    uint64_t p = ar_seprank_prime(prime_index);
    *templates = *offsets = NULL;
    int rc = ar_san_mod_alloc(net, cfg->layers, cfg->d, cfg->heads, cfg->n, cfg->residual, p, NULL);
    if (rc != AR_OK)
        return rc;
    int embedded = cfg->embedding.enabled, with_pos = embedded && cfg->embedding.positions;
    ar_rng *rw = ar_rng_alloc(ar_seprank_role_seed(cfg, 100 + 2 * (uint64_t)prime_index));
    ar_rng *rt = ar_rng_alloc(ar_seprank_role_seed(cfg, 101 + 2 * (uint64_t)prime_index));
    *templates = malloc(m * cfg->d * sizeof(uint64_t));
    if (with_pos)
        *offsets = malloc(cfg->n * cfg->d * sizeof(uint64_t));
    if (rw == NULL || rt == NULL || *templates == NULL || (with_pos && *offsets == NULL))
        rc = AR_ENOMEM;
    if (rc == AR_OK) {
        ar_san_mod_randomize(net, rw);
        net->position = cfg->position;
        if (cfg->readout == AR_SEPRANK_READOUT_ENTRY)
            rc = ar_san_mod_set_entry(net, cfg->position, cfg->entry, NULL);
    }
    if (rc == AR_OK && embedded)
        rc = ar_seprank_embed_mod_inputs(cfg, prime_index, m, *templates, *offsets);
    else if (rc == AR_OK)
        for (size_t i = 0; i < m * cfg->d; i++)
            (*templates)[i] = ar_seprank_field_uniform(rt, p);
    ar_rng_free(rw);
    ar_rng_free(rt);
    if (rc != AR_OK) {
        free(*templates);
        free(*offsets);
        *templates = *offsets = NULL;
        ar_san_mod_free(net);
    }
    return rc;
}

int ar_seprank_mod_rank(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                        size_t prime_index, size_t *rank, ar_error *err)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    if (part == NULL || rank == NULL || m == 0 || prime_index >= 16 ||
        part->n != cfg->n || cfg->position >= cfg->n ||
        (cfg->readout == AR_SEPRANK_READOUT_ENTRY && cfg->entry >= cfg->d))
        return ar_error_set(err, AR_EINVAL, "seprank: configuration or partition out of range");
    size_t rows, cols, bytes;
    int rc = ar_grid_shape(part, m, 0, &rows, &cols, err);
    if (rc == AR_OK)
        rc = ar_seprank_nmod_bytes(rows, cols, &bytes);
    if (rc == AR_OK)
        rc = ar_seprank_flint_admit(bytes, cfg->max_bytes, "rank mod p", err);
    if (rc != AR_OK)
        return rc;
    ar_san_mod net;
    uint64_t *templates = NULL, *offsets = NULL;
    rc = build_mod_instance(cfg, m, prime_index, &net, &templates, &offsets);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "seprank instance: %s", ar_strerror(rc));
    /* The grid is written straight into the FLINT matrix (rows are contiguous
     * with stride cols) and factorised in place: one copy of the matrix. */
    nmod_mat_t a;
    nmod_mat_init(a, (slong)rows, (slong)cols, net.p);
    rc = ar_grid_mod_offsets(&net, templates, m, offsets, part, (uint64_t *)a->entries, cols,
                             cfg->threads ? cfg->threads : 1);
    if (rc == AR_OK) {
        int ok;
        *rank = nmod_mat_rank_inplace(a, &ok);
        if (!ok)
            rc = AR_ENOMEM;
    }
    nmod_mat_clear(a);
    free(templates);
    free(offsets);
    ar_san_mod_free(&net);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "rank mod p: %s", ar_strerror(rc));
}

/* ------------------------------------------------------------------ */
/* rational check: the same network over Z with fmpz arithmetic        */

typedef struct zws {
    size_t d, n;
    fmpz *q, *k, *v, *u, *y, *y2, *w, *readout;
    fmpz_t s;
} zws;

static fmpz *zw(const zws *z, size_t l, int which)
{
    return z->w + (l * 4 + (size_t)which) * z->d * z->d;
}

static void z_matvec(const fmpz *w, const fmpz *x, fmpz *out, size_t d)
{
    for (size_t r = 0; r < d; r++) {
        fmpz_zero(out + r);
        for (size_t c = 0; c < d; c++)
            fmpz_addmul(out + r, w + r * d + c, x + c);
    }
}

static void z_attend(zws *z, size_t heads, size_t i)
{
    size_t d = z->d, dp = d / heads;
    for (size_t r = 0; r < d; r++)
        fmpz_zero(z->u + i * d + r);
    for (size_t h = 0; h < heads; h++) {
        size_t off = h * dp;
        for (size_t j = 0; j < z->n; j++) {
            fmpz_zero(z->s);
            for (size_t t = 0; t < dp; t++)
                fmpz_addmul(z->s, z->q + i * d + off + t, z->k + j * d + off + t);
            for (size_t t = 0; t < dp; t++)
                fmpz_addmul(z->u + i * d + off + t, z->s, z->v + j * d + off + t);
        }
    }
}

static void z_eval(zws *z, const ar_seprank_config *cfg, fmpz_t out)
{
    size_t d = z->d, n = z->n;
    for (size_t l = 0; l < cfg->layers; l++) {
        for (size_t j = 0; j < n; j++) {
            z_matvec(zw(z, l, 0), z->y + j * d, z->q + j * d, d);
            z_matvec(zw(z, l, 1), z->y + j * d, z->k + j * d, d);
            z_matvec(zw(z, l, 2), z->y + j * d, z->v + j * d, d);
        }
        for (size_t i = 0; i < n; i++) {
            z_attend(z, cfg->heads, i);
            z_matvec(zw(z, l, 3), z->u + i * d, z->y2 + i * d, d);
            if (cfg->residual)
                for (size_t r = 0; r < d; r++)
                    fmpz_add(z->y2 + i * d + r, z->y2 + i * d + r, z->y + i * d + r);
        }
        fmpz *t = z->y;
        z->y = z->y2;
        z->y2 = t;
    }
    fmpz_zero(out);
    for (size_t r = 0; r < d; r++)
        fmpz_addmul(out, z->readout + r, z->y + cfg->position * d + r);
}

static void z_random(fmpz_t x, ar_rng *rng, long range)
{
    unsigned long span = 2UL * (unsigned long)range + 1UL;
    fmpz_set_si(x, (slong)gsl_rng_uniform_int(ar_rng_gsl(rng), span) - range);
}

int ar_seprank_rational_rank(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                             long range, size_t *rank, ar_error *err)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    if (part == NULL || rank == NULL || m == 0 || range <= 0 ||
        range > 1000000000L || part->n != cfg->n || cfg->layers == 0 || cfg->d == 0 ||
        cfg->heads == 0 || cfg->d % cfg->heads != 0 || cfg->position >= cfg->n ||
        (cfg->readout == AR_SEPRANK_READOUT_ENTRY && cfg->entry >= cfg->d))
        return ar_error_set(err, AR_EINVAL, "seprank: configuration or partition out of range");
    size_t rows, cols, bytes;
    int rc = ar_grid_shape(part, m, 0, &rows, &cols, err);
    if (rc == AR_OK)
        rc = ar_seprank_rational_bytes(cfg, rows, cols, m, range, &bytes);
    if (rc == AR_OK)
        rc = ar_seprank_flint_admit(bytes, cfg->max_bytes, "rank over Q", err);
    if (rc != AR_OK)
        return rc;
    size_t d = cfg->d, n = cfg->n, nw = cfg->layers * 4 * d * d;
    zws z = {d, n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, {0}};
    fmpz *all = _fmpz_vec_init((slong)(6 * d * n + nw + d + m * d));
    ar_rng *rw = ar_rng_alloc(ar_seprank_role_seed(cfg, 200));
    ar_rng *rt = ar_rng_alloc(ar_seprank_role_seed(cfg, 201));
    if (rw == NULL || rt == NULL) {
        ar_rng_free(rw);
        ar_rng_free(rt);
        _fmpz_vec_clear(all, (slong)(6 * d * n + nw + d + m * d));
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    z.q = all;
    z.k = all + d * n;
    z.v = all + 2 * d * n;
    z.u = all + 3 * d * n;
    z.y = all + 4 * d * n;
    z.y2 = all + 5 * d * n;
    z.w = all + 6 * d * n;
    z.readout = z.w + nw;
    fmpz *tmpl = z.readout + d;
    fmpz_init(z.s);
    for (size_t i = 0; i < nw; i++)
        z_random(z.w + i, rw, range);
    for (size_t i = 0; i < d; i++)
        z_random(z.readout + i, rw, range);
    if (cfg->readout == AR_SEPRANK_READOUT_ENTRY)
        for (size_t i = 0; i < d; i++)
            fmpz_set_ui(z.readout + i, cfg->entry == i ? 1 : 0);
    for (size_t i = 0; i < m * d; i++)
        z_random(tmpl + i, rt, range);
    fmpz_mat_t g;
    fmpz_mat_init(g, (slong)rows, (slong)cols);
    fmpz *base_y = z.y, *base_y2 = z.y2;
    size_t which[AR_SEPRANK_MAX_POSITIONS];
    for (size_t row = 0; row < rows; row++)
        for (size_t col = 0; col < cols; col++) {
            size_t rr = row, cc = col;
            for (size_t i = 0; i < part->na; i++) {
                which[part->a[i]] = rr % m;
                rr /= m;
            }
            for (size_t i = 0; i < part->nb; i++) {
                which[part->b[i]] = cc % m;
                cc /= m;
            }
            z.y = base_y;
            z.y2 = base_y2;
            for (size_t j = 0; j < n; j++)
                _fmpz_vec_set(z.y + j * d, tmpl + which[j] * d, (slong)d);
            z_eval(&z, cfg, fmpz_mat_entry(g, row, col));
        }
    *rank = (size_t)fmpz_mat_rank(g);
    fmpz_mat_clear(g);
    fmpz_clear(z.s);
    _fmpz_vec_clear(all, (slong)(6 * d * n + nw + d + m * d));
    ar_rng_free(rw);
    ar_rng_free(rt);
    return AR_OK;
}
