/* The record schema of the circuits of a checkpoint (circuits): each record's
 * name, base, description and keys in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_circuits_fields[] = {
    {.key = "family", .kind = AR_SCHEMA_TEXT,
     .doc = "naming convention found: `bert`, `gpt2`, `llama`, ..."},
    {.key = "weight_preprocessing", .kind = AR_SCHEMA_TEXT,
     .doc = "`raw`: the stored weights as they are (no LayerNorm folding, no centring; the "
         "default); `tl`: TransformerLens's default preprocessing ({flag:tl}: the "
         "pre-attention norm's gain folded into W_Q, W_K, W_V and the final norm's into "
         "the unembedding; the unembedding centred over the vocabulary; with LayerNorm "
         "also the reading weights, W_O, W_E and the unembedding centred over d)"},
    {.key = "d", .kind = AR_SCHEMA_INT,
     .doc = "model width / embedding size; in `represent` the rows of X"},
    {.key = "heads", .kind = AR_SCHEMA_INT},
    {.key = "kv_heads", .kind = AR_SCHEMA_INT,
     .doc = "key/value heads (grouped-query attention when fewer than `heads`)"},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "layers", .kind = AR_SCHEMA_INTS,
     .doc = "depth; in `weights` the list of analysed layers"},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "weights_centred", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "(with {flag:tl}) true when the centring over d applied (LayerNorm, GPT-2), false "
         "for RMSNorm (LLaMA: fold only, the unembedding still centred over the "
         "vocabulary)"},
    {.key = "copying_tolerance", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "how the copying scores were judged: `zero_factor` (an eigenvalue is zero when "
         "within `zero_factor` x eta / rcond of 0), `rcond_warn`, and the Gaussian-head "
         "spreads `null_sd_eig` (1.5 / d_head) and `null_sd_nuc` (1 / sqrt(d d_head), also "
         "that of `s_sym`)"},
    {.key = "full_circuits", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OPTIONAL},
    {.key = "circuit_heads", .kind = AR_SCHEMA_ANY},
    {.key = "composition", .kind = AR_SCHEMA_ANY, .flags = AR_SCHEMA_OPTIONAL},
};

const ar_schema_record ar_schema_circuits[] = {
    {.name = "Circuits", .base = NULL,
     .doc =
         "The circuits of a checkpoint, as the JSON of `circuits`:\n"
         "`circuit_heads` holds one dict per head (`layer`, `head`,\n"
         "`kv_head`, `precision`, `copying`, `ov_singular_values`, `qk`,\n"
         "`full_copying`), `full_circuits` the embedding, unembedding (or\n"
         "`\"tied\"`) and V of the full circuits (or None),\n"
         "`composition` the composition scores (`modes`, `null_rms`,\n"
         "`pairs`) or None.  Iterating gives the heads.",
     .fields = f_circuits_fields,
     .nfields = AR_SCHEMA_N(f_circuits_fields)},
};
const size_t ar_schema_circuits_count = AR_SCHEMA_N(ar_schema_circuits);
