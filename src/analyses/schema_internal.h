/* The record schema's table (internal; include/attnrank/schema.h is the
 * public side, the whole table as JSON).  One file a family of records
 * (schema_spectrum.c, schema_represent.c, ...), each an array of records;
 * schema.c joins them and writes the JSON. */
#ifndef ATTNRANK_ANALYSES_SCHEMA_INTERNAL_H
#define ATTNRANK_ANALYSES_SCHEMA_INTERNAL_H

#include <stddef.h>

typedef enum ar_schema_kind {
    AR_SCHEMA_INT,     /* an integer */
    AR_SCHEMA_REAL,    /* a real ("nan", "inf", "-inf" or null when not finite) */
    AR_SCHEMA_BOOL,
    AR_SCHEMA_TEXT,
    AR_SCHEMA_RECORD,  /* an object: the record named by .record */
    AR_SCHEMA_REALS,   /* an array of reals */
    AR_SCHEMA_INTS,    /* an array of integers */
    AR_SCHEMA_TEXTS,   /* an array of texts */
    AR_SCHEMA_RECORDS, /* an array of the records named by .record */
    AR_SCHEMA_ANY,     /* a value of more than one kind (an index or a text, ...) */
    AR_SCHEMA_NKINDS
} ar_schema_kind;

/* Field flags (schema.h says what each means). */
#define AR_SCHEMA_NULLABLE 1u
#define AR_SCHEMA_OMIT 2u
#define AR_SCHEMA_FACE 4u
#define AR_SCHEMA_U64 8u
#define AR_SCHEMA_LEADS 16u
/* nullable and left out when null: the usual optional block */
#define AR_SCHEMA_OPTIONAL (AR_SCHEMA_NULLABLE | AR_SCHEMA_OMIT)
/* The number of fields of a static array. */
#define AR_SCHEMA_N(a) (sizeof(a) / sizeof((a)[0]))

typedef struct ar_schema_field {
    const char *key;
    ar_schema_kind kind;
    const char *record;   /* RECORD, RECORDS: the nested record's name; else NULL */
    unsigned flags;       /* AR_SCHEMA_* */
    const char *fallback; /* the default as JSON text; NULL: none */
    const char *doc;      /* the key's meaning, NULL when the description gives it */
} ar_schema_field;

/* The keys of ar_rank_metrics_json, in its order: every record that embeds
 * a rank-metrics block lists them through this, so a new metric is one line
 * here (and one in the writer). */
#define AR_SCHEMA_RANK_METRICS_FIELDS                                                        \
    {.key = "rank", .kind = AR_SCHEMA_INT},                                                  \
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "Tolerance"},                   \
    {.key = "stable_rank", .kind = AR_SCHEMA_REAL, .doc = AR_SCHEMA_EFFECTIVE_RANK},         \
    {.key = "roy_vetterli_rank", .kind = AR_SCHEMA_REAL, .doc = AR_SCHEMA_EFFECTIVE_RANK},   \
    {.key = "participation_ratio", .kind = AR_SCHEMA_REAL, .doc = AR_SCHEMA_EFFECTIVE_RANK}, \
    {.key = "energy_rank", .kind = AR_SCHEMA_INT, .doc = AR_SCHEMA_EFFECTIVE_RANK},          \
    {.key = "energy_fraction", .kind = AR_SCHEMA_REAL,                                       \
     .doc = "the fraction f of the energy rank"},                                            \
    {.key = "nuclear_rank", .kind = AR_SCHEMA_REAL, .doc = AR_SCHEMA_EFFECTIVE_RANK},        \
    {.key = "rank_margin", .kind = AR_SCHEMA_REAL,                                           \
     .doc = "min(s_r / t, t / s_{r+1}) for the rank r at the threshold t: the rank is r "    \
            "for every threshold in [t / margin, t * margin) (null when no singular value "  \
            "limits it); [theory/spectra.md](theory/spectra.md), sec. 2"}
#define AR_SCHEMA_EFFECTIVE_RANK \
    "the effective ranks of [theory/spectra.md](theory/spectra.md), sec. 2"

typedef struct ar_schema_record {
    const char *name;
    const char *base; /* the record whose fields come first, NULL for none */
    const char *doc;
    const ar_schema_field *fields; /* the record's own, after the base's */
    size_t nfields;
} ar_schema_record;

/* The name of a kind ("int", ...; NULL out of range). */
const char *ar_schema_kind_name(ar_schema_kind kind);
/* The i-th record (the families one after the other), NULL from
 * ar_schema_record_count() on. */
const ar_schema_record *ar_schema_record_at(size_t i);
/* The family of the i-th record ("spectrum", "represent", "heads", "bias",
 * "theory", "weights", "check", "verify", "circuits": the records of one
 * command or theme, as the faces group them); NULL from
 * ar_schema_record_count() on. */
const char *ar_schema_family_at(size_t i);
/* The record named name, NULL when none. */
const ar_schema_record *ar_schema_find(const char *name);

extern const ar_schema_record ar_schema_spectrum[];
extern const size_t ar_schema_spectrum_count;
extern const ar_schema_record ar_schema_represent[];
extern const size_t ar_schema_represent_count;
extern const ar_schema_record ar_schema_heads[];
extern const size_t ar_schema_heads_count;
extern const ar_schema_record ar_schema_bias[];
extern const size_t ar_schema_bias_count;
extern const ar_schema_record ar_schema_theory[];
extern const size_t ar_schema_theory_count;
extern const ar_schema_record ar_schema_weights[];
extern const size_t ar_schema_weights_count;
extern const ar_schema_record ar_schema_check[];
extern const size_t ar_schema_check_count;
extern const ar_schema_record ar_schema_verify[];
extern const size_t ar_schema_verify_count;
extern const ar_schema_record ar_schema_circuits[];
extern const size_t ar_schema_circuits_count;

#endif
