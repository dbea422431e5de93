/* The schema of the result records: one table in the library of every
 * record the functions of json.h write (docs/architecture.md, "One
 * schema").
 *
 * Per record: its name (as the faces call it, e.g. "SoftmaxBottleneck"),
 * its family (the command or theme whose records it is among: "spectrum",
 * "represent", "heads", "bias", "theory", "weights", "check", "verify",
 * "circuits"),
 * the record it extends (null for none; the base's keys come first but for
 * the fields that lead), a description of the record and its keys, and its
 * own fields in JSON order.  Per field: the key, the kind of its value
 * ("int", "real", "bool", "text", "record", "reals" (an array of reals),
 * "ints", "texts", "records" (arrays of ints, texts or records) or "any"),
 * the nested record's name for "record" and "records", and when they
 * apply: "nullable" (the value may be null), "omit" (the key is left out
 * of the JSON when it has no value; a record's description says when
 * else), "face" (not written by the library: a face sets it from what it
 * knows, e.g. the layer a head belongs to), "u64" (an unsigned 64-bit
 * count, a decimal string above INT64_MAX), "leads" (the key comes before
 * the base's keys in the JSON: a spectrum's index), "default" (the value
 * of a field a face may leave unset, as JSON) and "doc" (the key's meaning
 * where the description does not give it). */
#ifndef ATTNRANK_SCHEMA_H
#define ATTNRANK_SCHEMA_H

#include <stddef.h>

#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole schema as compact JSON text in *text, to be released with
 * ar_json_free: {"records": [{"name", "family", "base", "description", "fields":
 * [{"key", "kind", "record", flags...}]}]}, the records in an order where
 * a base comes before the records that extend it.  flags: 0 (reserved).
 * AR_EINVAL for a NULL text or unknown flags, AR_ENOMEM when the text
 * cannot be allocated (*text NULL). */
AR_API int ar_schema_json(unsigned flags, char **text, ar_error *err);

/* The number of records of the schema. */
AR_API size_t ar_schema_record_count(void);

#ifdef __cplusplus
}
#endif

#endif
