/* libFuzzer target: the safetensors reader and the weights analysis on it.
 *
 * Each input is one safetensors image.  It is parsed from memory
 * (ar_safetensors_parse) and opened as a file (ar_safetensors_open on a
 * memfd, through mmap); both must agree on the verdict, the tensors and
 * their bytes.  Every readable float tensor of at most two dimensions is
 * converted (ASan checks the reads stay inside the image), and the QK
 * analysis runs with one head so that any tensor named like a BERT, GPT-2 or
 * LLaMA projection is analysed.
 *   scripts/fuzz 60 safetensors   (seeds: tests/corpus/safetensors/) */
#include "fuzz_common.h"
#include "core/matrix_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_file g_file = {-1, {0}};

static void check_same(const ar_safetensors *a, const ar_safetensors *b)
{
    if (ar_safetensors_count(a) != ar_safetensors_count(b))
        fuzz_fail("memory and file disagree on the tensor count", NULL);
    for (size_t i = 0; i < ar_safetensors_count(a); i++) {
        const ar_st_tensor *x = ar_safetensors_tensor(a, i), *y = ar_safetensors_tensor(b, i);
        if (strcmp(x->name, y->name) != 0 || x->dtype != y->dtype || x->count != y->count ||
            x->begin != y->begin || x->end != y->end ||
            memcmp(x->data, y->data, (size_t)(x->end - x->begin)) != 0)
            fuzz_fail("memory and file disagree on a tensor", x->name);
    }
}

/* Offsets inside the image, sizes consistent, every element readable. */
static void check_tensors(const ar_safetensors *st, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < ar_safetensors_count(st); i++) {
        const ar_st_tensor *t = ar_safetensors_tensor(st, i);
        if (t->data < data || t->data + (t->end - t->begin) > data + size)
            fuzz_fail("tensor outside the image", t->name);
        if ((uint64_t)t->count * ar_st_dtype_size(t->dtype) != t->end - t->begin)
            fuzz_fail("tensor size does not match its shape", t->name);
        size_t rows = 0, cols = 0;
        if (!ar_st_dtype_is_float(t->dtype) ||
            ar_st_tensor_matrix_shape(t, &rows, &cols, NULL) != AR_OK ||
            rows * cols == 0 || rows * cols > ((size_t)1 << 20))
            continue;
        ar_matrix m = ar_matrix_empty();
        ar_error err = {{0}};
        int rc = ar_safetensors_read(st, t, &m, &err);
        fuzz_check_status(rc, &err, "safetensors read");
        if (rc == AR_OK && ar_cm_check_finite(&m, NULL, NULL) != AR_OK)
            fuzz_fail("a successful read returned a non-finite value", t->name);
        if (rc != AR_OK && rc != AR_ENONFINITE && rc != AR_ENOMEM)
            fuzz_fail("unexpected read failure", err.msg);
        ar_matrix_free(&m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_file.fd < 0 && fuzz_memfd_open(&g_file, "fuzz.safetensors") != 0)
        fuzz_fail("memfd_create", strerror(errno));
    ar_safetensors *mem = NULL, *file = NULL;
    ar_error err_mem = {{0}}, err_file = {{0}};
    int rc_mem = ar_safetensors_parse(&mem, data, size, "fuzz.safetensors", &err_mem);
    fuzz_check_status(rc_mem, &err_mem, "safetensors parse");
    fuzz_memfd_fill(&g_file, data, size);
    int rc_file = ar_safetensors_open(&file, g_file.path, &err_file);
    fuzz_check_status(rc_file, &err_file, "safetensors open");
    if (rc_mem != rc_file)
        fuzz_fail("memory and file disagree on the status", err_mem.msg);
    if (rc_mem == AR_OK) {
        check_same(mem, file);
        check_tensors(mem, data, size);
        ar_weights_opts o;
        ar_weights_opts_init(&o);
        o.heads = 1;
        o.n = 16;
        ar_weights_report r;
        ar_error err = {{0}};
        int rc = ar_weights_analyze_model(mem, NULL, &o, &r, &err);
        fuzz_check_status(rc, &err, "weights analyze");
        if (rc == AR_OK) {
            if (r.nlayers == 0 || r.qk == NULL)
                fuzz_fail("analysis succeeded without heads", NULL);
            ar_weights_report_free(&r);
        }
    } else if (mem != NULL || file != NULL) {
        fuzz_fail("failure left a handle behind", NULL);
    }
    ar_safetensors_close(mem);
    ar_safetensors_close(file);
    return 0;
}
