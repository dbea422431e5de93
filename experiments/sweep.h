/* The sweep engine of the experiment programs: a list of independent
 * configurations, each computed once, journaled, and assembled into the
 * per-configuration CSVs in index order.
 *
 * What it gives every experiment (options parsed by exp_parse):
 *   --resume     reuse the configurations already in DIR's journals
 *   --shard I/K  compute only this shard's configurations (job arrays);
 *                the CSVs are written later by a run with --merge
 *   --merge      write the CSVs from the shards' journals, computing nothing
 *   mpirun -n P  (built with -Dmpi=enabled) the ranks draw configurations
 *                from one shared counter, most expensive first; rank 0
 *                gathers them and writes the CSVs
 *
 * Journals.  Each finished configuration is appended to a journal in the
 * --out DIR and flushed to disk (fsync) before the next one starts:
 *   NAME.journal                serial run
 *   NAME.shard-I-of-K.journal   --shard I/K
 *   NAME.rank-R-of-P.journal    rank R of an MPI run of P processes
 * A journal starts with a line naming the experiment, a signature of the
 * options that change results (everything but --out, --figures, --plots,
 * --quiet, --resume, --shard, --merge) and the number of configurations;
 * --resume and --merge refuse journals whose signature differs.  Records
 * carry their length and an FNV-1a checksum, so a record torn by a kill is
 * recognised and computed again.  A run that completes removes the
 * journals it used.
 *
 * Interrupts.  SIGINT and SIGTERM stop the sweep after the configuration
 * being computed (a second signal kills at once); the journal keeps every
 * finished configuration, no CSV is half-written (they are written only
 * when all configurations are present, each atomically), and the exit
 * status is 128 + the signal.
 *
 * Output is identical whichever way the configurations were computed
 * (serial, resumed, sharded and merged, MPI): records are assembled in
 * index order and each configuration's seed derives from the base seed and
 * the configuration, not from the order of computation. */
#ifndef ATTNRANK_EXPERIMENTS_SWEEP_H
#define ATTNRANK_EXPERIMENTS_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "common.h"

#define EXP_SWEEP_MAX_FILES 8

/* exp_sweep_run's answer when this process has done its part but must not
 * write summaries or figures: a shard, or an MPI rank other than 0. */
#define EXP_SWEEP_NOT_ROOT (-1)

/* What one configuration produces: rows for each per-configuration CSV
 * (write them with fprintf into fp[k]) and optionally a state blob from
 * which the experiment rebuilds its in-memory results (exp_sweep_state). */
typedef struct exp_sweep_record {
    FILE *fp[EXP_SWEEP_MAX_FILES];
    char *text[EXP_SWEEP_MAX_FILES];
    size_t len[EXP_SWEEP_MAX_FILES];
    unsigned char *state;
    size_t state_len;
} exp_sweep_record;

typedef struct exp_sweep_spec {
    size_t nconfigs;
    size_t nfiles;                   /* per-configuration CSVs, 0..EXP_SWEEP_MAX_FILES */
    const char *const *files;        /* their names in --out DIR */
    const char *const *headers;      /* their header lines (no newline) */
    /* Compute configuration i: rows into rec->fp[k], state with
     * exp_sweep_state.  Returns 0 or an exit status (after a message). */
    int (*run)(void *user, size_t i, exp_sweep_record *rec);
    /* Optional: called for every configuration in index order, after all
     * are present and before the CSVs are written, with the state that run
     * stored (NULL, 0 when none), aligned for any type (a copy valid only
     * during the call). */
    int (*absorb)(void *user, size_t i, const void *state, size_t len);
    /* Optional: relative cost of configuration i; MPI ranks and shards take
     * the most expensive first (ties: lower index first). */
    double (*cost)(void *user, size_t i);
    /* Optional: a short description of configuration i for progress lines. */
    void (*describe)(void *user, size_t i, char *buf, size_t len);
} exp_sweep_spec;

/* Store a copy of len bytes as the record's state (replaces an earlier
 * one).  Returns 0 or AR_ENOMEM. */
int exp_sweep_state(exp_sweep_record *rec, const void *state, size_t len);

/* Run the sweep as the options of ctx say.  Returns
 *   0                  all configurations present, CSVs written: go on to
 *                      summaries and figures;
 *   EXP_SWEEP_NOT_ROOT this process's part is done (shard, MPI rank > 0):
 *                      return exp_finish(ctx, 0) without further output;
 *   > 0                an exit status (2: unusable journals or a merge with
 *                      configurations missing; 3: internal; 128 + signal
 *                      after an interrupt). */
int exp_sweep_run(exp_ctx *ctx, const exp_sweep_spec *spec, void *user);

/* Finish MPI if the sweep started it (every experiment calls it through
 * exp_finish; harmless otherwise). */
void exp_sweep_shutdown(void);

#endif
