/* The sweep engine of the experiment programs (see sweep.h). */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef EXP_HAVE_MPI
#include <mpi.h>
#endif

#define JOURNAL_MAGIC "attnrank-journal"
#define JOURNAL_VERSION 1
#define RECORD_HEADER_MAX 512
#define MAX_JOURNALS 4096

/* ---- interrupts ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

typedef struct saved_handlers {
    struct sigaction intr, term;
} saved_handlers;

/* SA_RESETHAND: the first signal asks for a stop after the current
 * configuration, a second one gets the default action (terminate). */
static void catch_stop_signals(saved_handlers *saved)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &saved->intr);
    sigaction(SIGTERM, &sa, &saved->term);
}

static void restore_stop_signals(const saved_handlers *saved)
{
    sigaction(SIGINT, &saved->intr, NULL);
    sigaction(SIGTERM, &saved->term, NULL);
}

/* ---- hashing ---- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t fnv1a_str(uint64_t h, const char *s)
{
    return fnv1a(h, s, strlen(s) + 1); /* with the NUL: "ab","c" != "a","bc" */
}

#define FNV_OFFSET 0xcbf29ce484222325ULL

/* Options that do not change any number in the outputs. */
static int option_is_neutral(const char *arg, int *takes_value)
{
    static const char *const with_value[] = {"--out", "--figures", "--plots", "--shard"};
    static const char *const switches[] = {"--quiet", "--resume", "--merge"};
    *takes_value = 0;
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++) {
        size_t n = strlen(with_value[i]);
        if (strncmp(arg, with_value[i], n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            *takes_value = arg[n] == '\0';
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
        if (strcmp(arg, switches[i]) == 0)
            return 1;
    return 0;
}

static uint64_t sweep_signature(const exp_ctx *ctx, const exp_sweep_spec *spec)
{
    uint64_t h = fnv1a_str(FNV_OFFSET, ctx->name);
    h = fnv1a(h, &spec->nconfigs, sizeof spec->nconfigs);
    for (size_t k = 0; k < spec->nfiles; k++) {
        h = fnv1a_str(h, spec->files[k]);
        h = fnv1a_str(h, spec->headers[k]);
    }
    char seed[32];
    snprintf(seed, sizeof seed, "seed=%" PRIu64 "%s", ctx->seed, ctx->full ? " full" : " quick");
    h = fnv1a_str(h, seed);
    for (int i = 1; i < ctx->argc; i++) {
        int takes_value;
        if (option_is_neutral(ctx->argv[i], &takes_value)) {
            i += takes_value;
            continue;
        }
        if (strcmp(ctx->argv[i], "--quick") == 0 || strcmp(ctx->argv[i], "--full") == 0 ||
            strncmp(ctx->argv[i], "--seed", 6) == 0)
            continue; /* in the seed string above, however spelt */
        h = fnv1a_str(h, ctx->argv[i]);
    }
    return h;
}

/* ---- records ---- */

/* One configuration's output: the texts of the nfiles CSVs, then the state,
 * in one payload buffer; len[k] the parts' lengths (k = nfiles: state). */
typedef struct sweep_entry {
    int present;
    unsigned char *payload;
    size_t len[EXP_SWEEP_MAX_FILES + 1];
} sweep_entry;

typedef struct sweep {
    exp_ctx *ctx;
    const exp_sweep_spec *spec;
    void *user;
    sweep_entry *entries;
    size_t present;
    uint64_t signature;
    char journal[4096]; /* this process's journal */
    size_t journal_keep; /* its intact prefix when --resume loaded it, else 0 */
    int jfd;
    char *loaded[MAX_JOURNALS]; /* journals read by --resume or --merge */
    size_t nloaded;
    int rank, size; /* MPI; 0, 1 without */
} sweep;

static size_t entry_total(const sweep *s, const sweep_entry *en)
{
    size_t t = 0;
    for (size_t k = 0; k <= s->spec->nfiles; k++)
        t += en->len[k];
    return t;
}

static void entry_clear(sweep_entry *en)
{
    free(en->payload);
    memset(en, 0, sizeof *en);
}

/* "R index len_0 ... len_nfiles checksum\n" then the payload. */
static int record_write(const sweep *s, size_t index, const sweep_entry *en, FILE *fp)
{
    size_t total = entry_total(s, en);
    fprintf(fp, "R %zu", index);
    for (size_t k = 0; k <= s->spec->nfiles; k++)
        fprintf(fp, " %zu", en->len[k]);
    fprintf(fp, " %016" PRIx64 "\n", fnv1a(FNV_OFFSET, en->payload, total));
    if (total > 0 && fwrite(en->payload, 1, total, fp) != total)
        return -1;
    return ferror(fp) ? -1 : 0;
}

static int parse_size(const char **p, size_t *out)
{
    const char *q = *p;
    if (*q != ' ')
        return -1;
    q++;
    if (*q < '0' || *q > '9')
        return -1;
    size_t v = 0;
    for (; *q >= '0' && *q <= '9'; q++) {
        if (v > (SIZE_MAX - 9) / 10)
            return -1;
        v = v * 10 + (size_t)(*q - '0');
    }
    *p = q;
    *out = v;
    return 0;
}

/* Parse one record at buf[*pos..n).  Returns 1 and advances *pos on a
 * whole, intact record; 0 at the end or at a torn or corrupt record (the
 * rest of the buffer is ignored). */
static int record_read(const sweep *s, const char *buf, size_t n, size_t *pos, size_t *index,
                       sweep_entry *en)
{
    size_t start = *pos, nfiles = s->spec->nfiles;
    const char *nl = memchr(buf + start, '\n', n - start);
    if (nl == NULL || (size_t)(nl - (buf + start)) >= RECORD_HEADER_MAX)
        return 0;
    char line[RECORD_HEADER_MAX + 1];
    size_t ll = (size_t)(nl - (buf + start));
    memcpy(line, buf + start, ll);
    line[ll] = '\0';
    if (line[0] != 'R')
        return 0;
    const char *p = line + 1;
    sweep_entry e;
    memset(&e, 0, sizeof e);
    if (parse_size(&p, index) != 0 || *index >= s->spec->nconfigs)
        return 0;
    size_t total = 0;
    for (size_t k = 0; k <= nfiles; k++) {
        if (parse_size(&p, &e.len[k]) != 0 || e.len[k] > n)
            return 0;
        total += e.len[k];
    }
    char *end;
    if (*p != ' ')
        return 0;
    errno = 0;
    unsigned long long sum = strtoull(p + 1, &end, 16);
    if (errno != 0 || *end != '\0' || end != p + 17)
        return 0;
    size_t body = start + ll + 1;
    if (total > n - body)
        return 0; /* torn */
    if (fnv1a(FNV_OFFSET, buf + body, total) != (uint64_t)sum)
        return 0;
    e.payload = malloc(total > 0 ? total : 1);
    if (e.payload == NULL)
        return 0;
    memcpy(e.payload, buf + body, total);
    e.present = 1;
    *en = e;
    *pos = body + total;
    return 1;
}

/* Insert a parsed record (takes ownership); a configuration already present
 * keeps its first record (results are deterministic). */
static void sweep_insert(sweep *s, size_t index, sweep_entry *en)
{
    if (s->entries[index].present) {
        entry_clear(en);
        return;
    }
    s->entries[index] = *en;
    s->present++;
    memset(en, 0, sizeof *en);
}

/* Parse a buffer of records; returns the offset after the last intact one. */
static size_t sweep_absorb_records(sweep *s, const char *buf, size_t n, size_t pos)
{
    size_t index;
    sweep_entry en;
    while (pos < n && record_read(s, buf, n, &pos, &index, &en))
        sweep_insert(s, index, &en);
    return pos;
}

/* ---- journals ---- */

static int read_file(const char *path, char **buf, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return -1;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    while (b != NULL) {
        len += fread(b + len, 1, cap - len, fp);
        if (len < cap)
            break;
        char *nb = realloc(b, cap * 2);
        if (nb == NULL) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = b == NULL || ferror(fp);
    fclose(fp);
    if (bad) {
        free(b);
        return -1;
    }
    *buf = b;
    *n = len;
    return 0;
}

static void journal_header(const sweep *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d %s %016" PRIx64 " %zu %zu\n", JOURNAL_MAGIC, JOURNAL_VERSION,
             s->ctx->name, s->signature, s->spec->nconfigs, s->spec->nfiles);
}

/* Is this directory entry one of the experiment's journals? */
static int journal_name(const sweep *s, const char *file)
{
    size_t nl = strlen(s->ctx->name), fl = strlen(file), sl = strlen(".journal");
    if (fl < nl + sl || strncmp(file, s->ctx->name, nl) != 0 ||
        strcmp(file + fl - sl, ".journal") != 0)
        return 0;
    const char *mid = file + nl;
    return fl == nl + sl ||
           (mid[0] == '.' && (strncmp(mid + 1, "shard-", 6) == 0 || strncmp(mid + 1, "rank-", 5) == 0));
}

/* Load one journal.  Returns 0, or 2 after a message when it belongs to a
 * run with other options; *valid_end is the end of its intact records. */
static int journal_load(sweep *s, const char *path, size_t *valid_end)
{
    char *buf = NULL;
    size_t n = 0;
    *valid_end = 0;
    if (read_file(path, &buf, &n) != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", s->ctx->name, path, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    char want[512];
    journal_header(s, want, sizeof want);
    size_t hl = strlen(want);
    int code = 0;
    if (n == 0) {
        /* created and killed before its header: nothing in it */
    } else if (n < hl || memcmp(buf, want, hl) != 0) {
        const char *nl = memchr(buf, '\n', n);
        int same_magic = n > strlen(JOURNAL_MAGIC) && memcmp(buf, JOURNAL_MAGIC, strlen(JOURNAL_MAGIC)) == 0;
        fprintf(stderr,
                "%s: %s %s; remove it or run without --resume/--merge\n",
                s->ctx->name, path,
                same_magic && nl != NULL
                    ? "was written by a run with other options (signature differs)"
                    : "is not a journal of this experiment");
        code = CLI_EXIT_USAGE;
    } else {
        *valid_end = sweep_absorb_records(s, buf, n, hl);
    }
    free(buf);
    return code;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sweep_load_journals(sweep *s)
{
    DIR *dir = opendir(s->ctx->out);
    if (dir == NULL) {
        fprintf(stderr, "%s: cannot list %s: %s\n", s->ctx->name, s->ctx->out, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    char *names[MAX_JOURNALS];
    size_t count = 0;
    int code = 0;
    struct dirent *de;
    while (code == 0 && (de = readdir(dir)) != NULL) {
        if (!journal_name(s, de->d_name))
            continue;
        if (count == MAX_JOURNALS)
            code = CLI_EXIT_USAGE;
        else if ((names[count++] = strdup(de->d_name)) == NULL)
            code = exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
    }
    closedir(dir);
    if (code == CLI_EXIT_USAGE)
        fprintf(stderr, "%s: more than %d journals of this experiment in %s\n", s->ctx->name,
                MAX_JOURNALS, s->ctx->out);
    /* Sorted: the first record of a configuration wins, so the choice must
     * not depend on readdir's order. */
    if (code == 0)
        qsort(names, count, sizeof *names, cmp_names);
    for (size_t i = 0; i < count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", s->ctx->out, names[i] ? names[i] : "");
        size_t end = 0;
        if (code == 0)
            code = journal_load(s, path, &end);
        if (code == 0 && strcmp(path, s->journal) == 0)
            s->journal_keep = end; /* appending continues after the intact records */
        if (code == 0 && (s->loaded[s->nloaded++] = strdup(path)) == NULL)
            code = exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
        free(names[i]);
    }
    return code;
}

static void sweep_journal_path(sweep *s)
{
    if (s->size > 1)
        snprintf(s->journal, sizeof s->journal, "%s/%s.rank-%d-of-%d.journal", s->ctx->out,
                 s->ctx->name, s->rank, s->size);
    else if (s->ctx->shard != NULL)
        snprintf(s->journal, sizeof s->journal, "%s/%s.shard-%zu-of-%zu.journal", s->ctx->out,
                 s->ctx->name, s->ctx->shard_i, s->ctx->shard_k);
    else
        snprintf(s->journal, sizeof s->journal, "%s/%s.journal", s->ctx->out, s->ctx->name);
}

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Open this process's journal for appending: keep the intact records that
 * --resume loaded (cutting a torn tail), else start it afresh with the
 * header line. */
static int journal_open(sweep *s)
{
    char header[512];
    journal_header(s, header, sizeof header);
    size_t keep = s->journal_keep;
    s->jfd = open(s->journal, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (s->jfd < 0 || ftruncate(s->jfd, (off_t)keep) != 0 || lseek(s->jfd, 0, SEEK_END) < 0 ||
        (keep == 0 && write_all(s->jfd, header, strlen(header)) != 0) || fsync(s->jfd) != 0) {
        fprintf(stderr, "%s: cannot write the journal %s: %s\n", s->ctx->name, s->journal,
                strerror(errno));
        return CLI_EXIT_INTERNAL;
    }
    return 0;
}

static int journal_append(sweep *s, size_t index, const sweep_entry *en)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&buf, &n);
    int bad = mem == NULL || record_write(s, index, en, mem) != 0;
    if (mem != NULL && fclose(mem) != 0)
        bad = 1;
    if (!bad && (write_all(s->jfd, buf, n) != 0 || fsync(s->jfd) != 0))
        bad = 1;
    free(buf);
    if (bad) {
        fprintf(stderr, "%s: cannot append to the journal %s: %s\n", s->ctx->name, s->journal,
                strerror(errno));
        return CLI_EXIT_INTERNAL;
    }
    return 0;
}

/* ---- computing one configuration ---- */

int exp_sweep_state(exp_sweep_record *rec, const void *state, size_t len)
{
    unsigned char *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        return AR_ENOMEM;
    if (len > 0)
        memcpy(copy, state, len);
    free(rec->state);
    rec->state = copy;
    rec->state_len = len;
    return AR_OK;
}

static void record_release(exp_sweep_record *rec, size_t nfiles)
{
    for (size_t k = 0; k < nfiles; k++) {
        if (rec->fp[k] != NULL)
            fclose(rec->fp[k]);
        free(rec->text[k]);
    }
    free(rec->state);
    memset(rec, 0, sizeof *rec);
}

/* Run configuration i into a fresh entry. */
static int compute_entry(sweep *s, size_t i, sweep_entry *en)
{
    size_t nfiles = s->spec->nfiles;
    exp_sweep_record rec;
    memset(&rec, 0, sizeof rec);
    memset(en, 0, sizeof *en);
    for (size_t k = 0; k < nfiles; k++)
        if ((rec.fp[k] = open_memstream(&rec.text[k], &rec.len[k])) == NULL) {
            record_release(&rec, nfiles);
            return exp_fail(s->ctx, AR_ENOMEM, NULL, "memory stream");
        }
    int code = s->spec->run(s->user, i, &rec);
    for (size_t k = 0; k < nfiles; k++) {
        if (fclose(rec.fp[k]) != 0 && code == 0)
            code = exp_fail(s->ctx, AR_ENOMEM, NULL, "memory stream");
        rec.fp[k] = NULL;
    }
    size_t total = rec.state_len;
    for (size_t k = 0; k < nfiles; k++)
        total += rec.len[k];
    if (code == 0 && (en->payload = malloc(total > 0 ? total : 1)) == NULL)
        code = exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
    if (code == 0) {
        size_t off = 0;
        for (size_t k = 0; k < nfiles; k++) {
            memcpy(en->payload + off, rec.text[k], rec.len[k]);
            en->len[k] = rec.len[k];
            off += rec.len[k];
        }
        if (rec.state_len > 0)
            memcpy(en->payload + off, rec.state, rec.state_len);
        en->len[nfiles] = rec.state_len;
        en->present = 1;
    }
    record_release(&rec, nfiles);
    return code;
}

/* ---- work order ---- */

typedef struct cost_item {
    double cost;
    size_t index;
} cost_item;

static int cmp_cost(const void *a, const void *b)
{
    const cost_item *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1; /* most expensive first */
    return (x->index > y->index) - (x->index < y->index);
}

/* All configurations, most expensive first.  Independent of what is done,
 * so every shard and rank computes the same order. */
static size_t *work_order(const sweep *s)
{
    size_t n = s->spec->nconfigs;
    cost_item *items = malloc((n > 0 ? n : 1) * sizeof *items);
    size_t *order = malloc((n > 0 ? n : 1) * sizeof *order);
    if (items == NULL || order == NULL) {
        free(items);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        items[i].index = i;
        items[i].cost = s->spec->cost ? s->spec->cost(s->user, i) : 0.0;
    }
    qsort(items, n, sizeof *items, cmp_cost);
    for (size_t i = 0; i < n; i++)
        order[i] = items[i].index;
    free(items);
    return order;
}

static void describe(const sweep *s, size_t i, char *buf, size_t len)
{
    if (s->spec->describe != NULL)
        s->spec->describe(s->user, i, buf, len);
    else
        snprintf(buf, len, "configuration %zu", i);
}

static int compute_one(sweep *s, size_t i, size_t *computed, size_t todo)
{
    char what[256];
    describe(s, i, what, sizeof what);
    exp_progress(s->ctx, "[%zu/%zu] %s", *computed + 1, todo, what);
    sweep_entry en;
    int code = compute_entry(s, i, &en);
    if (code == 0)
        code = journal_append(s, i, &en);
    if (code == 0) {
        sweep_insert(s, i, &en);
        (*computed)++;
    }
    entry_clear(&en);
    return code;
}

/* Serial or one shard: this process's configurations in work order. */
static int compute_local(sweep *s, const size_t *order)
{
    size_t n = s->spec->nconfigs, k = s->ctx->shard ? s->ctx->shard_k : 1,
           me = s->ctx->shard ? s->ctx->shard_i : 0, todo = 0, computed = 0;
    for (size_t p = me; p < n; p += k)
        todo += !s->entries[order[p]].present;
    if (todo < n)
        exp_progress(s->ctx, "%zu configurations to compute (%zu already in journals)", todo,
                     s->present);
    int code = 0;
    for (size_t p = me; code == 0 && p < n && !stop_signal; p += k)
        if (!s->entries[order[p]].present)
            code = compute_one(s, order[p], &computed, todo);
    return code;
}

/* ---- MPI ---- */

#ifdef EXP_HAVE_MPI
static int mpi_started;

static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]) != NULL)
            return 1;
    return 0;
}

static void mpi_setup(sweep *s)
{
    if (!launched_by_mpi())
        return;
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
        MPI_Init(NULL, NULL);
        mpi_started = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->size);
    snprintf(s->ctx->tag, sizeof s->ctx->tag, "[rank %d/%d]", s->rank, s->size);
}

/* Ranks draw positions of the work order from one counter on rank 0
 * (passive-target atomics), so a rank that finishes early takes the next
 * configuration: dynamic load balancing without a rank that only
 * coordinates. */
static int compute_mpi(sweep *s, const size_t *order)
{
    size_t n = s->spec->nconfigs, todo = n - s->present, computed = 0;
    size_t *pending = malloc((todo > 0 ? todo : 1) * sizeof *pending), np = 0;
    if (pending == NULL)
        return exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
    for (size_t p = 0; p < n; p++)
        if (!s->entries[order[p]].present)
            pending[np++] = order[p];
    long *counter = NULL;
    MPI_Win win;
    MPI_Win_allocate(s->rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &counter, &win);
    if (s->rank == 0)
        *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int code = 0;
    const long one = 1;
    while (code == 0 && !stop_signal) {
        long got;
        MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        if (got < 0 || (size_t)got >= np)
            break;
        code = compute_one(s, pending[got], &computed, np);
    }
    MPI_Win_unlock_all(win);
    if (code != 0) /* a failing rank must not leave the others waiting */
        MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Win_free(&win);
    free(pending);
    exp_progress(s->ctx, "computed %zu configurations", computed);
    return 0;
}

/* Records computed by this rank (present, not loaded) as one buffer. */
static int encode_own(const sweep *s, const unsigned char *own, char **buf, size_t *n)
{
    FILE *mem = open_memstream(buf, n);
    if (mem == NULL)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < s->spec->nconfigs && !bad; i++)
        if (own[i])
            bad = record_write(s, i, &s->entries[i], mem) != 0;
    return fclose(mem) != 0 || bad ? -1 : 0;
}

/* Gather every rank's new records on rank 0. */
static int gather_mpi(sweep *s, const unsigned char *own)
{
    char *buf = NULL;
    size_t n = 0;
    if (encode_own(s, own, &buf, &n) != 0 || n > INT32_MAX)
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_INTERNAL);
    int mine = (int)n, *counts = NULL, *displs = NULL;
    char *all = NULL;
    if (s->rank == 0) {
        counts = calloc((size_t)s->size, sizeof *counts);
        displs = calloc((size_t)s->size, sizeof *displs);
        if (counts == NULL || displs == NULL)
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_INTERNAL);
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (s->rank == 0) {
        for (int r = 0; r < s->size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        if (total > INT32_MAX || (all = malloc(total > 0 ? total : 1)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_INTERNAL);
    }
    MPI_Gatherv(buf, mine, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (s->rank == 0)
        for (int r = 1; r < s->size; r++) {
            size_t end = (size_t)displs[r] + (size_t)counts[r];
            size_t pos = sweep_absorb_records(s, all, end, (size_t)displs[r]);
            if (pos != end) {
                fprintf(stderr, "%s: garbled records from rank %d\n", s->ctx->name, r);
                MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_INTERNAL);
            }
        }
    free(buf);
    free(all);
    free(counts);
    free(displs);
    return 0;
}

/* The largest signal any rank caught, so all ranks agree to stop. */
static int agree_stop(void)
{
    int mine = stop_signal, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

void exp_sweep_shutdown(void)
{
    int fin = 0;
    if (mpi_started && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    mpi_started = 0;
}
#else
void exp_sweep_shutdown(void)
{
}
#endif

/* ---- assembling the outputs ---- */

static void missing_message(const sweep *s, const char *how)
{
    size_t n = s->spec->nconfigs, first = n;
    for (size_t i = 0; i < n && first == n; i++)
        if (!s->entries[i].present)
            first = i;
    char what[256];
    describe(s, first, what, sizeof what);
    fprintf(stderr,
            "%s: %s: %zu of %zu configurations missing from the journals in %s "
            "(first: #%zu, %s); run the missing shards, or --resume to compute them here\n",
            s->ctx->name, how, n - s->present, n, s->ctx->out, first, what);
}

/* Hand every configuration's state to absorb, in index order.  The state
 * sits after the texts in the payload, at any byte offset: it is copied into
 * a malloc'd buffer, aligned for any type, before absorb reads it. */
static int absorb_all(sweep *s)
{
    const exp_sweep_spec *spec = s->spec;
    if (spec->absorb == NULL)
        return 0;
    size_t cap = 0;
    for (size_t i = 0; i < spec->nconfigs; i++)
        if (s->entries[i].len[spec->nfiles] > cap)
            cap = s->entries[i].len[spec->nfiles];
    unsigned char *aligned = malloc(cap > 0 ? cap : 1);
    if (aligned == NULL)
        return exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
    int code = 0;
    for (size_t i = 0; code == 0 && i < spec->nconfigs; i++) {
        const sweep_entry *en = &s->entries[i];
        size_t len = en->len[spec->nfiles], off = entry_total(s, en) - len;
        if (len > 0)
            memcpy(aligned, en->payload + off, len);
        code = spec->absorb(s->user, i, len > 0 ? aligned : NULL, len);
    }
    free(aligned);
    return code;
}

static int write_outputs(sweep *s)
{
    const exp_sweep_spec *spec = s->spec;
    int code = absorb_all(s);
    if (code != 0)
        return code;
    exp_csv csv[EXP_SWEEP_MAX_FILES];
    memset(csv, 0, sizeof csv);
    for (size_t k = 0; code == 0 && k < spec->nfiles; k++) {
        code = exp_csv_open(s->ctx, &csv[k], spec->files[k], spec->headers[k]);
        size_t off = 0;
        for (size_t i = 0; code == 0 && i < spec->nconfigs; i++) {
            const sweep_entry *en = &s->entries[i];
            off = 0;
            for (size_t j = 0; j < k; j++)
                off += en->len[j];
            if (en->len[k] > 0 && fwrite(en->payload + off, 1, en->len[k], csv[k].fp) != en->len[k])
                code = exp_fail(s->ctx, AR_EIO, NULL, "writing a CSV");
        }
    }
    for (size_t k = 0; code == 0 && k < spec->nfiles; k++)
        code = exp_csv_commit(s->ctx, &csv[k]);
    for (size_t k = 0; k < spec->nfiles; k++)
        exp_csv_abort(&csv[k]);
    return code;
}

/* After a complete sweep the journals have served their purpose. */
static void remove_journals(sweep *s)
{
    for (size_t i = 0; i < s->nloaded; i++)
        unlink(s->loaded[i]);
    if (s->journal[0] != '\0')
        unlink(s->journal);
#ifdef EXP_HAVE_MPI
    for (int r = 1; r < s->size; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.rank-%d-of-%d.journal", s->ctx->out, s->ctx->name, r,
                 s->size);
        unlink(path);
    }
#endif
}

static void sweep_free(sweep *s)
{
    if (s->entries != NULL)
        for (size_t i = 0; i < s->spec->nconfigs; i++)
            entry_clear(&s->entries[i]);
    free(s->entries);
    for (size_t i = 0; i < s->nloaded; i++)
        free(s->loaded[i]);
    if (s->jfd >= 0)
        close(s->jfd);
}

static int interrupted_status(const sweep *s, int sig)
{
    fprintf(stderr,
            "%s%s: interrupted by %s with %zu of %zu configurations done; they are kept in %s: "
            "rerun the same command with --resume\n",
            s->ctx->name, s->ctx->tag, sig == SIGINT ? "SIGINT" : "SIGTERM", s->present,
            s->spec->nconfigs, s->journal);
    return 128 + sig;
}

static int sweep_compute(sweep *s, const size_t *order, int *sig)
{
    int code = 0;
#ifdef EXP_HAVE_MPI
    if (s->size > 1) {
        unsigned char *own = calloc(s->spec->nconfigs + 1, 1);
        if (own == NULL)
            return exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
        unsigned char *before = calloc(s->spec->nconfigs + 1, 1);
        for (size_t i = 0; before && i < s->spec->nconfigs; i++)
            before[i] = (unsigned char)s->entries[i].present;
        code = before ? compute_mpi(s, order) : exp_fail(s->ctx, AR_ENOMEM, NULL, "allocation");
        for (size_t i = 0; code == 0 && i < s->spec->nconfigs; i++)
            own[i] = (unsigned char)(s->entries[i].present && !before[i]);
        *sig = code == 0 ? agree_stop() : 0;
        if (code == 0 && *sig == 0)
            code = gather_mpi(s, own);
        free(own);
        free(before);
        return code;
    }
#endif
    code = compute_local(s, order);
    *sig = stop_signal;
    return code;
}

int exp_sweep_run(exp_ctx *ctx, const exp_sweep_spec *spec, void *user)
{
    if (spec->nfiles > EXP_SWEEP_MAX_FILES)
        return exp_fail(ctx, AR_EINVAL, NULL, "too many per-configuration files");
    sweep s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.spec = spec;
    s.user = user;
    s.jfd = -1;
    s.size = 1;
    s.signature = sweep_signature(ctx, spec);
#ifdef EXP_HAVE_MPI
    mpi_setup(&s);
    if (s.size > 1 && (ctx->shard != NULL || ctx->merge)) {
        if (s.rank == 0)
            fprintf(stderr, "%s: --shard and --merge are for runs without mpirun\n", ctx->name);
        return CLI_EXIT_USAGE;
    }
#endif
    s.entries = calloc(spec->nconfigs + 1, sizeof *s.entries);
    size_t *order = work_order(&s);
    if (s.entries == NULL || order == NULL) {
        free(order);
        sweep_free(&s);
        return exp_fail(ctx, AR_ENOMEM, NULL, "allocation");
    }
    int code = 0, sig = 0;
    if (!ctx->merge)
        sweep_journal_path(&s);
    if (ctx->resume || ctx->merge)
        code = sweep_load_journals(&s);
#ifdef EXP_HAVE_MPI
    if (s.size > 1) /* nobody writes a journal before all have read them */
        MPI_Barrier(MPI_COMM_WORLD);
#endif
    if (code == 0 && ctx->merge) {
        if (s.present < spec->nconfigs) {
            missing_message(&s, "--merge");
            code = CLI_EXIT_USAGE;
        }
    } else if (code == 0) {
        saved_handlers saved;
        catch_stop_signals(&saved);
        code = journal_open(&s);
        if (code == 0)
            code = sweep_compute(&s, order, &sig);
        restore_stop_signals(&saved);
    }
    free(order);
    if (code == 0 && sig != 0)
        code = interrupted_status(&s, sig);
    if (code == 0 && (ctx->shard != NULL || s.rank != 0)) {
        if (ctx->shard != NULL)
            exp_progress(ctx, "shard %zu/%zu done: %s; write the CSVs with --merge once every "
                         "shard is done", ctx->shard_i, ctx->shard_k, s.journal);
        sweep_free(&s);
        return EXP_SWEEP_NOT_ROOT;
    }
    if (code == 0 && s.present < spec->nconfigs) {
        missing_message(&s, "internal");
        code = CLI_EXIT_INTERNAL;
    }
    if (code == 0)
        code = write_outputs(&s);
    if (code == 0)
        remove_journals(&s);
    sweep_free(&s);
    return code;
}
