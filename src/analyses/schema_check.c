/* The record schema of theorem conditions on a configuration and the
 * verification suite (check, verify): each record's name, base, description
 * and keys in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_checkverdict_fields[] = {
    {.key = "condition", .kind = AR_SCHEMA_TEXT},
    {.key = "holds", .kind = AR_SCHEMA_BOOL},
    {.key = "why", .kind = AR_SCHEMA_TEXT},
    {.key = "status", .kind = AR_SCHEMA_TEXT},
};

static const ar_schema_field f_check_fields[] = {
    {.key = "config", .kind = AR_SCHEMA_TEXT},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "heads", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "n", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "layers", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "mask", .kind = AR_SCHEMA_TEXT},
    {.key = "conditions", .kind = AR_SCHEMA_RECORDS, .record = "CheckVerdict"},
    {.key = "positional_bias", .kind = AR_SCHEMA_RECORD, .record = "ModelBias",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_checklaw_fields[] = {
    {.key = "intercept", .kind = AR_SCHEMA_REAL},
    {.key = "slope", .kind = AR_SCHEMA_REAL},
    {.key = "params_coeff", .kind = AR_SCHEMA_REAL},
    {.key = "source", .kind = AR_SCHEMA_TEXT},
};

static const ar_schema_field f_checkreport_fields[] = {
    {.key = "configs", .kind = AR_SCHEMA_RECORDS, .record = "Check"},
    {.key = "failed_conditions", .kind = AR_SCHEMA_INT},
    {.key = "law", .kind = AR_SCHEMA_RECORD, .record = "CheckLaw",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "fit", .kind = AR_SCHEMA_RECORD, .record = "DepthWidthFit",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_verifycheck_fields[] = {
    {.key = "suite", .kind = AR_SCHEMA_TEXT},
    {.key = "name", .kind = AR_SCHEMA_TEXT},
    {.key = "statement", .kind = AR_SCHEMA_TEXT},
    {.key = "instance", .kind = AR_SCHEMA_TEXT},
    {.key = "measured", .kind = AR_SCHEMA_REAL},
    {.key = "relation", .kind = AR_SCHEMA_TEXT},
    {.key = "expected", .kind = AR_SCHEMA_REAL},
    {.key = "tolerance", .kind = AR_SCHEMA_REAL},
    {.key = "passed", .kind = AR_SCHEMA_BOOL},
    {.key = "detail", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "error", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "seconds", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_verifyreport_fields[] = {
    {.key = "suite", .kind = AR_SCHEMA_TEXT},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "full", .kind = AR_SCHEMA_BOOL},
    {.key = "checks", .kind = AR_SCHEMA_RECORDS, .record = "VerifyCheck"},
    {.key = "passed", .kind = AR_SCHEMA_INT},
    {.key = "failed", .kind = AR_SCHEMA_INT},
};

const ar_schema_record ar_schema_check[] = {
    {.name = "CheckVerdict", .base = NULL,
     .doc =
         "Whether one condition holds, and why.\n"
         "\n"
         "condition\n"
         "    `\"no-bottleneck\"`, `\"depth-efficient\"` or\n"
         "    `\"near-optimal-allocation\"`;\n"
         "holds\n"
         "    True when the condition holds;\n"
         "why\n"
         "    the reason, one line (the CLI's text);\n"
         "status\n"
         "    what the value the verdict rests on is: `\"proved\"` (a theorem),\n"
         "    `\"verified\"` (the generic head size checked over F_p for these\n"
         "    sizes), `\"conjectural\"` (only a lower bound is proved; `strict`\n"
         "    fails such a verdict) or `\"empirical\"` (the fitted depth-width law\n"
         "    of the allocation conditions).",
     .fields = f_checkverdict_fields,
     .nfields = AR_SCHEMA_N(f_checkverdict_fields)},
    {.name = "Check", .base = NULL,
     .doc =
         "The verdicts of one configuration (one layer kind of a model).\n"
         "\n"
         "config\n"
         "    the label, as the CLI makes it (`\"d=768, heads=12, n=512\"`, or the\n"
         "    config.json path with `\" [windowed layers: window:4096]\"` per layer\n"
         "    kind);\n"
         "d, heads, n, layers\n"
         "    the sizes judged (None: not given);\n"
         "head_size\n"
         "    the head size used: given, or d / heads (None when neither is known);\n"
         "mask\n"
         "    the mask's text as given (`\"none\"`: bidirectional);\n"
         "conditions\n"
         "    one CheckVerdict per required condition, in the order\n"
         "    no-bottleneck, depth-efficient, near-optimal-allocation;\n"
         "positional_bias\n"
         "    with a config that implies ALiBi or T5 buckets, this layer kind's\n"
         "    heads (a ModelBias with one layer kind): bias rank\n"
         "    and reach per head.  The gates are unchanged by a bias.  None\n"
         "    otherwise.",
     .fields = f_check_fields,
     .nfields = AR_SCHEMA_N(f_check_fields)},
    {.name = "CheckLaw", .base = NULL,
     .doc =
         "The depth-width law `ln d = intercept + slope L`, size\n"
         "`params_coeff L d^2`, that the allocation conditions used; source\n"
         "`\"paper\"`, `\"fit\"` (refit from points) or `\"given\"` (a mapping).",
     .fields = f_checklaw_fields,
     .nfields = AR_SCHEMA_N(f_checklaw_fields)},
    {.name = "CheckReport", .base = NULL,
     .doc =
         "The verdicts of several configurations: every layer kind of a model's\n"
         "config.json, or every entry of `configs`.\n"
         "\n"
         "configs\n"
         "    one Check per configuration;\n"
         "failed_conditions\n"
         "    the number of verdicts that do not hold;\n"
         "law, fit\n"
         "    the depth-width law used (CheckLaw) when an allocation\n"
         "    condition was evaluated, else None; its refit (CheckLawFit)\n"
         "    when `law` was given as points, else None.",
     .fields = f_checkreport_fields,
     .nfields = AR_SCHEMA_N(f_checkreport_fields)},
};
const size_t ar_schema_check_count = AR_SCHEMA_N(ar_schema_check);

const ar_schema_record ar_schema_verify[] = {
    {.name = "VerifyCheck", .base = NULL,
     .doc =
         "One check of the registry as run: its suite, name and the statement\n"
         "it re-measures (with the docs/theory/ note that states it), the seeded\n"
         "instance, the measured value, the relation (\"==\", \"<=\", \">=\"), the\n"
         "expected value or bound and the tolerance, and passed.  detail: words\n"
         "on the measurement (None when there are none); error: the status text\n"
         "when the computation itself failed; seconds: wall time (only with\n"
         "`timings=True`).",
     .fields = f_verifycheck_fields,
     .nfields = AR_SCHEMA_N(f_verifycheck_fields)},
    {.name = "VerifyReport", .base = NULL,
     .doc =
         "The checks of one suite (\"all\": every check) on seeds derived from\n"
         "the base seed: suite, seed, full (the larger instances), checks in\n"
         "registry order, and the counts passed and failed.  `bool(report)` is\n"
         "True when no check failed.",
     .fields = f_verifyreport_fields,
     .nfields = AR_SCHEMA_N(f_verifyreport_fields)},
};
const size_t ar_schema_verify_count = AR_SCHEMA_N(ar_schema_verify);
