/* libFuzzer target: the command line, in-process through ar_cli_main.
 *
 * The input becomes an argv.  The subcommands are not listed here: at start
 * the harness runs `attnrank --help` and reads the subcommand names from it,
 * so every entry of the command table is fuzzed, including ones added later.
 * If the first input byte is below 0xE0 it picks argv[1] from that list (so
 * each subcommand gets its share of the inputs); otherwise argv[1] comes from
 * the input too (unknown names, --help, --version).  The remaining bytes are
 * split on '\n' and NUL into arguments.
 *
 * Sandbox: the harness works in a fresh temporary directory holding a few
 * small input files (m.csv, s.npy, ...: see write_fixtures), and rejects any
 * argument containing '/' or "..", so the CLI can only read and write inside
 * it.  Anything a run creates or changes there is wiped afterwards.
 * Arguments that are numbers between 64 and 1e15 are rejected too: they are
 * legal sizes whose honest computation takes minutes (the fuzzer would only
 * find timeouts); numbers above that must meet a resource guard.
 *
 * AR_FUZZ_CLI_EXCLUDE (comma-separated subcommand names) leaves out
 * subcommands whose plain invocation is a long legitimate computation
 * (scripts/fuzz excludes `verify`, which re-runs every theorem check): inputs
 * naming them are rejected.
 *
 * Contract checked on every run (docs/conventions.md, cli.h):
 *   - the exit status is 0, 1, 2 or 3;
 *   - status 2 (bad input) prints exactly one line on stderr, "attnrank ...";
 *   - status 3 prints at least one "attnrank" line on stderr;
 *   - no temporary file ("*.tmp.*") is left behind: outputs are atomic.
 * stdout goes to /dev/null; stderr is captured per run (the `stderr` stream
 * is swapped, so libFuzzer's and the sanitizers' own reports, which use the
 * file descriptor or a saved stream, still reach the terminal). */
#include "fuzz_common.h"

#include <ftw.h>
#include <sys/stat.h>

#include "cli/cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64
#define MAX_SUBCOMMANDS 64
#define SIZE_FILTER_LOW 64.0
#define SIZE_FILTER_HIGH 1e15

static char g_sandbox[256];
static char *g_subcommands[MAX_SUBCOMMANDS];
static size_t g_nsub;
static FILE *g_real_stderr;

/* ---- fixtures ---------------------------------------------------------- */

static void write_bytes(const char *name, const void *data, size_t len)
{
    FILE *fp = fopen(name, "wb");
    if (fp == NULL || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
        fuzz_fail("cannot write fixture", name);
}

static void write_text(const char *name, const char *text)
{
    write_bytes(name, text, strlen(text));
}

/* A little-endian .npy (v1.0) with the given dict and raw data. */
static void write_npy(const char *name, const char *dict, const void *data, size_t len)
{
    unsigned char buf[512];
    size_t dict_len = strlen(dict);
    size_t header = 10 + dict_len + 1;
    size_t padded = (header + 63) / 64 * 64;
    if (padded + len > sizeof buf)
        fuzz_fail("fixture too large", name);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((padded - 10) & 0xff);
    buf[9] = (unsigned char)((padded - 10) >> 8);
    memcpy(buf + 10, dict, dict_len);
    memset(buf + 10 + dict_len, ' ', padded - header);
    buf[padded - 1] = '\n';
    memcpy(buf + padded, data, len);
    write_bytes(name, buf, padded + len);
}

static void write_fixtures(void)
{
    write_text("m.csv", "2.385,0.5,-1.25\n0.75,3.5,2\n-0.125,1,4.5\n");
    write_text("p.csv", "0.5,0.25,0.125\n0.25,0.5,0.125\n0.25,0.25,0.75\n");
    write_text("x.csv", "1,0,2.5\n0,1,-0.5\n");
    write_text("r.csv", "1,2\n3\n");
    write_text("nan.csv", "1,nan\n2,3\n");
    write_text("e.csv", "");
    write_text("reg", "a regular file, so reg/out cannot be created\n");
    double s[16];
    for (int i = 0; i < 16; i++)
        s[i] = (double)((i * 7) % 11) - 2.5;
    write_npy("s.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }", s,
              sizeof s);
    float f[2 * 2 * 3];
    for (int i = 0; i < 12; i++)
        f[i] = (float)i * 0.5f - 1.0f;
    write_npy("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2, 3), }", f,
              sizeof f);
    if (mkdir("d", 0755) != 0 && errno != EEXIST)
        fuzz_fail("mkdir d", strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    if (ftw->level > 0)
        remove(path);
    return 0;
}

static void reset_sandbox(void)
{
    if (chdir(g_sandbox) != 0)
        fuzz_fail("chdir sandbox", strerror(errno));
    nftw(".", remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    write_fixtures();
}

/* ---- state of the sandbox after a run ---------------------------------- */

static const char *const g_fixture_names[] = {"m.csv", "p.csv",   "x.csv", "r.csv",
                                              "nan.csv", "e.csv", "reg",   "s.npy",
                                              "f.npy", "d"};
static struct timespec g_fixture_mtime[sizeof g_fixture_names / sizeof g_fixture_names[0]];
static int g_dirty;
static const char *g_leftover;
static char g_leftover_buf[256];

static int is_fixture(const char *name)
{
    for (size_t i = 0; i < sizeof g_fixture_names / sizeof g_fixture_names[0]; i++)
        if (strcmp(name, g_fixture_names[i]) == 0)
            return 1;
    return 0;
}

static int inspect_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    if (ftw->level == 0)
        return 0;
    const char *name = path + ftw->base;
    if (strstr(name, ".tmp.") != NULL) {
        snprintf(g_leftover_buf, sizeof g_leftover_buf, "%s", path);
        g_leftover = g_leftover_buf;
    }
    if (ftw->level > 1 || !is_fixture(name))
        g_dirty = 1;
    return 0;
}

static void record_mtimes(void)
{
    for (size_t i = 0; i < sizeof g_fixture_names / sizeof g_fixture_names[0]; i++) {
        struct stat st;
        if (stat(g_fixture_names[i], &st) != 0)
            fuzz_fail("stat fixture", g_fixture_names[i]);
        g_fixture_mtime[i] = st.st_mtim;
    }
}

static int fixtures_changed(void)
{
    for (size_t i = 0; i < sizeof g_fixture_names / sizeof g_fixture_names[0]; i++) {
        struct stat st;
        if (stat(g_fixture_names[i], &st) != 0 ||
            st.st_mtim.tv_sec != g_fixture_mtime[i].tv_sec ||
            st.st_mtim.tv_nsec != g_fixture_mtime[i].tv_nsec)
            return 1;
    }
    return 0;
}

/* ---- running the CLI --------------------------------------------------- */

/* Runs ar_cli_main with stderr captured into *text (caller frees). */
static int run_cli(int argc, char **argv, char **text, size_t *len)
{
    FILE *saved = stderr;
    FILE *capture = open_memstream(text, len);
    if (capture == NULL)
        fuzz_fail("open_memstream", strerror(errno));
    stderr = capture;
    int rc = ar_cli_main(argc, argv);
    fflush(stdout);
    stderr = saved;
    fclose(capture);
    return rc;
}

static size_t count_lines(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    if (len > 0 && text[len - 1] != '\n')
        n++;
    return n;
}

static void report_violation(const char *what, int argc, char **argv, const char *text)
{
    fprintf(g_real_stderr, "FUZZ CHECK FAILED: %s\n  argv:", what);
    for (int i = 0; i < argc; i++)
        fprintf(g_real_stderr, " '%s'", argv[i]);
    fprintf(g_real_stderr, "\n  stderr: %s\n", text ? text : "");
    fflush(g_real_stderr);
    abort();
}

static void check_contract(int rc, int argc, char **argv, const char *text, size_t len)
{
    if (rc < 0 || rc > 3)
        report_violation("exit status outside 0..3", argc, argv, text);
    int starts = len >= 8 && memcmp(text, "attnrank", 8) == 0;
    /* `attnrank` alone prints the help on stdout and exits 2: accepted. */
    if (rc == 2 && argc >= 2 && (count_lines(text, len) != 1 || !starts))
        report_violation("exit 2 without exactly one 'attnrank ...' line on stderr", argc,
                         argv, text);
    if (rc == 3 && !starts)
        report_violation("exit 3 without a message on stderr", argc, argv, text);
    g_dirty = 0;
    g_leftover = NULL;
    nftw(".", inspect_entry, 16, FTW_PHYS);
    if (g_leftover != NULL)
        report_violation("temporary file left behind", argc, argv, g_leftover);
    if (g_dirty || fixtures_changed()) {
        reset_sandbox();
        record_mtimes();
    }
}

/* ---- input to argv ----------------------------------------------------- */

/* Legal but expensive sizes are not interesting: see the file comment. */
static int expensive_number(const char *arg)
{
    const char *eq = strchr(arg, '=');
    const char *value = eq != NULL ? eq + 1 : arg;
    if (*value == '\0')
        return 0;
    char *end = NULL;
    double v = strtod(value, &end);
    if (end == value || *end != '\0')
        return 0;
    if (v < 0)
        v = -v;
    return v > SIZE_FILTER_LOW && v < SIZE_FILTER_HIGH;
}

static int excluded(const char *name)
{
    const char *list = getenv("AR_FUZZ_CLI_EXCLUDE");
    size_t n = strlen(name);
    while (list != NULL && *list != '\0') {
        const char *comma = strchr(list, ',');
        size_t len = comma ? (size_t)(comma - list) : strlen(list);
        if (len == n && n > 0 && strncmp(list, name, n) == 0)
            return 1;
        list = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int unsafe_arg(const char *arg)
{
    return strchr(arg, '/') != NULL || strstr(arg, "..") != NULL || expensive_number(arg) ||
           excluded(arg);
}

/* Split buf (NUL-terminated copy of the input) in place. */
static int split_args(char *buf, size_t len, char **args, int max)
{
    int n = 0;
    char *start = buf;
    for (size_t i = 0; i <= len && n < max; i++) {
        if (i == len || buf[i] == '\n' || buf[i] == '\0') {
            int last = i == len;
            buf[i] = '\0';
            if (!(last && start == buf + i))
                args[n++] = start;
            start = buf + i + 1;
        }
    }
    return n;
}

/* `attnrank --help` lists "  NAME   summary" under "subcommands:". */
static void discover_subcommands(void)
{
    FILE *saved = stdout;
    char *text = NULL;
    size_t len = 0;
    FILE *capture = open_memstream(&text, &len);
    if (capture == NULL)
        fuzz_fail("open_memstream", strerror(errno));
    stdout = capture;
    char *argv[] = {"attnrank", "--help", NULL};
    int rc = ar_cli_main(2, argv);
    fflush(capture);
    stdout = saved;
    fclose(capture);
    if (rc != 0 || text == NULL)
        fuzz_fail("attnrank --help failed", NULL);
    char *list = strstr(text, "subcommands:\n");
    for (char *line = list ? strchr(list, '\n') + 1 : NULL; line && *line == ' ';) {
        char *nl = strchr(line, '\n');
        char name[64];
        if (sscanf(line, " %63s", name) == 1 && g_nsub < MAX_SUBCOMMANDS && !excluded(name))
            g_subcommands[g_nsub++] = strdup(name);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (g_nsub == 0)
        fuzz_fail("no subcommands found in attnrank --help", NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int fd = dup(2);
    g_real_stderr = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (g_real_stderr == NULL)
        g_real_stderr = stderr;
    if (freopen("/dev/null", "r", stdin) == NULL)
        fuzz_fail("freopen stdin", strerror(errno));
    discover_subcommands();
    snprintf(g_sandbox, sizeof g_sandbox, "%s/attnrank-fuzz-cli.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(g_sandbox) == NULL)
        fuzz_fail("mkdtemp", strerror(errno));
    reset_sandbox();
    record_mtimes();
    stdout = fopen("/dev/null", "w");
    if (stdout == NULL)
        fuzz_fail("open /dev/null", strerror(errno));
    fprintf(g_real_stderr, "fuzz_cli: %zu subcommands, sandbox %s\n", g_nsub, g_sandbox);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096)
        return -1;
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return -1;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 3];
    int argc = 0;
    argv[argc++] = "attnrank";
    size_t skip = 0;
    if ((unsigned char)buf[0] < 0xE0) {
        argv[argc++] = g_subcommands[(unsigned char)buf[0] % g_nsub];
        skip = 1;
    }
    argc += split_args(buf + skip, size - skip, argv + argc, MAX_ARGS);
    argv[argc] = NULL;
    for (int i = 1; i < argc; i++)
        if (unsafe_arg(argv[i])) {
            free(buf);
            return -1;
        }
    char *text = NULL;
    size_t len = 0;
    int rc = run_cli(argc, argv, &text, &len);
    check_contract(rc, argc, argv, text, len);
    free(text);
    free(buf);
    return 0;
}
