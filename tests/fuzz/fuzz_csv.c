/* libFuzzer target: the CSV reader.
 *
 * Each input is the text of a CSV file (any bytes, not NUL-terminated).  It
 * is parsed from memory (ar_csv_parse, given an exact-length copy so ASan
 * sees any read past the end), read as a regular file and from a pipe
 * (ar_csv_read_ex); all must agree. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_file g_file = {-1, {0}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_file.fd < 0 && fuzz_memfd_open(&g_file, "fuzz.csv") != 0)
        fuzz_fail("memfd_create", strerror(errno));

    /* libFuzzer's buffer is already exactly `size` bytes; a copy would not
     * add a redzone closer to the end. */
    ar_array mem, file, piped;
    ar_error err_mem = {{0}}, err_file = {{0}}, err_pipe = {{0}};
    int rc_mem = ar_csv_parse((const char *)data, size, "fuzz.csv", &mem, &err_mem);
    fuzz_check_status(rc_mem, &err_mem, "csv parse");
    if (rc_mem == AR_OK) {
        fuzz_check_array(&mem, "csv parse");
        if (mem.ndim != 2 || mem.count != 1 || mem.precision != AR_PREC_F64)
            fuzz_fail("CSV result is not one float64 matrix", NULL);
    }

    fuzz_memfd_fill(&g_file, data, size);
    int rc_file = ar_csv_read_ex(g_file.path, &file, FUZZ_MAX_BYTES, &err_file);
    fuzz_check_status(rc_file, &err_file, "csv file");
    fuzz_compare(rc_mem, &mem, rc_file, &file, "csv memory vs file");
    ar_array_free(&file);

    fuzz_file p;
    if (fuzz_pipe_open(&p, data, size) == 0) {
        int rc_pipe = ar_csv_read_ex(p.path, &piped, FUZZ_MAX_BYTES, &err_pipe);
        close(p.fd);
        fuzz_check_status(rc_pipe, &err_pipe, "csv pipe");
        fuzz_compare(rc_mem, &mem, rc_pipe, &piped, "csv memory vs pipe");
        ar_array_free(&piped);
    }
    ar_array_free(&mem);
    return 0;
}
