/* libFuzzer target: the .npy reader.
 *
 * Each input is a whole .npy image.  It is parsed from memory
 * (ar_npy_parse), read as a regular file (ar_npy_read on a memfd: size known,
 * so truncation and trailing bytes are caught before allocating) and read
 * from a pipe (size unknown: the streaming path).  All three must agree. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_file g_file = {-1, {0}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_file.fd < 0 && fuzz_memfd_open(&g_file, "fuzz.npy") != 0)
        fuzz_fail("memfd_create", strerror(errno));

    ar_array mem, file, piped;
    ar_error err_mem = {{0}}, err_file = {{0}}, err_pipe = {{0}};
    int rc_mem = ar_npy_parse(data, size, &mem, FUZZ_MAX_BYTES, &err_mem);
    fuzz_check_status(rc_mem, &err_mem, "npy parse");
    if (rc_mem == AR_OK)
        fuzz_check_array(&mem, "npy parse");

    fuzz_memfd_fill(&g_file, data, size);
    int rc_file = ar_npy_read(g_file.path, &file, FUZZ_MAX_BYTES, &err_file);
    fuzz_check_status(rc_file, &err_file, "npy file");
    fuzz_compare(rc_mem, &mem, rc_file, &file, "npy memory vs file");
    ar_array_free(&file);

    fuzz_file p;
    if (fuzz_pipe_open(&p, data, size) == 0) {
        int rc_pipe = ar_npy_read(p.path, &piped, FUZZ_MAX_BYTES, &err_pipe);
        close(p.fd);
        fuzz_check_status(rc_pipe, &err_pipe, "npy pipe");
        fuzz_compare(rc_mem, &mem, rc_pipe, &piped, "npy memory vs pipe");
        ar_array_free(&piped);
    }

    /* A second free of a freed array must be harmless (it is reset). */
    ar_array_free(&mem);
    ar_array_free(&mem);
    return 0;
}
