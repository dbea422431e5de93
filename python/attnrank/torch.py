"""Per-head attention probabilities from PyTorch models (needs torch).

Entry points, each giving an :class:`AttentionRecords` list with one
:class:`AttentionRecord` per attention call and head, in call order:

:class:`capture` / :func:`capture_attention`
    run a model and record the probabilities of every attention call inside
    it, whatever computes them: ``nn.MultiheadAttention`` (also inside
    ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``),
    ``torch.nn.functional.scaled_dot_product_attention`` (torch 1.13's
    private ``_scaled_dot_product_attention`` too), an explicit softmax
    over scores in attention-like modules (or in the modules you name), and
    hook points such as TransformerLens's ``hook_pattern``.  Each record
    carries the mask of the call itself (its mask argument, key padding,
    causal flag, or the masked logits of an explicit softmax), never one
    guessed from the probabilities.  The model's output is the one an
    uncaptured run gives, bit for bit (the fused fast path of
    ``nn.TransformerEncoderLayer``, switched off, agrees to rounding);
    :mod:`attnrank._torch_capture` says how each source is seen;
:func:`from_attentions`
    wrap the ``attentions`` tuple of a Hugging Face style model output
    (``output_attentions=True``: one tensor per layer, batch x heads x n x n).

Tensors are converted for numpy: ``.detach()``, ``.cpu()``, and bfloat16 (which
numpy lacks) to float32, exactly; ``precision`` keeps the name of the stored
dtype, which is what a rank tolerance should use, and so do the arrays
themselves (a ``StoredArray`` when the dtype does not show it).  float16/32/64
stay as stored unless ``dtype="float64"`` is asked for.

The per-head report.  :func:`analyze` runs :func:`capture_attention`, then
:func:`attnrank._report.analyze_records`: per record and batch entry, the
rank metrics of :func:`attnrank.spectrum` with ``precision`` setting the
tolerance, and, when the package has the ``attnrank.represent`` binding, the
minimal head size under the record's mask (``"causal"`` for a causal
triangle, the given mask otherwise, ``"auto"`` -- inferred from exact zeros --
when the call had none) against the call's head size.  Without that binding
the report marks those columns unavailable (None), never guessed.
:func:`analyze_attentions` does the same for Hugging Face style tuples.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple

import torch
from torch import nn

from attnrank._report import AttentionReport, HeadRow, analyze_records
from attnrank._torch_capture import capture
from attnrank._torch_records import (
    AttentionRecord, AttentionRecords, CaptureError, from_attentions, to_numpy,
)

__all__ = [
    "AttentionRecord",
    "AttentionRecords",
    "AttentionReport",
    "CaptureError",
    "HeadRow",
    "analyze",
    "analyze_attentions",
    "capture",
    "capture_attention",
    "from_attentions",
    "repeated_tokens",
    "to_numpy",
]


def capture_attention(model: nn.Module, *args: Any, dtype: Optional[str] = None,
                      softmax_in: Any = "auto", hooks: Iterable[str] = (),
                      on_empty: str = "raise", **kwargs: Any) -> AttentionRecords:
    """Run ``model(*args, **kwargs)`` once under :class:`capture` and return
    the records (one per attention call and head, in call order).

    ``dtype``, ``softmax_in``, ``hooks`` and ``on_empty`` are
    :class:`capture`'s.  Runs under ``torch.no_grad()``; for the model's
    output as well, use the :class:`capture` context manager.
    """
    with torch.no_grad():
        with capture(model, dtype=dtype, softmax_in=softmax_in, hooks=hooks,
                     on_empty=on_empty) as records:
            model(*args, **kwargs)
    return records


def _call_arguments(inputs: Any, forward_kwargs: Optional[Dict[str, Any]]
                    ) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    if isinstance(inputs, dict):
        args: Tuple[Any, ...] = ()
        kwargs = dict(inputs)
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    else:
        args, kwargs = (inputs,), {}
    kwargs.update(forward_kwargs or {})
    return args, kwargs


def _token_ids(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """The model's token ids when its input is one: an integer tensor of
    shape (batch, n) or (n,), given first or as ``input_ids``."""
    t = kwargs.get("input_ids", args[0] if args else None)
    if isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex() \
            and t.dtype != torch.bool and t.dim() in (1, 2):
        return t
    return None


def analyze(model: nn.Module, inputs: Any, *, forward_kwargs: Optional[Dict[str, Any]] = None,
            head_size: Any = None, dtype: Optional[str] = None, tokens: Any = None,
            period: Optional[int] = None, softmax_in: Any = "auto",
            hooks: Iterable[str] = (), rtol: Optional[float] = None, atol: float = 0.0,
            represent: Any = None, represent_options: Optional[Dict[str, Any]] = None,
            threads: int = 0) -> AttentionReport:
    """Run ``model`` once under :func:`capture_attention` and report every
    captured attention map head by head (:class:`AttentionReport`).

    inputs
        the model's input: a tensor (``model(inputs)``), a tuple or list of
        positional arguments, or a dict of keyword arguments;
    forward_kwargs
        more keyword arguments of the call (``{"mask": causal}``);
    head_size
        an int for every layer, or a mapping layer name -> head size; by
        default each call's own (the query width of
        ``scaled_dot_product_attention``, ``embed_dim // num_heads`` of
        ``nn.MultiheadAttention``, what an attention module states);
    dtype
        converts the captured maps (``"float64"``); the tolerance keeps the
        precision they were computed in;
    tokens, period
        the token ids (batch x n, or n for every batch entry) that the
        induction score needs, by default the model's input when it is an
        integer tensor (``input_ids``); or the period of a repeated random
        sequence (:func:`repeated_tokens`);
    softmax_in, hooks
        as :class:`capture`;
    rtol, atol, threads
        as :func:`attnrank.spectrum`;
    represent, represent_options
        None: use ``attnrank.represent`` when the package has it (else the
        ``min_head_size`` and ``bottleneck`` columns are None and
        ``report.unavailable`` names them); False: skip it; True: require
        it; a callable ``f(P, mask=..., **options)`` to use instead.
    """
    args, kwargs = _call_arguments(inputs, forward_kwargs)
    if tokens is None and period is None:
        tokens = _token_ids(args, kwargs)
    records = capture_attention(model, *args, dtype=dtype, softmax_in=softmax_in, hooks=hooks,
                                **kwargs)
    return analyze_records(records, head_size=head_size, tokens=tokens, period=period,
                           rtol=rtol, atol=atol, represent=represent,
                           represent_options=represent_options, threads=threads)


def analyze_attentions(attentions: Any, *, head_size: Any = None,
                       names: Optional[Sequence[str]] = None, attention_mask: Any = None,
                       is_causal: bool = False, dtype: Optional[str] = None,
                       tokens: Any = None, period: Optional[int] = None,
                       rtol: Optional[float] = None, atol: float = 0.0, represent: Any = None,
                       represent_options: Optional[Dict[str, Any]] = None,
                       threads: int = 0) -> AttentionReport:
    """:func:`analyze` for Hugging Face style attentions
    (``output_attentions=True``): the records of :func:`from_attentions`
    (``names``, ``attention_mask``, ``is_causal``, ``dtype`` as there).

    ``head_size`` (an int, or layer name -> int; e.g. ``config.hidden_size //
    config.num_attention_heads``) is what ``bottleneck`` compares against;
    without it ``head_size`` and ``bottleneck`` are None.  ``tokens`` /
    ``period`` feed the induction score, as in :func:`analyze`.
    """
    records = from_attentions(attentions, names=names, attention_mask=attention_mask,
                              is_causal=is_causal, dtype=dtype)
    return analyze_records(records, head_size=head_size, tokens=tokens, period=period,
                           rtol=rtol, atol=atol,
                           represent=represent, represent_options=represent_options,
                           threads=threads)


def repeated_tokens(period: int, *, repeats: int = 2, batch: int = 1, vocab: int = 1000,
                    seed: int = 0) -> "torch.Tensor":
    """Token ids for induction scores: ``batch`` rows, each a block of
    ``period`` distinct random ids below ``vocab`` repeated ``repeats``
    times (shape batch x period * repeats, int64), seeded.  On such input
    the induction targets of query i >= period are exactly key i - period +
    1, so ``analyze(..., period=period)`` and ``tokens=`` agree."""
    if not isinstance(period, int) or isinstance(period, bool) or period < 1:
        raise ValueError(f"repeated_tokens: period must be an integer >= 1, got {period!r}")
    if not isinstance(repeats, int) or repeats < 1 or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"repeated_tokens: repeats and batch must be integers >= 1, got "
                         f"{repeats!r} and {batch!r}")
    if not isinstance(vocab, int) or vocab < period:
        raise ValueError(f"repeated_tokens: vocab must be an integer >= period ({period}), "
                         f"got {vocab!r}")
    g = torch.Generator().manual_seed(int(seed))
    blocks = torch.stack([torch.randperm(vocab, generator=g)[:period] for _ in range(batch)])
    return blocks.repeat(1, repeats)
