/* LD_PRELOAD allocation counter for the benchmarks (glibc only).
 *
 * Counts every call of malloc, calloc, realloc, posix_memalign, aligned_alloc
 * and memalign in the whole process (library, LAPACKE, OpenBLAS), forwarding
 * to glibc's own allocator.  A benchmark reads the count around a batched
 * loop through bench_malloc_count(), found with dlsym, and shows whether the
 * loop allocates per call: the count must not grow with the batch size.
 * With MALLOC_COUNT_REPORT=1 the total is printed on stderr at exit. */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

static atomic_ulong allocations;

unsigned long bench_malloc_count(void);
unsigned long bench_malloc_count(void)
{
    return atomic_load(&allocations);
}

void *malloc(size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_realloc(p, size);
}

void free(void *p)
{
    __libc_free(p);
}

void *memalign(size_t align, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    void *p = __libc_memalign(align, size);
    if (p == NULL && size != 0)
        return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report_at_exit(void)
{
    const char *e = getenv("MALLOC_COUNT_REPORT");
    if (e != NULL && e[0] == '1')
        fprintf(stderr, "malloc_count: %lu allocation calls\n", atomic_load(&allocations));
}
