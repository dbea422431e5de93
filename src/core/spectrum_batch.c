/* Spectra of a stack of matrices, parallel over the matrices.
 * Many small SVDs run faster as one single-threaded LAPACK call per core
 * than as multi-threaded calls in sequence (docs/building.md: two BLAS threads
 * are slower than one below n = 512). */
#include "attnrank/spectrum.h"
#include "attnrank/status.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct batch_job {
    const ar_cview *mats;
    size_t count, k;
    double *s;
    size_t next;             /* next matrix to take, under lock */
    int status;              /* first failure, under lock */
    size_t failed_index;
    pthread_mutex_t lock;
} batch_job;

/* Hand out matrices one at a time so threads stay busy whatever the order. */
static int take_next(batch_job *job, size_t *index)
{
    pthread_mutex_lock(&job->lock);
    int more = job->status == AR_OK && job->next < job->count;
    if (more)
        *index = job->next++;
    pthread_mutex_unlock(&job->lock);
    return more;
}

static void record_failure(batch_job *job, size_t index, int rc)
{
    pthread_mutex_lock(&job->lock);
    if (job->status == AR_OK || index < job->failed_index) {
        job->status = rc;
        job->failed_index = index;
    }
    pthread_mutex_unlock(&job->lock);
}

static void *batch_worker(void *arg)
{
    batch_job *job = arg;
    ar_svd_workspace *ws = NULL;
    int rc = ar_svd_workspace_alloc(&ws, job->mats[0].rows, job->mats[0].cols, AR_SVD_VALUES, NULL);
    if (rc != AR_OK) {
        record_failure(job, 0, rc);
        return NULL;
    }
    size_t t;
    while (take_next(job, &t)) {
        rc = ar_spectrum_svals_ws(job->mats[t], job->s + t * job->k, ws, NULL);
        if (rc != AR_OK)
            record_failure(job, t, rc);
    }
    ar_svd_workspace_free(ws);
    return NULL;
}

static size_t online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

int ar_spectrum_svals_batch(const ar_cview *mats, size_t count, double *s, size_t nthreads,
                            size_t *failed_index, ar_error *err)
{
    if (mats == NULL || s == NULL || count == 0)
        return ar_error_set(err, AR_EINVAL, "spectrum: NULL argument or no matrices");
    size_t m = mats[0].rows, n = mats[0].cols;
    for (size_t t = 0; t < count; t++) {
        if (ar_cview_check(mats[t], err) != AR_OK) {
            if (failed_index != NULL)
                *failed_index = t;
            return ar_error_set(err, AR_EINVAL, "invalid matrix view (matrix %zu)", t);
        }
        if (mats[t].rows != m || mats[t].cols != n)
            return ar_error_set(err, AR_ESIZE, "matrix %zu is %zu x %zu, matrix 0 %zu x %zu",
                                t, mats[t].rows, mats[t].cols, m, n);
    }
    if (m == 0 || n == 0)
        return ar_error_set(err, AR_EINVAL, "spectrum: empty matrices");
    if (nthreads == 0)
        nthreads = online_cpus();
    if (nthreads > count)
        nthreads = count;
    batch_job job = {mats, count, m < n ? m : n, s, 0, AR_OK, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t *threads = calloc(nthreads, sizeof *threads);
    if (threads == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    size_t started = 0;
    /* The calling thread works too; extra threads only when asked for. */
    for (; started + 1 < nthreads; started++)
        if (pthread_create(&threads[started], NULL, batch_worker, &job) != 0)
            break;
    batch_worker(&job);
    for (size_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    pthread_mutex_destroy(&job.lock);
    if (job.status == AR_OK)
        return AR_OK;
    if (failed_index != NULL)
        *failed_index = job.failed_index;
    if (job.status == AR_ENOMEM)
        return ar_error_set(err, job.status, "out of memory");
    return ar_error_set(err, job.status, "singular values of matrix %zu: %s", job.failed_index,
                        ar_strerror(job.status));
}
