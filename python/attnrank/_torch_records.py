"""Attention records of :mod:`attnrank.torch`: one head of one attention
call, its probabilities as numpy, the mask that call used, and where they
came from.  Conversion of tensors to numpy (:func:`to_numpy`) and the
records of Hugging Face style ``attentions`` tuples (:func:`from_attentions`)
live here too; the capture itself is in :mod:`attnrank._torch_capture`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from attnrank._convert import StoredArray

__all__ = ["AttentionRecord", "AttentionRecords", "CaptureError", "from_attentions",
           "to_numpy", "head_records"]


class CaptureError(RuntimeError):
    """The capture could not record what it was asked to (see the message)."""


# Unit roundoff of each storage type: a conversion to a finer dtype keeps the
# stored precision, one to a coarser dtype is the new storage.
_STORED_NAMES = {"float64": 2.0 ** -53, "float32": 2.0 ** -24, "float16": 2.0 ** -11,
                 "bfloat16": 2.0 ** -8}
_NUMPY_DTYPES = {torch.float16: np.float16, torch.float32: np.float32,
                 torch.float64: np.float64}


def dtype_name(dtype: "torch.dtype") -> str:
    """``"float32"`` for ``torch.float32``."""
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
            stored = dtype_name(tensor.dtype)
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


@dataclass(repr=False)
class AttentionRecord:
    """One head of one attention call.

    layer
        the module's name in ``model.named_modules()`` (``"layers.0.self_attn"``;
        ``"<model>"`` for the model itself), or the name given to
        :func:`from_attentions` (default ``"layers.<i>"``);
    call
        how many times this module had produced attention before in the
        capture (0 for the first call; a module used twice gives two sets);
    head, heads
        this record's head and the number of heads of the call;
    probs
        numpy array batch x n_q x n_k: row i is query i's distribution over
        the keys (rows sum to 1 without dropout); an unbatched call has
        batch 1.  bfloat16 (and any converted with ``dtype``) is a
        :class:`attnrank._convert.StoredArray` that carries the stored
        precision, so ``attnrank.represent(record.probs[b])`` needs no
        ``precision`` argument;
    mask
        read-only bool array of ``probs``' shape, True where the call did not
        let the query attend to the key, or None when it masked nothing.  It
        comes from the call itself, never from the probabilities: the bool
        or -inf entries of its attention mask, the key padding mask, the
        causal flag, or (for an explicit softmax) the logits that are -inf
        or below half the dtype's most negative value, as masking code
        writes them;
    attn_mask, key_padding_mask
        the masks as given to the call, as numpy arrays, in one convention
        whatever the implementation's: bool True = not allowed to attend
        (``scaled_dot_product_attention``'s bool masks, where True means
        allowed, are inverted), float = added to the logits; or None;
    is_causal
        the call's causal flag (``is_causal=True``);
    biased
        the call added finite values to the logits (an additive float mask
        with finite entries other than 0, e.g. ALiBi or relative-position
        biases);
    source
        what produced the probabilities: ``"nn.MultiheadAttention"``,
        ``"scaled_dot_product_attention"``, ``"softmax"`` (an explicit
        softmax in a named module), ``"hook"`` (a hook point's output) or
        ``"attentions"`` (:func:`from_attentions`);
    self_attention
        query, key and value were one tensor (False for a decoder's
        cross-attention; None when the source cannot tell);
    head_size
        the head size of the call (query width), or None when unknown;
    precision
        the dtype the probabilities were computed in (``"float32"``,
        ``"bfloat16"``, ...): the storage precision for rank tolerances;
    device
        where they were computed (``"cpu"``, ``"cuda:0"``);
    dropout
        the dropout probability of the call in training mode (0.0 otherwise);
        ``nn.MultiheadAttention`` returns weights after dropout, so capture
        probabilities in eval mode or with dropout 0.
    """

    layer: str
    call: int
    head: int
    heads: int
    probs: np.ndarray
    mask: Optional[np.ndarray] = None
    attn_mask: Optional[np.ndarray] = None
    key_padding_mask: Optional[np.ndarray] = None
    is_causal: bool = False
    biased: bool = False
    source: str = "nn.MultiheadAttention"
    self_attention: Optional[bool] = True
    head_size: Optional[int] = None
    precision: str = "float32"
    device: str = "cpu"
    dropout: float = 0.0

    @property
    def shape(self) -> Tuple[int, int, int]:
        """(batch, n_q, n_k)."""
        return tuple(self.probs.shape)  # type: ignore[return-value]

    @property
    def mask_kind(self) -> str:
        """``"none"`` (nothing masked), ``"causal"`` (every batch entry is
        the causal triangle: key after query) or ``"given"`` (any other)."""
        if self.mask is None:
            return "none"
        nq, nk = self.probs.shape[1:]
        if nq == nk and np.array_equal(
                self.mask, np.broadcast_to(np.triu(np.ones((nq, nk), bool), 1), self.mask.shape)):
            return "causal"
        return "given"

    def to_dict(self) -> Dict[str, Any]:
        """Everything but the arrays (for logs and JSON)."""
        return {"layer": self.layer, "call": self.call, "head": self.head, "heads": self.heads,
                "shape": list(self.shape), "source": self.source, "mask": self.mask_kind,
                "is_causal": self.is_causal, "biased": self.biased,
                "self_attention": self.self_attention, "head_size": self.head_size,
                "precision": self.precision, "device": self.device, "dropout": self.dropout,
                "attn_mask": None if self.attn_mask is None else list(self.attn_mask.shape),
                "key_padding_mask": (None if self.key_padding_mask is None
                                     else list(self.key_padding_mask.shape))}

    def __repr__(self) -> str:
        b, nq, nk = self.shape
        return (f"<AttentionRecord {self.layer} call {self.call} head {self.head}/{self.heads}: "
                f"{b} x {nq} x {nk} {self.precision}, mask {self.mask_kind}, {self.source}>")


class AttentionRecords(list):
    """The records of a capture: a list of :class:`AttentionRecord`, one per
    (call, head), in call order then head order.

    ``modules_seen`` names the attention-like modules the model has (name
    and class), which is what the message lists when nothing was captured.
    """

    modules_seen: List[Tuple[str, str]]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.modules_seen = []

    def layers(self) -> List[Tuple[str, int]]:
        """(layer, call) pairs in record order."""
        seen: Dict[Tuple[str, int], None] = {}
        for r in self:
            seen.setdefault((r.layer, r.call), None)
        return list(seen)

    def stack(self, layer: str, call: int = 0) -> np.ndarray:
        """The probabilities of one call as batch x heads x n_q x n_k."""
        heads = [r for r in self if r.layer == layer and r.call == call]
        if not heads:
            raise KeyError(f"no records of layer {layer!r}, call {call}")
        return np.stack([r.probs for r in sorted(heads, key=lambda r: r.head)], axis=1)

    def __repr__(self) -> str:
        calls = self.layers()
        return (f"<AttentionRecords: {len(self)} heads in {len(calls)} calls of "
                f"{len({layer for layer, _ in calls})} modules>")


def blocked_entries(mask: np.ndarray) -> np.ndarray:
    """True where a mask (bool True = blocked, or float added to the logits)
    forbids attending: bool True, or float entries that are -inf or below
    half the dtype's most negative value (``finfo.min``, as masking code
    adds it, rounds every logit it meets to itself)."""
    if mask.dtype == np.bool_:
        return mask
    return np.isneginf(mask) | (mask <= np.finfo(mask.dtype).min / 2)


def has_bias(mask: Optional[np.ndarray]) -> bool:
    """A float mask with finite, non-blocking entries other than 0."""
    if mask is None or mask.dtype == np.bool_:
        return False
    free = mask[~blocked_entries(mask)]
    return bool(np.any(free != 0))


def _as_4d(m: np.ndarray, b: int, h: int, nq: int, nk: int) -> np.ndarray:
    """A mask of shape (n_q, n_k), (b*h, n_q, n_k), or anything broadcasting
    to (b, h, n_q, n_k), as (b, h, n_q, n_k)."""
    if m.ndim == 3 and m.shape[0] == b * h and b * h > 1:
        m = m.reshape(b, h, nq, nk)
    while m.ndim < 4:
        m = m[None]
    return np.broadcast_to(m, (b, h, nq, nk))


def combined_mask(shape: Tuple[int, int, int, int], attn_mask: Optional[np.ndarray],
                  key_padding_mask: Optional[np.ndarray],
                  is_causal: bool) -> Optional[np.ndarray]:
    """The blocked entries of a call, (b, h, n_q, n_k) bool, or None when
    nothing is blocked.  ``is_causal`` adds the causal triangle (key after
    query, aligned at the top left as torch's flag does)."""
    b, h, nq, nk = shape
    out = None
    if attn_mask is not None:
        out = _as_4d(blocked_entries(attn_mask), b, h, nq, nk)
    if is_causal:
        tri = np.triu(np.ones((nq, nk), dtype=bool), k=1)
        out = tri if out is None else np.logical_or(out, tri)
    if key_padding_mask is not None:
        kp = blocked_entries(key_padding_mask).reshape(-1, 1, 1, nk)
        out = kp if out is None else np.logical_or(out, kp)
    if out is None:
        return None
    out = np.broadcast_to(out, (b, h, nq, nk))
    if not out.any():
        return None
    return out


def head_records(probs: np.ndarray, *, layer: str, call: int, mask: Optional[np.ndarray],
                 **fields: Any) -> List[AttentionRecord]:
    """One record per head of a (batch, heads, n_q, n_k) call: views, no
    copies."""
    heads = probs.shape[1]
    out = []
    for h in range(heads):
        m = None
        if mask is not None:
            m = mask[:, h].view()
            m.flags.writeable = False
        out.append(AttentionRecord(layer=layer, call=call, head=h, heads=heads,
                                   probs=probs[:, h], mask=m, **fields))
    return out


def from_attentions(attentions: Any, *, names: Optional[Sequence[str]] = None,
                    attention_mask: Any = None, is_causal: bool = False,
                    dtype: Optional[str] = None) -> AttentionRecords:
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

    One record per layer and head (``source="attentions"``).
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
    records = AttentionRecords()
    for i, t in enumerate(layers):
        name = names[i] if names is not None else f"layers.{i}"
        if t is None:
            raise ValueError(f"from_attentions: layer {name} has no attentions (None)")
        precision = (dtype_name(t.dtype) if isinstance(t, torch.Tensor)
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
        mask = combined_mask(a.shape, None, kpm, bool(is_causal))
        records.extend(head_records(
            a, layer=name, call=0, mask=mask, key_padding_mask=kpm, is_causal=bool(is_causal),
            source="attentions", self_attention=True, precision=precision, device=device))
    return records
