# Included by _core.pyx (after _represent.pxi, whose _mask_record it uses):
# the records of a model's positional biases (ar_model_bias_report), shared
# by heads(config=...) and weights().

from attnrank._capi cimport (
    ar_model_bias_report, ar_model_bias_layers, ar_head_bias, ar_model_bias_kind_name,
    AR_MODEL_BIAS_NONE, AR_MODEL_BIAS_T5,
)

from attnrank._results_bias import BiasLayerKind, HeadBias, ModelBias


cdef object _bias_layer_kind(const ar_model_bias_report *r, size_t k):
    cdef const ar_model_bias_layers *kind = &r.kind[k]
    cdef const ar_head_bias *b
    heads = []
    for h in range(r.heads):
        b = &kind.head[h]
        heads.append(HeadBias(head=h, slope=b.slope, bias_rank=b.bias_rank, known=bool(b.known),
                              proved=bool(b.proved), reach=b.reach))
    return BiasLayerKind(label=_text(kind.label), mask=_mask_record(&kind.mask),
                         causal=bool(kind.causal), bound_only=bool(kind.bound_only),
                         values_read=bool(kind.values_read), heads=tuple(heads))


cdef object _positional_bias(const ar_model_bias_report *r):
    """The CLI's "positional_bias" block; None when the report holds no
    layer kinds (no bias, or no length to take the ranks at)."""
    if r.bias.kind == AR_MODEL_BIAS_NONE or r.count == 0:
        return None
    t5 = r.bias.kind == AR_MODEL_BIAS_T5
    return ModelBias(
        kind=_text(ar_model_bias_kind_name(r.bias.kind)), reason=_text(r.bias.reason), n=r.n,
        head_size=r.head_size,
        layer_kinds=tuple(_bias_layer_kind(r, k) for k in range(r.count)),
        buckets=r.bias.buckets if t5 else None, max_distance=r.bias.max_distance if t5 else None)

