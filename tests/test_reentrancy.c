/* Reentrancy: the library keeps no mutable global state of its own, so
 * several threads may compute spectra (and read files, fill random matrices,
 * take softmaxes) at once and get exactly what one thread gets alone.
 *
 * Every job is first computed serially in the main thread; then NTHREADS
 * threads run all jobs concurrently, each in its own order and several
 * rounds, and every result must be bit-identical to the serial one.  Each
 * thread has its own workspaces, random generators and error buffers, as the
 * API asks.  Built as well under ThreadSanitizer by scripts/sanitize
 * (build-tsan), which reports any data race in the library's code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"

#define NTHREADS 4
#define ROUNDS 3
#define NJOBS 8
#define MAX_OUT 256

/* One job: a seeded m x n Gaussian matrix, its singular values by both API
 * levels and by the thin SVD, its rank metrics, a column softmax of it, and
 * the same matrix read back from an in-memory .npy image. */
typedef struct job {
    size_t m, n;
    uint64_t seed;
    unsigned char *npy; /* .npy image of the matrix, built serially */
    size_t npy_len;
} job;

typedef struct result {
    int status;
    size_t len;
    double out[MAX_OUT];
} result;

static job g_jobs[NJOBS];
static result g_serial[NJOBS];

/* A little-endian float64 Fortran-order .npy image of a (header by hand, so
 * that building it uses no library code that the test exercises). */
static unsigned char *npy_image(const ar_matrix *a, size_t *len)
{
    char dict[128];
    int k = snprintf(dict, sizeof dict,
                     "{'descr': '<f8', 'fortran_order': True, 'shape': (%zu, %zu), }", a->rows,
                     a->cols);
    size_t header = 10 + (size_t)k + 1, padded = (header + 63) / 64 * 64;
    size_t data = a->rows * a->cols * sizeof(double);
    unsigned char *buf = malloc(padded + data);
    if (buf == NULL)
        return NULL;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((padded - 10) & 0xff);
    buf[9] = (unsigned char)((padded - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)k);
    memset(buf + 10 + k, ' ', padded - header);
    buf[padded - 1] = '\n';
    for (size_t j = 0; j < a->cols; j++)
        memcpy(buf + padded + j * a->rows * sizeof(double), &AR_AT(a, 0, j),
               a->rows * sizeof(double));
    *len = padded + data;
    return buf;
}

static void push(result *r, double x)
{
    if (r->len < MAX_OUT)
        r->out[r->len++] = x;
}

/* Everything one job computes, appended to r; ws is the caller's own
 * values-only workspace of the job's size. */
static int run_job(const job *jb, ar_svd_workspace *ws, result *r)
{
    size_t k = jb->m < jb->n ? jb->m : jb->n;
    ar_matrix a = ar_matrix_empty(), u = ar_matrix_empty(), vt = ar_matrix_empty();
    double *s1 = calloc(k, sizeof(double)), *s2 = calloc(k, sizeof(double)),
           *s3 = calloc(k, sizeof(double));
    ar_rng *rng = ar_rng_alloc(jb->seed);
    ar_array arr;
    ar_error err = {{0}};
    memset(&arr, 0, sizeof arr);
    r->len = 0;
    int rc = (s1 && s2 && s3 && rng) ? ar_matrix_alloc(&a, jb->m, jb->n, NULL) : AR_ENOMEM;
    if (rc == AR_OK) {
        ar_cm_fill_gaussian(&a, rng, 2.385);
        rc = ar_cm_svals(&a, s1);
    }
    if (rc == AR_OK)
        rc = ar_cm_svals_ws(&a, s2, ws);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, jb->m, k, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, k, jb->n, NULL);
    if (rc == AR_OK)
        rc = ar_cm_svd(&a, &u, s3, &vt);
    ar_rank_metrics met;
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    if (rc == AR_OK)
        rc = ar_rank_metrics_compute(s1, k, jb->m, jb->n, &opts, &met, NULL);
    if (rc == AR_OK)
        rc = ar_npy_parse(jb->npy, jb->npy_len, &arr, 0, &err);
    if (rc == AR_OK) {
        for (size_t i = 0; i < k; i++) {
            push(r, s1[i]);
            push(r, s2[i]);
            push(r, s3[i]);
        }
        push(r, AR_AT(&u, 0, 0));
        push(r, AR_AT(&vt, k - 1, jb->n - 1));
        push(r, (double)met.rank);
        push(r, met.threshold);
        push(r, met.stable_rank);
        push(r, met.roy_vetterli_rank);
        push(r, met.participation_ratio);
        push(r, met.nuclear_rank);
        /* read back: must be the generated matrix, bit for bit */
        push(r, (double)memcmp(arr.data, a.data, jb->m * jb->n * sizeof(double)));
        rc = ar_attention_softmax(ar_matrix_view(&a), AR_AXIS_COL, NULL);
    }
    if (rc == AR_OK) {
        push(r, AR_AT(&a, 0, 0));
        push(r, AR_AT(&a, jb->m - 1, jb->n - 1));
        push(r, ar_attention_stochastic_defect(ar_matrix_cview(&a), AR_AXIS_COL));
    }
    ar_array_free(&arr);
    ar_matrix_free(&a);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_rng_free(rng);
    free(s1);
    free(s2);
    free(s3);
    r->status = rc;
    return rc;
}

static int same(const result *a, const result *b)
{
    return a->status == b->status && a->len == b->len &&
           memcmp(a->out, b->out, a->len * sizeof(double)) == 0;
}

/* ---- threads ------------------------------------------------------------ */

typedef struct worker {
    pthread_t tid;
    size_t index;
    size_t done, mismatches, failures;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    ar_svd_workspace *ws[NJOBS] = {NULL};
    for (size_t j = 0; j < NJOBS; j++)
        if (ar_svd_workspace_alloc(&ws[j], g_jobs[j].m, g_jobs[j].n, AR_SVD_VALUES, NULL) != AR_OK)
            w->failures++;
    result *r = malloc(sizeof *r);
    for (size_t round = 0; r != NULL && w->failures == 0 && round < ROUNDS; round++)
        for (size_t t = 0; t < NJOBS; t++) {
            /* each thread walks the jobs in its own order */
            size_t j = (t * (2 * w->index + 1) + w->index + round) % NJOBS;
            if (run_job(&g_jobs[j], ws[j], r) != AR_OK)
                w->failures++;
            else if (!same(r, &g_serial[j]))
                w->mismatches++;
            w->done++;
        }
    free(r);
    for (size_t j = 0; j < NJOBS; j++)
        ar_svd_workspace_free(ws[j]);
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    static const size_t shapes[NJOBS][2] = {{1, 1}, {2, 3}, {3, 2}, {17, 5},
                                            {5, 17}, {40, 40}, {64, 31}, {9, 90}};
    for (size_t j = 0; j < NJOBS; j++) {
        job *jb = &g_jobs[j];
        jb->m = shapes[j][0];
        jb->n = shapes[j][1];
        jb->seed = 0x9e3779b97f4a7c15ull * (j + 1);
        ar_matrix a = ar_matrix_empty();
        ar_rng *rng = ar_rng_alloc(jb->seed);
        if (rng == NULL || ar_matrix_alloc(&a, jb->m, jb->n, NULL) != AR_OK)
            return -1;
        ar_cm_fill_gaussian(&a, rng, 2.385);
        jb->npy = npy_image(&a, &jb->npy_len);
        ar_matrix_free(&a);
        ar_rng_free(rng);
        if (jb->npy == NULL)
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t j = 0; j < NJOBS; j++)
        free(g_jobs[j].npy);
    return 0;
}

/* The serial reference itself is sane: statuses OK, the three spectra of
 * each job agree (to rounding), the file read-back is exact. */
static void test_serial_reference(void **state)
{
    (void)state;
    for (size_t j = 0; j < NJOBS; j++) {
        ar_svd_workspace *ws = NULL;
        assert_int_equal(ar_svd_workspace_alloc(&ws, g_jobs[j].m, g_jobs[j].n, AR_SVD_VALUES, NULL),
                         AR_OK);
        assert_int_equal(run_job(&g_jobs[j], ws, &g_serial[j]), AR_OK);
        ar_svd_workspace_free(ws);
        const result *r = &g_serial[j];
        size_t k = g_jobs[j].m < g_jobs[j].n ? g_jobs[j].m : g_jobs[j].n;
        assert_int_equal(r->len, 3 * k + 12);
        for (size_t i = 0; i < k; i++) {
            double s = r->out[3 * i];
            assert_true(s > 0.0);
            assert_true(fabs(r->out[3 * i + 1] - s) <= 1e-13 * r->out[0]);
            assert_true(fabs(r->out[3 * i + 2] - s) <= 1e-13 * r->out[0]);
        }
        assert_true(r->out[3 * k + 2] == (double)k);   /* Gaussian: full rank */
        assert_true(r->out[3 * k + 8] == 0.0);         /* npy read-back exact */
        assert_true(r->out[3 * k + 11] < 1e-14);       /* columns sum to 1 */
    }
}

static void run_threads(worker *w)
{
    for (size_t i = 0; i < NTHREADS; i++) {
        w[i].index = i;
        assert_int_equal(pthread_create(&w[i].tid, NULL, worker_main, &w[i]), 0);
    }
    for (size_t i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(w[i].tid, NULL), 0);
}

static void test_concurrent_spectra_match_serial(void **state)
{
    (void)state;
    worker w[NTHREADS];
    memset(w, 0, sizeof w);
    run_threads(w);
    for (size_t i = 0; i < NTHREADS; i++) {
        assert_int_equal(w[i].failures, 0);
        assert_int_equal(w[i].done, ROUNDS * NJOBS);
        if (w[i].mismatches != 0)
            fail_msg("thread %zu: %zu of %zu results differ from the serial ones", i,
                     w[i].mismatches, w[i].done);
    }
}

/* The gesdd -> gesvd fallback switch and its counter belong to one
 * workspace: forcing it in one thread changes nothing in another. */
typedef struct fallback_worker {
    pthread_t tid;
    int force;
    size_t fallbacks;
    double s[40];
    int status;
} fallback_worker;

static void *fallback_main(void *arg)
{
    fallback_worker *fw = arg;
    const job *jb = &g_jobs[5]; /* 40 x 40 */
    ar_svd_workspace *ws = NULL;
    ar_matrix a = ar_matrix_empty();
    ar_rng *rng = ar_rng_alloc(jb->seed);
    fw->status = ar_svd_workspace_alloc(&ws, jb->m, jb->n, AR_SVD_VALUES, NULL);
    if (fw->status == AR_OK)
        fw->status = ar_matrix_alloc(&a, jb->m, jb->n, NULL);
    if (fw->status == AR_OK && rng != NULL) {
        ar_cm_fill_gaussian(&a, rng, 2.385);
        ar_svd_workspace_force_fallback(ws, fw->force);
        for (int rep = 0; rep < 3 && fw->status == AR_OK; rep++)
            fw->status = ar_cm_svals_ws(&a, fw->s, ws);
        fw->fallbacks = ar_svd_workspace_fallbacks(ws);
    }
    ar_matrix_free(&a);
    ar_rng_free(rng);
    ar_svd_workspace_free(ws);
    return NULL;
}

static void test_fallback_is_per_workspace(void **state)
{
    (void)state;
    fallback_worker fw[NTHREADS];
    memset(fw, 0, sizeof fw);
    for (size_t i = 0; i < NTHREADS; i++) {
        fw[i].force = (int)(i % 2);
        assert_int_equal(pthread_create(&fw[i].tid, NULL, fallback_main, &fw[i]), 0);
    }
    for (size_t i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(fw[i].tid, NULL), 0);
    for (size_t i = 0; i < NTHREADS; i++) {
        assert_int_equal(fw[i].status, AR_OK);
        assert_int_equal(fw[i].fallbacks, fw[i].force ? 3 : 0);
        /* same path, same bits; gesvd and gesdd agree to rounding */
        assert_memory_equal(fw[i].s, fw[i % 2].s, sizeof fw[i].s);
        for (size_t k = 0; k < 40; k++)
            assert_true(fabs(fw[i].s[k] - fw[0].s[k]) <= 1e-12 * fw[0].s[0]);
    }
}

/* ---- the library's own threads, started from several caller threads ---- */

/* Inputs of the threaded entry points: a batch of seeded matrices for
 * ar_spectrum_svals_batch, a random network with templates for the seprank
 * grids (float and F_p).  Each caller thread gets the same inputs (read
 * only) and its own outputs. */
#define TB_COUNT 6
#define TB_M 24
#define TB_N 16
#define TB_K 16 /* min(TB_M, TB_N) */
#define TG_TEMPLATES 3

typedef struct threaded_inputs {
    ar_matrix mats[TB_COUNT];
    ar_cview views[TB_COUNT];
    ar_san net;
    ar_san_mod mod;
    ar_matrix templates;
    uint64_t *mod_templates;
    ar_partition part;
    size_t rows, cols;
} threaded_inputs;

typedef struct threaded_out {
    double s[TB_COUNT * TB_K];
    ar_matrix grid;
    uint64_t *grid_mod;
    int status;
} threaded_out;

static int threaded_run(const threaded_inputs *in, size_t nthreads, threaded_out *out)
{
    int rc = ar_spectrum_svals_batch(in->views, TB_COUNT, out->s, nthreads, NULL, NULL);
    if (rc == AR_OK)
        rc = ar_grid_float(&in->net, ar_matrix_cview(&in->templates), &in->part,
                           ar_matrix_view(&out->grid), nthreads, NULL);
    if (rc == AR_OK)
        rc = ar_grid_mod(&in->mod, in->mod_templates, TG_TEMPLATES, &in->part, out->grid_mod,
                         in->cols, nthreads, NULL);
    return rc;
}

static void threaded_out_init(threaded_out *o, const threaded_inputs *in)
{
    memset(o, 0, sizeof *o);
    o->grid = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&o->grid, in->rows, in->cols, NULL), AR_OK);
    o->grid_mod = calloc(in->rows * in->cols, sizeof *o->grid_mod);
    assert_non_null(o->grid_mod);
}

static void threaded_out_free(threaded_out *o)
{
    ar_matrix_free(&o->grid);
    free(o->grid_mod);
}

static void threaded_inputs_init(threaded_inputs *in)
{
    memset(in, 0, sizeof *in);
    ar_rng *rng = ar_rng_alloc(2385);
    assert_non_null(rng);
    for (size_t t = 0; t < TB_COUNT; t++) {
        in->mats[t] = ar_matrix_empty();
        assert_int_equal(ar_matrix_alloc(&in->mats[t], TB_M, TB_N, NULL), AR_OK);
        ar_cm_fill_gaussian(&in->mats[t], rng, 1.0 + 0.5 * (double)t);
        in->views[t] = ar_matrix_cview(&in->mats[t]);
    }
    const size_t layers = 1, d = 4, heads = 2, n = 4;
    assert_int_equal(ar_san_alloc(&in->net, layers, d, heads, n, 1, NULL), AR_OK);
    ar_san_randomize(&in->net, rng);
    in->templates = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&in->templates, d, TG_TEMPLATES, NULL), AR_OK);
    ar_cm_fill_gaussian(&in->templates, rng, 1.0);
    assert_int_equal(ar_san_mod_alloc(&in->mod, layers, d, heads, n, 1, ar_seprank_prime(0), NULL),
                     AR_OK);
    ar_san_mod_randomize(&in->mod, rng);
    in->mod_templates = malloc(TG_TEMPLATES * d * sizeof *in->mod_templates);
    assert_non_null(in->mod_templates);
    for (size_t i = 0; i < TG_TEMPLATES * d; i++)
        in->mod_templates[i] = ar_seprank_field_uniform(rng, in->mod.p);
    assert_int_equal(ar_partition_half(n, &in->part, NULL), AR_OK);
    assert_int_equal(ar_grid_shape(&in->part, TG_TEMPLATES, 0, &in->rows, &in->cols, NULL), AR_OK);
    ar_rng_free(rng);
}

static void threaded_inputs_free(threaded_inputs *in)
{
    for (size_t t = 0; t < TB_COUNT; t++)
        ar_matrix_free(&in->mats[t]);
    ar_san_free(&in->net);
    ar_san_mod_free(&in->mod);
    ar_matrix_free(&in->templates);
    free(in->mod_templates);
}

typedef struct threaded_caller {
    pthread_t tid;
    const threaded_inputs *in;
    size_t nthreads;
    threaded_out out;
} threaded_caller;

static void *threaded_caller_main(void *arg)
{
    threaded_caller *c = arg;
    for (int round = 0; round < 2 && c->out.status == AR_OK; round++)
        c->out.status = threaded_run(c->in, c->nthreads, &c->out);
    return NULL;
}

/* Batch SVD and both seprank grids with 2 or 3 threads of their own, from 3
 * caller threads at once: the bits of a one-thread run in the main thread. */
static void test_library_threads_from_callers(void **state)
{
    (void)state;
    threaded_inputs in;
    threaded_inputs_init(&in);
    threaded_out ref;
    threaded_out_init(&ref, &in);
    assert_int_equal(threaded_run(&in, 1, &ref), AR_OK);
    threaded_caller c[3];
    for (size_t i = 0; i < 3; i++) {
        c[i].in = &in;
        c[i].nthreads = 2 + i % 2;
        threaded_out_init(&c[i].out, &in);
        assert_int_equal(pthread_create(&c[i].tid, NULL, threaded_caller_main, &c[i]), 0);
    }
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(pthread_join(c[i].tid, NULL), 0);
    size_t cells = in.rows * in.cols;
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c[i].out.status, AR_OK);
        assert_memory_equal(c[i].out.s, ref.s, sizeof ref.s);
        assert_memory_equal(c[i].out.grid.data, ref.grid.data, cells * sizeof(double));
        assert_memory_equal(c[i].out.grid_mod, ref.grid_mod, cells * sizeof(uint64_t));
        threaded_out_free(&c[i].out);
    }
    threaded_out_free(&ref);
    threaded_inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_reference),
        cmocka_unit_test(test_concurrent_spectra_match_serial),
        cmocka_unit_test(test_fallback_is_per_workspace),
        cmocka_unit_test(test_library_threads_from_callers),
    };
    return cmocka_run_group_tests_name("reentrancy", tests, setup, teardown);
}
