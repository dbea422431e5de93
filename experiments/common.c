/* Shared plumbing of the experiment programs (see common.h). */
#include "common.h"
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double exp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int exp_parse(exp_ctx *ctx, const cli_command_doc *doc, int argc, char **argv,
              const cli_option *extra, size_t nextra)
{
    return exp_parse_ex(ctx, doc, NULL, argc, argv, extra, nextra);
}

/* --shard I/K: two decimal integers, 0 <= I < K.  Returns -1 when fine. */
static int parse_shard(exp_ctx *ctx)
{
    if (ctx->merge && (ctx->resume || ctx->shard != NULL))
        return cli_usage_error(ctx->name, "--merge computes nothing: not with --resume or --shard");
    if (ctx->shard == NULL)
        return -1;
    const char *p = ctx->shard;
    size_t v[2] = {0, 0};
    for (int part = 0; part < 2; part++) {
        if (*p < '0' || *p > '9')
            return cli_usage_error(ctx->name, "--shard: '%s' is not I/K (e.g. 0/4)", ctx->shard);
        for (; *p >= '0' && *p <= '9'; p++) {
            if (v[part] > 100000000)
                return cli_usage_error(ctx->name, "--shard: '%s' is too large", ctx->shard);
            v[part] = v[part] * 10 + (size_t)(*p - '0');
        }
        if (part == 0 && *p++ != '/')
            return cli_usage_error(ctx->name, "--shard: '%s' is not I/K (e.g. 0/4)", ctx->shard);
    }
    if (*p != '\0')
        return cli_usage_error(ctx->name, "--shard: '%s' is not I/K (e.g. 0/4)", ctx->shard);
    if (v[1] == 0 || v[0] >= v[1])
        return cli_usage_error(ctx->name, "--shard %s: need 0 <= I < K", ctx->shard);
    ctx->shard_i = v[0];
    ctx->shard_k = v[1];
    return -1;
}

int exp_parse_ex(exp_ctx *ctx, const cli_command_doc *doc, const exp_defaults *defaults,
                 int argc, char **argv, const cli_option *extra, size_t nextra)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->name = doc->name;
    ctx->t_start = exp_now();
    snprintf(ctx->out_default, sizeof ctx->out_default, "out/%s", doc->name);
    ctx->out = ctx->out_default;
    ctx->threads = 1;
    if (defaults != NULL) {
        if (defaults->out != NULL)
            ctx->out = defaults->out;
        ctx->figures = defaults->figures;
        ctx->plots = defaults->plots;
    }
    snprintf(ctx->help_out, sizeof ctx->help_out, "CSV directory (default %.200s)", ctx->out);
    if (ctx->figures != NULL)
        snprintf(ctx->help_figures, sizeof ctx->help_figures,
                 "figure directory (default %.200s; 'none' skips figures)", ctx->figures);
    else
        snprintf(ctx->help_figures, sizeof ctx->help_figures,
                 "figure directory (default: the --out DIR; 'none' skips figures)");
    if (ctx->plots != NULL)
        snprintf(ctx->help_plots, sizeof ctx->help_plots, "gnuplot scripts (default %.200s)",
                 ctx->plots);
    else
        snprintf(ctx->help_plots, sizeof ctx->help_plots,
                 "gnuplot scripts (default: experiments/plots of the source tree)");
    cli_setup_process();
    cli_option opts[EXP_MAX_OPTIONS];
    const cli_option common[] = {
        {"--quick", CLI_SWITCH, &ctx->quick, NULL, "small sizes, seconds (the default)", 0, NULL},
        {"--full", CLI_SWITCH, &ctx->full, NULL, "the documented full sizes", 0, NULL},
        {"--seed", CLI_U64, &ctx->seed, "S", "base seed (default 0)", 0, NULL},
        {"--out", CLI_STRING, &ctx->out, "DIR", ctx->help_out, 0, NULL},
        {"--figures", CLI_STRING, &ctx->figures, "DIR", ctx->help_figures, 0, NULL},
        {"--plots", CLI_STRING, &ctx->plots, "DIR", ctx->help_plots, 0, NULL},
        {"--quiet", CLI_SWITCH, &ctx->quiet, NULL, "no progress lines on stderr", 0, NULL},
        {"--threads", CLI_SIZE, &ctx->threads, "T",
         "BLAS threads (default 1); byte-identical reruns need the same T", 1, NULL},
        {"--resume", CLI_SWITCH, &ctx->resume, NULL,
         "reuse the configurations finished by an interrupted run (journals in DIR)", 0, NULL},
        {"--shard", CLI_STRING, &ctx->shard, "I/K",
         "compute only shard I of K (0 <= I < K); then write the CSVs with --merge", 0, NULL},
        {"--merge", CLI_SWITCH, &ctx->merge, NULL,
         "write the CSVs from the shards' journals in DIR, computing nothing", 0, NULL},
    };
    size_t ncommon = sizeof common / sizeof common[0];
    if (ncommon + nextra > EXP_MAX_OPTIONS)
        return cli_usage_error(ctx->name, "too many options (internal limit %d)", EXP_MAX_OPTIONS);
    memcpy(opts, common, sizeof common);
    if (nextra > 0)
        memcpy(opts + ncommon, extra, nextra * sizeof *extra);
    int code = cli_parse(doc, argc, argv, opts, ncommon + nextra, NULL, 0, NULL);
    if (code >= 0)
        return code;
    if (ctx->quick && ctx->full)
        return cli_usage_error(ctx->name, "give --quick or --full, not both");
    ctx->argc = argc;
    ctx->argv = argv;
    cli_set_blas_threads((int)(ctx->threads < 64 ? ctx->threads : 64));
    code = parse_shard(ctx);
    if (code >= 0)
        return code;
    if (ctx->out[0] == '\0')
        return cli_usage_error(ctx->name, "--out needs a directory");
    ar_error err = {{0}};
    int rc = ar_mkdir_p(ctx->out, &err);
    if (rc != AR_OK)
        return exp_fail(ctx, rc, &err, "cannot create the output directory");
    return -1;
}

void exp_progress(const exp_ctx *ctx, const char *fmt, ...)
{
    if (ctx->quiet)
        return;
    /* One write per line, so the lines of MPI ranks sharing stderr do not
     * interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "%s%s: ", ctx->name, ctx->tag);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = m < 0 ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
    fflush(stderr);
}

int exp_fail(const exp_ctx *ctx, int status, const ar_error *err, const char *what)
{
    ar_error text = {{0}};
    if (err != NULL)
        snprintf(text.msg, sizeof text.msg, "%s", err->msg);
    ar_option_render(text.msg, AR_OPTION_STYLE_CLI); /* library messages name flags as tokens */
    fprintf(stderr, "%s: %s%s%s (%s)\n", ctx->name, what ? what : "",
            what && text.msg[0] ? ": " : "", text.msg, ar_strerror(status));
    return CLI_EXIT_INTERNAL;
}

int exp_csv_open(const exp_ctx *ctx, exp_csv *csv, const char *file, const char *header)
{
    char path[4096];
    ar_error err = {{0}};
    memset(csv, 0, sizeof *csv);
    snprintf(path, sizeof path, "%s/%s", ctx->out, file);
    int rc = ar_atomic_open(&csv->af, path, &err);
    if (rc != AR_OK)
        return exp_fail(ctx, rc, &err, "cannot open a CSV");
    csv->fp = open_memstream(&csv->text, &csv->len);
    if (csv->fp == NULL) {
        ar_atomic_abort(csv->af);
        return exp_fail(ctx, AR_ENOMEM, NULL, "cannot buffer a CSV");
    }
    csv->open = 1;
    snprintf(csv->file, sizeof csv->file, "%s", file);
    fputs(header, csv->fp);
    fputc('\n', csv->fp);
    return 0;
}

int exp_csv_commit(const exp_ctx *ctx, exp_csv *csv)
{
    if (!csv->open)
        return 0;
    ar_error err = {{0}};
    csv->open = 0;
    int bad = fclose(csv->fp) != 0;
    csv->fp = NULL;
    if (!bad)
        ar_atomic_write(csv->af, csv->text, csv->len, NULL); /* a failure is the commit's */
    int rc = bad ? (ar_atomic_abort(csv->af), ar_error_set(&err, AR_ENOMEM, "%s: out of memory",
                                                            csv->file))
                 : ar_atomic_commit(csv->af, &err);
    free(csv->text);
    csv->text = NULL;
    if (rc != AR_OK)
        return exp_fail(ctx, rc, &err, "cannot write a CSV");
    exp_progress(ctx, "wrote %s/%s", ctx->out, csv->file);
    return 0;
}

void exp_csv_abort(exp_csv *csv)
{
    if (csv->open) {
        fclose(csv->fp);
        free(csv->text);
        ar_atomic_abort(csv->af);
    }
    csv->fp = NULL;
    csv->text = NULL;
    csv->open = 0;
}

void exp_csv_real(FILE *fp, double x)
{
    if (isnan(x))
        fputs("nan", fp);
    else if (isinf(x))
        fputs(x > 0 ? "inf" : "-inf", fp);
    else
        fprintf(fp, "%.12g", x == 0.0 ? 0.0 : x); /* no "-0" */
}

/* ---- gnuplot ---- */

static int file_exists(const char *path)
{
    return access(path, R_OK) == 0;
}

static int script_in(const char *dir, const char *script, char *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%.3900s/%.150s.gp", dir, script);
    if (!file_exists(path))
        return 0;
    snprintf(buf, len, "%s", dir);
    return 1;
}

const char *exp_plots_dir(const exp_ctx *ctx, const char *script, char *buf, size_t len)
{
    if (ctx->plots != NULL)
        return script_in(ctx->plots, script, buf, len) ? buf : NULL;
    const char *env = getenv("AR_PLOTS_DIR");
    if (env != NULL && env[0] && script_in(env, script, buf, len))
        return buf;
    if (script_in("experiments/plots", script, buf, len))
        return buf;
    /* The executable sits in <build>/experiments/; a build directory at the
     * top of the source tree puts the scripts at ../../experiments/plots. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            char dir[4096];
            if ((size_t)snprintf(dir, sizeof dir, "%.4000s/../../experiments/plots", exe) >=
                sizeof dir)
                return NULL;
            if (script_in(dir, script, buf, len))
                return buf;
        }
    }
    return NULL;
}

/* gnuplot -e VARS SCRIPT, no shell involved; stdout of gnuplot goes to
 * stderr so the experiment's stdout stays clean. */
static int run_gnuplot(const char *vars, const char *script)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(2, 1);
        execlp("gnuplot", "gnuplot", "-e", vars, script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Single quotes cannot be escaped inside a gnuplot '...' string. */
static int quotable(const char *s)
{
    return strchr(s, '\'') == NULL;
}

int exp_render(const exp_ctx *ctx, const char *script, const char *const *outputs,
               size_t noutputs, const char *vars)
{
    const char *figdir = ctx->figures != NULL ? ctx->figures : ctx->out;
    if (strcmp(figdir, "none") == 0)
        return 0;
    if (!cli_have_program("gnuplot")) {
        fprintf(stderr, "%s: warning: gnuplot not found, figure %s skipped (data in %s)\n",
                ctx->name, script, ctx->out);
        return 0;
    }
    char plots[4096];
    if (exp_plots_dir(ctx, script, plots, sizeof plots) == NULL) {
        fprintf(stderr,
                "%s: warning: %s.gp not found (give --plots DIR or set AR_PLOTS_DIR), "
                "figure skipped\n",
                ctx->name, script);
        return 0;
    }
    if (!quotable(figdir) || !quotable(ctx->out) || !quotable(plots)) {
        fprintf(stderr, "%s: warning: a path contains a single quote, figure %s skipped\n",
                ctx->name, script);
        return 0;
    }
    ar_error err = {{0}};
    int rc = ar_mkdir_p(figdir, &err);
    if (rc != AR_OK)
        return exp_fail(ctx, rc, &err, "cannot create the figure directory");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.tmp.%s.XXXXXX", figdir, script);
    if (mkdtemp(tmp) == NULL) {
        fprintf(stderr, "%s: cannot create a temporary directory in %s: %s\n", ctx->name, figdir,
                strerror(errno));
        return CLI_EXIT_INTERNAL;
    }
    char path[8192], cmd[16384];
    snprintf(path, sizeof path, "%s/%s.gp", plots, script);
    snprintf(cmd, sizeof cmd, "datadir='%s'; outdir='%s'%s%s", ctx->out, tmp,
             vars ? "; " : "", vars ? vars : "");
    int code = 0;
    if (run_gnuplot(cmd, path) != 0) {
        fprintf(stderr, "%s: gnuplot failed on %s\n", ctx->name, path);
        code = CLI_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < noutputs; i++) {
        char from[8192], to[8192];
        snprintf(from, sizeof from, "%s/%s", tmp, outputs[i]);
        snprintf(to, sizeof to, "%s/%s", figdir, outputs[i]);
        if (code == 0 && rename(from, to) != 0) {
            fprintf(stderr, "%s: cannot move %s to %s: %s\n", ctx->name, from, to,
                    strerror(errno));
            code = CLI_EXIT_INTERNAL;
        }
        unlink(from);
    }
    if (rmdir(tmp) != 0)
        fprintf(stderr, "%s: warning: %s left behind (unexpected files from %s)\n", ctx->name,
                tmp, path);
    if (code == 0)
        exp_progress(ctx, "rendered %s.gp into %s (%zu files)", script, figdir, noutputs);
    return code;
}

int exp_finish(const exp_ctx *ctx, int code)
{
    if (code == EXP_SWEEP_NOT_ROOT)
        code = 0;
    if (!ctx->quiet)
        fprintf(stderr, "%s%s: %s in %.1f s (%s mode)\n", ctx->name, ctx->tag,
                code == 0 ? "done" : code > 128 ? "stopped" : "FAILED", exp_now() - ctx->t_start,
                ctx->full ? "full" : "quick");
    exp_sweep_shutdown();
    return code;
}
