/* The record schema's table is well formed (schema_internal.h) and its
 * JSON (ar_schema_json) says the same. */
#include <jansson.h>

#include "testutil.h"
#include "analyses/schema_internal.h"

static void test_records_are_well_formed(void **state)
{
    (void)state;
    size_t n = ar_schema_record_count();
    assert_true(n > 50);
    assert_null(ar_schema_record_at(n));
    assert_null(ar_schema_family_at(n));
    for (size_t i = 0; i < n; i++) {
        const ar_schema_record *r = ar_schema_record_at(i);
        assert_non_null(r);
        assert_non_null(r->name);
        assert_true(r->doc != NULL && r->doc[0] != '\0');
        assert_true(r->nfields > 0);
        assert_ptr_equal(ar_schema_find(r->name), r); /* the names are unique */
        const char *family = ar_schema_family_at(i);
        assert_true(family != NULL && family[0] != '\0');
        if (i > 0 && strcmp(family, ar_schema_family_at(i - 1)) != 0) /* one run per family */
            for (size_t j = 0; j + 1 < i; j++)
                assert_string_not_equal(ar_schema_family_at(j), family);
        if (r->base != NULL) { /* a base exists and comes first */
            const ar_schema_record *b = ar_schema_find(r->base);
            assert_non_null(b);
            size_t bi = 0;
            while (ar_schema_record_at(bi) != b)
                bi++;
            assert_true(bi < i);
        }
        for (size_t k = 0; k < r->nfields; k++) {
            const ar_schema_field *f = &r->fields[k];
            assert_non_null(f->key);
            assert_non_null(ar_schema_kind_name(f->kind));
            int nested = f->kind == AR_SCHEMA_RECORD || f->kind == AR_SCHEMA_RECORDS;
            if (nested)
                assert_non_null(ar_schema_find(f->record));
            else
                assert_null(f->record);
            for (size_t j = 0; j < k; j++) /* unique keys, the base's too */
                assert_string_not_equal(r->fields[j].key, f->key);
            for (const ar_schema_record *b = ar_schema_find(r->base); b != NULL;
                 b = ar_schema_find(b->base))
                for (size_t j = 0; j < b->nfields; j++)
                    assert_string_not_equal(b->fields[j].key, f->key);
            if (f->fallback != NULL) { /* a default is JSON */
                json_t *v = json_loads(f->fallback, JSON_DECODE_ANY, NULL);
                assert_non_null(v);
                json_decref(v);
            }
            /* only a field of a record extending another can lead */
            if (f->flags & AR_SCHEMA_LEADS)
                assert_non_null(r->base);
            /* left out when null needs a value that can be null */
            if (f->flags & AR_SCHEMA_OMIT)
                assert_true((f->flags & AR_SCHEMA_NULLABLE) || f->fallback != NULL);
        }
    }
    assert_null(ar_schema_find("NoSuchRecord"));
    assert_null(ar_schema_find(NULL));
    assert_null(ar_schema_kind_name(AR_SCHEMA_NKINDS));
}

static void test_json_is_the_table(void **state)
{
    (void)state;
    char *text = NULL;
    ar_error err = {0};
    assert_ok(ar_schema_json(0, &text, &err));
    json_t *root = json_loads(text, 0, NULL);
    ar_json_free(text);
    assert_non_null(root);
    json_t *records = json_object_get(root, "records");
    assert_int_equal(json_array_size(records), ar_schema_record_count());
    for (size_t i = 0; i < json_array_size(records); i++) {
        const ar_schema_record *r = ar_schema_record_at(i);
        json_t *o = json_array_get(records, i);
        assert_string_equal(json_string_value(json_object_get(o, "name")), r->name);
        assert_string_equal(json_string_value(json_object_get(o, "family")),
                            ar_schema_family_at(i));
        assert_string_equal(json_string_value(json_object_get(o, "description")), r->doc);
        json_t *base = json_object_get(o, "base");
        if (r->base == NULL)
            assert_true(json_is_null(base));
        else
            assert_string_equal(json_string_value(base), r->base);
        json_t *fields = json_object_get(o, "fields");
        assert_int_equal(json_array_size(fields), r->nfields);
        for (size_t k = 0; k < r->nfields; k++) {
            json_t *f = json_array_get(fields, k);
            assert_string_equal(json_string_value(json_object_get(f, "key")), r->fields[k].key);
            assert_string_equal(json_string_value(json_object_get(f, "kind")),
                                ar_schema_kind_name(r->fields[k].kind));
            assert_int_equal(json_is_true(json_object_get(f, "nullable")),
                             (r->fields[k].flags & AR_SCHEMA_NULLABLE) != 0);
            assert_int_equal(json_object_get(f, "default") != NULL,
                             r->fields[k].fallback != NULL);
        }
    }
    json_decref(root);
}

static void test_json_refuses(void **state)
{
    (void)state;
    ar_error err = {0};
    assert_int_equal(ar_schema_json(0, NULL, &err), AR_EINVAL);
    char *text = (char *)&err;
    assert_int_equal(ar_schema_json(4, &text, &err), AR_EINVAL);
    assert_null(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_are_well_formed),
        cmocka_unit_test(test_json_is_the_table),
        cmocka_unit_test(test_json_refuses),
    };
    return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
