"""Per-head attention probabilities from PyTorch models (needs torch).

Two entry points, both returning a list of :class:`AttentionRecord`, one per
attention call, in call order:

:func:`capture_attention` / :class:`capture`
    run a model while every ``torch.nn.MultiheadAttention`` inside it
    (directly, or as the ``self_attn`` / ``multihead_attn`` of
    ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``) returns
    its per-head weights, and record them with the masks each call was given;
:func:`from_attentions`
    wrap the ``attentions`` tuple of a Hugging Face style model output
    (``output_attentions=True``: one tensor per layer, batch x heads x n x n).

How the capture works.  The encoder and decoder layers call ``self_attn`` with
``need_weights=False``, so a forward hook would see no weights.  For the
duration of the capture each attention module's ``forward`` is replaced by
an instance attribute that calls the original with ``need_weights=True,
average_attn_weights=False``, records the weights, and hands the caller what
it asked for (None when it asked for no weights; the head average when it
asked for averaged weights).  On exit -- also when the forward raised -- the
instance attribute is removed (or a pre-existing one put back), so
``module.forward`` is again the class's method.

In eval mode the encoder layer (and the encoder, through nested tensors) has
a fused fast path that never calls ``self_attn``.  The capture switches it
off by the conditions those paths check and nothing else: the layer's
``activation_relu_or_gelu`` flag (read only by the fast paths) is set to 0,
and ``torch.backends.mha.set_fastpath_enabled(False)`` where that exists.
The slow path computes the same function; outputs agree with an uncaptured
run to rounding.  If a layer still ran without calling its attention module
the capture raises :class:`CaptureError` instead of returning less than asked.

In training mode with dropout > 0, ``nn.MultiheadAttention`` returns the
weights after dropout (rows no longer sum to 1); each record says which
dropout probability was applied (``dropout``): put the model in eval mode,
or build it with dropout 0, to capture probabilities.

Tensors are converted for numpy: ``.detach()``, ``.cpu()``, and bfloat16 (which
numpy lacks) to float32, exactly; ``precision`` keeps the name of the stored
dtype, which is what a rank tolerance should use, and so do the arrays
themselves (a ``StoredArray`` when the dtype does not show it).  float16/32/64
stay as stored unless ``dtype="float64"`` is asked for.

The per-head report.  :func:`analyze` runs :func:`capture_attention`, then
:func:`attnrank._report.analyze_records`: per record and per (batch, head)
slice, :func:`attnrank.spectrum` on the record's ``probs`` (zero-copy for
float64; one stack per record) with ``precision`` setting the tolerance, and,
when the package has the ``attnrank.represent`` binding, the minimal head
size under the record's mask (``"causal"`` for a causal triangle, the given
mask otherwise, ``"auto"`` -- inferred from exact zeros -- when the call had
none) against the module's head size ``embed_dim / num_heads``.  Without that
binding the report marks those columns unavailable (None), never guessed.
:func:`analyze_attentions` does the same for Hugging Face style tuples.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from attnrank._convert import StoredArray
from attnrank._report import AttentionReport, HeadRow, analyze_records

__all__ = [
    "AttentionRecord",
    "AttentionReport",
    "CaptureError",
    "HeadRow",
    "analyze",
    "analyze_attentions",
    "capture",
    "capture_attention",
    "from_attentions",
    "to_numpy",
]


class CaptureError(RuntimeError):
    """The capture could not record what it was asked to (see the message)."""


# Unit roundoff of each storage type: a conversion to a finer dtype keeps the
# stored precision, one to a coarser dtype is the new storage.
_STORED_NAMES = {"float64": 2.0 ** -53, "float32": 2.0 ** -24, "float16": 2.0 ** -11,
                 "bfloat16": 2.0 ** -8}
_NUMPY_DTYPES = {torch.float16: np.float16, torch.float32: np.float32,
                 torch.float64: np.float64}


def _dtype_name(dtype: "torch.dtype") -> str:
    return str(dtype).replace("torch.", "")


def to_numpy(tensor: Any, dtype: Optional[str] = None, what: str = "tensor") -> np.ndarray:
    """A numpy array of a tensor's values (or of an array-like).

    ``.detach()`` and ``.cpu()`` as needed; bfloat16 becomes float32 (exact);
    float16/32/64 and bool stay as stored unless ``dtype`` (e.g.
    ``"float64"``) is given.  When the array's dtype no longer shows the
    stored floating-point precision (bfloat16, or a conversion asked for),
    the result is an :class:`attnrank._convert.StoredArray` whose
    ``attnrank_precision`` names it, so that :func:`attnrank.spectrum` and
    :func:`attnrank.represent` take the stored precision's tolerances with
    no extra argument.  A CPU tensor that needs no conversion shares its
    memory with the array.  Complex tensors are refused (TypeError).
    """
    stored = None
    if isinstance(tensor, torch.Tensor):
        if tensor.is_floating_point():
            stored = _dtype_name(tensor.dtype)
        t = tensor.detach()
        if t.is_complex():
            raise TypeError(f"{what}: complex tensors are not attention probabilities "
                            f"(dtype {t.dtype})")
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            t = t.float()
        elif t.is_floating_point() and t.dtype not in _NUMPY_DTYPES:
            t = t.double()
        if t.is_sparse:
            t = t.to_dense()
        a = t.numpy()
    else:
        if isinstance(tensor, StoredArray):
            stored = tensor.attnrank_precision
        elif isinstance(tensor, np.ndarray):
            stored = tensor.dtype.name
        a = np.asarray(tensor)
        if a.dtype.kind == "c":
            raise TypeError(f"{what}: complex arrays are not attention probabilities")
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if (stored in _STORED_NAMES and a.dtype.name in _STORED_NAMES
            and _STORED_NAMES[a.dtype.name] < _STORED_NAMES[stored]):
        a = StoredArray(a, stored)
    return a


@dataclass
class AttentionRecord:
    """One call of one attention module.

    layer
        the module's name in ``model.named_modules()`` (``"layers.0.self_attn"``;
        ``"<model>"`` when the model itself is the attention module), or the
        name given to :func:`from_attentions` (default ``"layers.<i>"``);
    call
        how many times this module had been called before in the capture (0
        for the first call; a module used twice gives two records);
    probs
        numpy array batch x heads x n_q x n_k, per-head attention weights
        (rows sum to 1 without dropout); unbatched inputs get batch 1.
        bfloat16 weights (and any converted with ``dtype``) are a
        :class:`attnrank._convert.StoredArray` that carries the stored
        precision, so ``attnrank.represent(record.probs[b, h])`` and
        ``attnrank.spectrum(record.probs)`` need no ``precision`` argument;
    attn_mask, key_padding_mask
        the masks as given to the call, as numpy arrays (bool: True = not
        allowed to attend; float: added to the logits), or None;
    is_causal
        the ``is_causal`` hint given to the call (torch >= 2.0), else False;
    self_attention
        query, key and value were the same tensor (False for the
        cross-attention of a decoder layer);
    precision
        the dtype the weights were computed in (``"float32"``, ``"bfloat16"``,
        ...): the storage precision for rank tolerances;
    device
        where they were computed (``"cpu"``, ``"cuda:0"``);
    dropout
        the dropout probability applied to the weights (0.0 in eval mode).
    """

    layer: str
    call: int
    probs: np.ndarray
    attn_mask: Optional[np.ndarray] = None
    key_padding_mask: Optional[np.ndarray] = None
    is_causal: bool = False
    self_attention: bool = True
    precision: str = "float32"
    device: str = "cpu"
    dropout: float = 0.0

    @property
    def shape(self) -> Tuple[int, int, int, int]:
        """(batch, heads, n_q, n_k)."""
        return tuple(self.probs.shape)  # type: ignore[return-value]

    @property
    def mask(self) -> Optional[np.ndarray]:
        """The combined mask of the call, or None when nothing was masked.

        A read-only numpy bool array of ``probs``' shape, True where a query
        was not allowed to attend to a key: True entries of a bool
        ``attn_mask`` / ``key_padding_mask``, -inf entries of a float one
        (finite float entries are biases, not masks), and the upper triangle
        (key after query) when ``is_causal`` was given without an
        ``attn_mask``.
        """
        b, h, nq, nk = self.probs.shape
        out = None

        def blocked(m: np.ndarray) -> np.ndarray:
            return m if m.dtype == np.bool_ else np.isneginf(m)

        if self.attn_mask is not None:
            am = blocked(self.attn_mask)
            if am.ndim == 3:  # (batch * heads, n_q, n_k)
                am = am.reshape(b, h, nq, nk)
            out = am
        elif self.is_causal:
            out = np.triu(np.ones((nq, nk), dtype=bool), k=1)
        if self.key_padding_mask is not None:
            kp = blocked(self.key_padding_mask).reshape(-1, 1, 1, nk)
            out = kp if out is None else np.logical_or(out, kp)
        if out is None:
            return None
        return np.broadcast_to(out, (b, h, nq, nk))

    def to_dict(self) -> Dict[str, Any]:
        """Everything but the arrays (for logs and JSON)."""
        return {"layer": self.layer, "call": self.call, "shape": list(self.shape),
                "precision": self.precision, "device": self.device,
                "is_causal": self.is_causal, "self_attention": self.self_attention,
                "dropout": self.dropout,
                "attn_mask": None if self.attn_mask is None else list(self.attn_mask.shape),
                "key_padding_mask": (None if self.key_padding_mask is None
                                     else list(self.key_padding_mask.shape))}


def _heads_first(weights: "torch.Tensor") -> "torch.Tensor":
    return weights.unsqueeze(0) if weights.dim() == 3 else weights


class capture:
    """Context manager: record every ``nn.MultiheadAttention`` call of
    ``model`` while the block runs.

    ::

        with attnrank.torch.capture(model) as records:
            model(x, mask=causal)
        records[0].probs   # batch x heads x n x n

    ``records`` is a list that fills as the model runs.  ``dtype`` converts
    every captured array (e.g. ``"float64"``); by default they stay as
    stored (bfloat16 -> float32).  The model's modules are restored on exit,
    also when the block raises.
    """

    def __init__(self, model: nn.Module, dtype: Optional[str] = None) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"capture: expected a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.dtype = dtype
        self.records: List[AttentionRecord] = []
        self._saved: List[Tuple[nn.Module, bool, Any]] = []
        self._flags: List[Tuple[nn.Module, Any]] = []
        self._hooks: List[Any] = []
        self._calls: Dict[int, int] = {}
        self._layer_calls: Dict[int, int] = {}
        self._fastpath: Optional[bool] = None
        self._stack: Optional[contextlib.ExitStack] = None

    # -- patching ---------------------------------------------------------
    def _attention_modules(self) -> List[Tuple[str, nn.MultiheadAttention]]:
        found = [(name or "<model>", m) for name, m in self.model.named_modules()
                 if isinstance(m, nn.MultiheadAttention)]
        return found

    def _wrap(self, name: str, module: nn.MultiheadAttention, original: Any):
        signature = inspect.signature(type(module).forward)
        record = self._record
        num_heads = module.num_heads

        def forward(*args: Any, **kwargs: Any):
            bound = signature.bind(module, *args, **kwargs)
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)))  # self
            wants = arguments.get("need_weights", True)
            average = arguments.get("average_attn_weights", True)
            arguments["need_weights"] = True
            arguments["average_attn_weights"] = False
            output, weights = original(**arguments)
            record(name, module, arguments, weights)
            if not wants:
                return output, None
            if average:
                # As nn.MultiheadAttention averages: over the heads axis.
                return output, weights.sum(dim=-3) / num_heads
            return output, weights

        return forward

    def _record(self, name: str, module: nn.Module, arguments: Dict[str, Any],
                weights: "torch.Tensor") -> None:
        key = id(module)
        call = self._calls.get(key, 0)
        self._calls[key] = call + 1
        q, k, v = arguments.get("query"), arguments.get("key"), arguments.get("value")
        am = arguments.get("attn_mask")
        kpm = arguments.get("key_padding_mask")
        self.records.append(AttentionRecord(
            layer=name,
            call=call,
            probs=to_numpy(_heads_first(weights), self.dtype, what=name),
            attn_mask=None if am is None else to_numpy(am, what=f"{name} attn_mask"),
            key_padding_mask=(None if kpm is None
                              else to_numpy(kpm, what=f"{name} key_padding_mask").reshape(
                                  -1, kpm.shape[-1])),
            is_causal=bool(arguments.get("is_causal", False)),
            self_attention=(q is k and k is v),
            precision=_dtype_name(weights.dtype),
            device=str(weights.device),
            dropout=float(module.dropout) if module.training else 0.0,
        ))

    def _count_layer(self, module: nn.Module, _inputs: Any) -> None:
        self._layer_calls[id(module)] = self._layer_calls.get(id(module), 0) + 1

    def __enter__(self) -> List[AttentionRecord]:
        try:
            for name, module in self._attention_modules():
                had_own = "forward" in module.__dict__
                original = module.forward
                self._saved.append((module, had_own, module.__dict__.get("forward")))
                module.forward = self._wrap(name, module, original)
            for module in self.model.modules():
                if isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
                    self._hooks.append(module.register_forward_pre_hook(self._count_layer))
                    if hasattr(module, "activation_relu_or_gelu"):
                        self._flags.append((module, module.activation_relu_or_gelu))
                        module.activation_relu_or_gelu = 0
            mha = getattr(torch.backends, "mha", None)
            if mha is not None and hasattr(mha, "set_fastpath_enabled"):
                self._fastpath = mha.get_fastpath_enabled()
                mha.set_fastpath_enabled(False)
        except BaseException:
            self._restore()
            raise
        return self.records

    def _restore(self) -> None:
        for module, had_own, own in reversed(self._saved):
            if had_own:
                module.forward = own
            else:
                module.__dict__.pop("forward", None)
        self._saved.clear()
        for module, flag in reversed(self._flags):
            module.activation_relu_or_gelu = flag
        self._flags.clear()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
        if self._fastpath is not None:
            torch.backends.mha.set_fastpath_enabled(self._fastpath)
            self._fastpath = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        missed = []
        if exc_type is None:
            for name, module in self.model.named_modules():
                attn = [getattr(module, a, None) for a in ("self_attn", "multihead_attn")]
                if self._layer_calls.get(id(module), 0) and any(
                        isinstance(a, nn.MultiheadAttention) and not self._calls.get(id(a), 0)
                        for a in attn):
                    missed.append(name)
        self._restore()
        if missed:
            raise CaptureError(
                f"layers {missed} ran without calling their attention module (a fused fast "
                f"path of this torch version); run the model in train mode with dropout 0, "
                f"or with an attn_mask")
        return False


def capture_attention(model: nn.Module, *args: Any, dtype: Optional[str] = None,
                      **kwargs: Any) -> List[AttentionRecord]:
    """Run ``model(*args, **kwargs)`` once under :class:`capture` and return
    the records (one per attention call, in call order).

    Runs under ``torch.no_grad()``; for the model's output as well, use the
    :class:`capture` context manager.
    """
    with torch.no_grad():
        with capture(model, dtype=dtype) as records:
            model(*args, **kwargs)
    return records


def from_attentions(attentions: Any, *, names: Optional[Sequence[str]] = None,
                    attention_mask: Any = None, is_causal: bool = False,
                    dtype: Optional[str] = None) -> List[AttentionRecord]:
    """Records from Hugging Face style attentions (``output_attentions=True``).

    attentions
        a sequence with one tensor (or array) per layer, batch x heads x n_q x
        n_k (heads x n_q x n_k is taken as batch 1), or a model output with an
        ``attentions`` attribute;
    names
        the layer names (default ``"layers.<i>"``);
    attention_mask
        the tokenizer's batch x n_k mask (1 = token, 0 = padding), recorded
        as every layer's ``key_padding_mask`` (True = padding);
    is_causal
        the model is a causal decoder (GPT-2, LLaMA): recorded as
        ``is_causal`` of every layer, so ``mask`` is the causal triangle.
    """
    if hasattr(attentions, "attentions") and not isinstance(attentions, (list, tuple)):
        attentions = attentions.attentions
    if attentions is None:
        raise ValueError("from_attentions: no attentions (run the model with "
                         "output_attentions=True)")
    if isinstance(attentions, (torch.Tensor, np.ndarray)):
        raise TypeError("from_attentions: expected one tensor per layer (a tuple or list), "
                        "got a single array; wrap it: from_attentions([a])")
    layers = list(attentions)
    if names is not None and len(names) != len(layers):
        raise ValueError(f"from_attentions: {len(names)} names for {len(layers)} layers")
    kpm = None
    if attention_mask is not None:
        kpm = to_numpy(attention_mask, what="attention_mask")
        if kpm.ndim != 2:
            raise ValueError(f"from_attentions: attention_mask must be batch x n, "
                             f"got shape {kpm.shape}")
        kpm = kpm == 0
    records = []
    for i, t in enumerate(layers):
        name = names[i] if names is not None else f"layers.{i}"
        if t is None:
            raise ValueError(f"from_attentions: layer {name} has no attentions (None)")
        precision = (_dtype_name(t.dtype) if isinstance(t, torch.Tensor)
                     else np.asarray(t).dtype.name)
        device = str(t.device) if isinstance(t, torch.Tensor) else "cpu"
        a = to_numpy(t, dtype, what=name)
        if a.ndim == 3:
            a = a[None]
        if a.ndim != 4:
            raise ValueError(f"from_attentions: layer {name} must be batch x heads x n x n, "
                             f"got shape {a.shape}")
        if a.dtype.kind not in "f":
            raise TypeError(f"from_attentions: layer {name} has dtype {a.dtype}, "
                            f"expected floating point probabilities")
        if kpm is not None and (kpm.shape[0] != a.shape[0] or kpm.shape[1] != a.shape[3]):
            raise ValueError(f"from_attentions: attention_mask shape {kpm.shape} does not "
                             f"match layer {name} of shape {a.shape}")
        records.append(AttentionRecord(
            layer=name, call=0, probs=a, key_padding_mask=kpm, is_causal=bool(is_causal),
            self_attention=True, precision=precision, device=device, dropout=0.0))
    return records


def _head_sizes(model: nn.Module) -> Dict[str, int]:
    """embed_dim // num_heads of every attention module, by capture name."""
    return {(name or "<model>"): m.embed_dim // m.num_heads
            for name, m in model.named_modules() if isinstance(m, nn.MultiheadAttention)}


def analyze(model: nn.Module, inputs: Any, *, forward_kwargs: Optional[Dict[str, Any]] = None,
            head_size: Any = None, dtype: Optional[str] = None,
            rtol: Optional[float] = None, atol: float = 0.0, represent: Any = None,
            represent_options: Optional[Dict[str, Any]] = None,
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
        default each module's ``embed_dim // num_heads``;
    dtype
        converts the captured maps (``"float64"``); the tolerance keeps the
        precision they were computed in;
    rtol, atol, threads
        as :func:`attnrank.spectrum`;
    represent, represent_options
        None: use ``attnrank.represent`` when the package has it (else the
        ``min_head_size`` and ``bottleneck`` columns are None and
        ``report.unavailable`` names them); False: skip it; True: require
        it; a callable ``f(P, mask=..., **options)`` to use instead.
    """
    if isinstance(inputs, dict):
        args: Tuple[Any, ...] = ()
        kwargs = dict(inputs)
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    else:
        args, kwargs = (inputs,), {}
    kwargs.update(forward_kwargs or {})
    records = capture_attention(model, *args, dtype=dtype, **kwargs)
    return analyze_records(records, head_size=head_size, head_sizes=_head_sizes(model),
                           rtol=rtol, atol=atol, represent=represent,
                           represent_options=represent_options, threads=threads)


def analyze_attentions(attentions: Any, *, head_size: Any = None,
                       names: Optional[Sequence[str]] = None, attention_mask: Any = None,
                       is_causal: bool = False, dtype: Optional[str] = None,
                       rtol: Optional[float] = None, atol: float = 0.0, represent: Any = None,
                       represent_options: Optional[Dict[str, Any]] = None,
                       threads: int = 0) -> AttentionReport:
    """:func:`analyze` for Hugging Face style attentions
    (``output_attentions=True``): the records of :func:`from_attentions`
    (``names``, ``attention_mask``, ``is_causal``, ``dtype`` as there).

    ``head_size`` (an int, or layer name -> int; e.g. ``config.hidden_size //
    config.num_attention_heads``) is what ``bottleneck`` compares against;
    without it ``head_size`` and ``bottleneck`` are None.
    """
    records = from_attentions(attentions, names=names, attention_mask=attention_mask,
                              is_causal=is_causal, dtype=dtype)
    return analyze_records(records, head_size=head_size, rtol=rtol, atol=atol,
                           represent=represent, represent_options=represent_options,
                           threads=threads)
