/* The attention masks of a model family, from its config.json
 * (include/attnrank/mask.h; docs/theory/masked-attention.md).
 *
 * Encoders attend bidirectionally, decoders causally; a sliding window
 * applies where the config enables one (Mistral, Mixtral, Starcoder2;
 * Qwen2 carries a window with use_sliding_window: false), Gemma-2 and
 * Gemma-3 alternate windowed and global layers, and encoder-decoder models
 * have both kinds.  Every answer says why it was chosen. */
#include "attnrank/mask.h"

#include <stdio.h>
#include <string.h>

static const char *const encoders[] = {
    "bert", "roberta", "deberta", "deberta-v2", "electra", "distilbert", "albert",
    "xlm-roberta", "camembert", "mpnet", "ernie", "modernbert", "nomic_bert", NULL};
static const char *const decoders[] = {
    "gpt2",  "gptj",   "gpt_neox", "gpt_neo",   "gpt_bigcode", "llama",   "mistral",
    "mixtral", "qwen2", "qwen2_moe", "qwen3",  "qwen3_moe",   "gemma",   "gemma2",
    "gemma3", "gemma3_text", "phi", "phi3",     "falcon",      "opt",     "bloom",
    "mpt",   "starcoder2", "codegen", "olmo",   "olmo2",       "stablelm", "cohere",
    "deepseek_v2", "deepseek_v3", "granite", "internlm2", NULL};
static const char *const encoder_decoders[] = {"t5", "mt5", "bart", "mbart", "pegasus",
                                               "marian", "led", "longt5", NULL};

static int listed(const char *const *list, const char *name)
{
    for (; *list != NULL; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

static void add_kind(ar_model_masks *m, ar_mask_kind kind, size_t w, size_t layers,
                     const char *label)
{
    ar_mask mask = ar_mask_none();
    mask.kind = kind;
    mask.w = w;
    m->kind[m->count].mask = mask;
    m->kind[m->count].layers = layers;
    snprintf(m->kind[m->count].label, sizeof m->kind[m->count].label, "%s", label);
    m->count++;
}

/* Decoders: causal, windowed where a window is configured and enabled. */
static void decoder_masks(const ar_model_config *c, ar_model_masks *m, const char *why)
{
    const char *mt = c->model_type;
    int windowed = c->sliding_window > 0 && c->use_sliding_window != 0;
    if (!windowed) {
        add_kind(m, AR_MASK_CAUSAL, 0, c->layers, "all layers");
        snprintf(m->reason, sizeof m->reason, "%s: causal%s", why,
                 c->sliding_window > 0 ? " (sliding_window is set but use_sliding_window is "
                                         "false)"
                                       : "");
        return;
    }
    size_t every = 0; /* every k-th layer global */
    if (strcmp(mt, "gemma2") == 0)
        every = 2;
    else if (strncmp(mt, "gemma3", 6) == 0)
        every = c->sliding_window_pattern > 0 ? c->sliding_window_pattern : 6;
    if (every == 0) {
        add_kind(m, AR_MASK_WINDOW, c->sliding_window, c->layers, "all layers");
        snprintf(m->reason, sizeof m->reason, "%s: causal with sliding_window %zu", why,
                 c->sliding_window);
        return;
    }
    size_t global = c->layers / every, local = c->layers - global;
    add_kind(m, AR_MASK_WINDOW, c->sliding_window, local, "windowed layers");
    add_kind(m, AR_MASK_CAUSAL, 0, global, "global layers");
    snprintf(m->reason, sizeof m->reason,
             "%s: alternating layers, one global causal layer in every %zu, the others with "
             "sliding_window %zu",
             why, every, c->sliding_window);
}

static int contains(const char *s, const char *part)
{
    return s[0] != '\0' && strstr(s, part) != NULL;
}

int ar_model_masks_from_config(const ar_model_config *c, ar_model_masks *m, ar_error *err)
{
    if (c == NULL || m == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(m, 0, sizeof *m);
    const char *mt = c->model_type, *arch = c->architecture;
    char why[160];
    if (c->is_encoder_decoder == 1 || listed(encoder_decoders, mt)) {
        add_kind(m, AR_MASK_NONE, 0, 0, "encoder self-attention");
        add_kind(m, AR_MASK_CAUSAL, 0, 0, "decoder self-attention");
        snprintf(m->reason, sizeof m->reason,
                 "%s: encoder-decoder, bidirectional encoder and causal decoder",
                 c->is_encoder_decoder == 1 ? "is_encoder_decoder: true" : mt);
        return AR_OK;
    }
    if (c->is_decoder == 1 || listed(decoders, mt) || contains(arch, "CausalLM") ||
        contains(arch, "LMHeadModel")) {
        if (c->is_decoder == 1)
            snprintf(why, sizeof why, "is_decoder: true");
        else if (listed(decoders, mt))
            snprintf(why, sizeof why, "model_type %s", mt);
        else
            snprintf(why, sizeof why, "architectures %s", arch);
        decoder_masks(c, m, why);
        return AR_OK;
    }
    if (listed(encoders, mt) || contains(arch, "MaskedLM")) {
        add_kind(m, AR_MASK_NONE, 0, c->layers, "all layers");
        snprintf(m->reason, sizeof m->reason, "%s %s: encoder, bidirectional",
                 listed(encoders, mt) ? "model_type" : "architectures",
                 listed(encoders, mt) ? mt : arch);
        return AR_OK;
    }
    return ar_error_set(err, AR_EUNSUPPORTED,
                        "unknown model family (model_type '%s', architectures '%s'): state the "
                        "mask with {opt:mask}",
                        mt, arch);
}
