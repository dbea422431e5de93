"""The capture behind :class:`attnrank.torch.capture`: attention
probabilities from whatever computes them inside a forward pass.

Four sources, each recorded once per call and head:

``nn.MultiheadAttention``
    each module's ``forward`` is replaced, for the capture, by an instance
    attribute that first calls the original with ``need_weights=True,
    average_attn_weights=False`` for the per-head weights (under a forked
    random-number state, so dropout draws nothing the real call would not),
    then calls it again exactly as the caller did and returns that result:
    the module's output is the one an uncaptured run gives, bit for bit;
``scaled_dot_product_attention``
    (``torch.nn.functional``; torch 1.13's private
    ``_scaled_dot_product_attention``) seen through a
    :class:`torch.overrides.TorchFunctionMode`, which also sees the names a
    model imported with ``from torch.nn.functional import ...``.  The
    probabilities the call uses are computed beside it from its own query,
    key, mask, causal flag, scale and grouped-query flag (softmax of the
    float64 logits, rounded to the query's dtype: the stored map at the
    call's precision); the call itself then runs unchanged;
explicit softmax
    ``torch.softmax``, ``torch.nn.functional.softmax``, ``Tensor.softmax``
    and ``nn.Softmax`` over the last axis, inside the modules ``softmax_in``
    selects (by default the attention-like ones: class or attribute name
    containing ``attn`` or ``attention``); the output is recorded as
    returned, and the mask is read from the logits (-inf, or below half the
    dtype's most negative value);
hook points
    the outputs of the modules ``hooks`` names (glob patterns over module
    names, e.g. TransformerLens's ``"blocks.*.attn.hook_pattern"``), taken as
    batch x heads x n_q x n_k probabilities.

Softmax and scaled-dot-product calls made inside a captured
``nn.MultiheadAttention`` belong to it and are not recorded twice.  The
fused fast paths of ``nn.TransformerEncoderLayer`` (which call no
attention module at all) are switched off for the capture; that path is the
one source whose output may differ from an uncaptured run, by rounding.
"""

from __future__ import annotations

import contextlib
import fnmatch
import inspect
import math
import re
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from attnrank._torch_records import (
    AttentionRecords, CaptureError, combined_mask, dtype_name, has_bias, head_records, to_numpy,
)

__all__ = ["capture"]

_ATTENTION_NAME = re.compile(r"attn|attention", re.IGNORECASE)
_SDPA_PARAMS = {
    # torch >= 2.0 (scale: 2.1, enable_gqa: 2.5)
    "scaled_dot_product_attention": ("query", "key", "value", "attn_mask", "dropout_p",
                                     "is_causal", "scale", "enable_gqa"),
    # torch 1.13
    "_scaled_dot_product_attention": ("query", "key", "value", "attn_mask", "dropout_p",
                                      "need_attn_weights", "is_causal"),
}
_SOFTMAX_FUNCTIONS = {f for f in (torch.softmax, torch.nn.functional.softmax,
                                  torch.Tensor.softmax,
                                  getattr(getattr(torch, "special", None), "softmax", None))
                      if f is not None}
_HEAD_COUNT_ATTRS = ("num_heads", "n_head", "num_attention_heads", "n_heads")
_HEAD_SIZE_ATTRS = ("head_dim", "head_size", "d_head", "attention_head_size")
_WIDTH_ATTRS = ("embed_dim", "hidden_size", "n_embd", "d_model", "all_head_size")


def is_attention_like(name: str, module: nn.Module) -> bool:
    """A module whose class name says attention, or whose attribute name
    does and that has submodules (so GPT-2's ``c_attn`` projection, a
    single layer, is not taken for the attention it feeds)."""
    if _ATTENTION_NAME.search(type(module).__name__):
        return True
    last = name.rsplit(".", 1)[-1]
    return bool(_ATTENTION_NAME.search(last)) and next(module.children(), None) is not None


def _first_int(module: nn.Module, names: Sequence[str]) -> Optional[int]:
    for a in names:
        v = getattr(module, a, None)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def module_heads(module: Optional[nn.Module]) -> Optional[int]:
    """The head count a module states (num_heads, n_head, ...), or None."""
    return None if module is None else _first_int(module, _HEAD_COUNT_ATTRS)


def module_head_size(module: Optional[nn.Module]) -> Optional[int]:
    """The head size a module states (head_dim, ..., or width / heads)."""
    if module is None:
        return None
    size = _first_int(module, _HEAD_SIZE_ATTRS)
    if size is not None:
        return size
    heads, width = module_heads(module), _first_int(module, _WIDTH_ATTRS)
    if heads and width and width % heads == 0:
        return width // heads
    return None


def _selector(spec: Any) -> Callable[[str, nn.Module], bool]:
    """``softmax_in`` as a predicate on (module name, module)."""
    if spec is None or spec is False:
        return lambda name, module: False
    if isinstance(spec, str) and spec == "auto":
        return is_attention_like
    if callable(spec) and not isinstance(spec, type):
        return spec
    items = [spec] if isinstance(spec, (str, type)) else list(spec)
    for it in items:
        if not isinstance(it, (str, type)):
            raise TypeError(f"capture: softmax_in entries must be module types or name "
                            f"patterns (str), got {type(it).__name__}")
    types = tuple(it for it in items if isinstance(it, type))
    patterns = [it for it in items if isinstance(it, str)]
    return lambda name, module: (isinstance(module, types)
                                 or any(fnmatch.fnmatchcase(name, p) for p in patterns))


def _batch_heads(shape: Sequence[int], heads_hint: Optional[int]) -> Tuple[int, int]:
    """(batch, heads) of a (..., n_q, n_k) tensor: 4-D or more is (..., heads,
    n_q, n_k) with the leading axes as batch; 3-D is (batch * heads, n_q,
    n_k) when the module states its head count and it divides, else (heads,
    n_q, n_k); 2-D is one head."""
    lead = list(shape[:-2])
    if len(lead) >= 2:
        return int(np.prod(lead[:-1])), int(lead[-1])
    if len(lead) == 1:
        if heads_hint and lead[0] % heads_hint == 0:
            return lead[0] // heads_hint, heads_hint
        return 1, int(lead[0])
    return 1, 1


def _work_dtype(t: "torch.Tensor") -> "torch.dtype":
    return torch.float32 if t.device.type == "mps" else torch.float64


def blocked_logits(t: "torch.Tensor") -> "torch.Tensor":
    """The entries of float logits (or an additive mask) that mask: -inf, or
    below half the dtype's most negative value (what masking code adds as
    ``finfo.min`` rounds every logit it meets to itself); the torch twin of
    :func:`attnrank._torch_records.blocked_entries`."""
    return torch.isneginf(t) | (t <= torch.finfo(t.dtype).min / 2)


def _sdpa_arguments(name: str, args: Sequence[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    params = _SDPA_PARAMS[name]
    bound = dict(zip(params, args))
    bound.update(kwargs)
    return bound


def sdpa_probabilities(a: Dict[str, Any]) -> Tuple["torch.Tensor", "torch.Tensor"]:
    """(probabilities, blocked) of a scaled-dot-product call's arguments,
    both of the logits' full shape (..., n_q, n_k): softmax(q k^T scale +
    mask) in float64, causal entries and False bool-mask entries blocked."""
    q, k = a["query"].detach(), a["key"].detach()
    work = _work_dtype(q)
    qd, kd = q.to(work), k.to(work)
    if a.get("enable_gqa") and kd.dim() >= 3 and kd.size(-3) != qd.size(-3):
        kd = kd.repeat_interleave(qd.size(-3) // kd.size(-3), dim=-3)
    scale = a.get("scale")
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else float(scale)
    logits = torch.matmul(qd, kd.transpose(-2, -1)) * scale
    blocked = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    mask = a.get("attn_mask")
    if mask is not None:
        mask = mask.detach()
        if mask.dtype == torch.bool:
            blocked = blocked | ~mask
        else:
            logits = logits + mask.to(work)
            blocked = blocked | blocked_logits(mask)
    if a.get("is_causal"):
        n_q, n_k = logits.shape[-2:]
        tri = torch.ones(n_q, n_k, dtype=torch.bool, device=logits.device).tril()
        blocked = blocked | ~tri
    logits = logits.masked_fill(blocked, -math.inf)
    return torch.softmax(logits, dim=-1).to(q.dtype), blocked


@contextlib.contextmanager
def _mode_suspended(mode: Optional[TorchFunctionMode]) -> Any:
    """Run a block without the capture's function mode when it is the
    innermost one: an active mode makes ``nn.MultiheadAttention`` leave its
    fused fast path (it checks ``has_torch_function``), which would change
    the module's rounding.  torch's private pop is used where it exists
    (1.13 to 2.x); otherwise the mode stays and the depth counter keeps
    calls inside the module from being recorded twice."""
    pop = getattr(torch.overrides, "_pop_mode_temporarily", None)
    current = getattr(torch.overrides, "_get_current_function_mode", None)
    if mode is not None and pop is not None and current is not None and current() is mode:
        with pop():
            yield
    else:
        yield


class _AttentionMode(TorchFunctionMode):
    """Sees scaled-dot-product and softmax calls anywhere in the forward."""

    def __init__(self, owner: "capture") -> None:
        super().__init__()
        self.owner = owner

    def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (),
                           kwargs: Optional[Dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        owner = self.owner
        if owner.inside_mha:
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in _SDPA_PARAMS:
            arguments = _sdpa_arguments(name, args, kwargs)
            probs, blocked = sdpa_probabilities(arguments)
            result = func(*args, **kwargs)
            owner.record_sdpa(arguments, probs, blocked)
            return result
        if func in _SOFTMAX_FUNCTIONS:
            result = func(*args, **kwargs)
            owner.maybe_record_softmax(args, kwargs, result)
            return result
        return func(*args, **kwargs)


class capture:
    """Context manager: record the attention probabilities of every
    attention call inside ``model`` while the block runs, one record per
    call and head (:class:`attnrank.torch.AttentionRecord`).

    ::

        with attnrank.torch.capture(model) as records:
            out = model(tokens)          # the same output as without capture
        records[0].probs                 # batch x n_q x n_k of one head

    model
        a ``torch.nn.Module``;
    dtype
        converts every captured array (e.g. ``"float64"``); by default they
        stay as stored (bfloat16 -> float32, exactly, as a StoredArray);
    softmax_in
        where an explicit softmax over the last axis counts as attention:
        ``"auto"`` (default: modules whose class or attribute name contains
        ``attn`` or ``attention``), a module type, a glob pattern over module
        names (``"transformer.h.*.attn"``), a list of those, a predicate
        ``f(name, module)``, or None (no softmax capture);
    hooks
        glob patterns of modules whose *output* is an attention pattern
        (batch x heads x n_q x n_k), such as TransformerLens's
        ``"blocks.*.attn.hook_pattern"``;
    on_empty
        what happens when the block ran but nothing was captured: ``"raise"``
        (default, :class:`CaptureError`), ``"warn"`` (a RuntimeWarning) or
        ``"ignore"``; the message lists the attention-like modules seen.

    ``records`` is an :class:`attnrank.torch.AttentionRecords` list that
    fills as the model runs.  The model's modules, hooks and torch's
    function mode are restored on exit, also when the block raises.
    """

    def __init__(self, model: nn.Module, *, dtype: Optional[str] = None,
                 softmax_in: Any = "auto", hooks: Iterable[str] = (),
                 on_empty: str = "raise") -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"capture: expected a torch.nn.Module, got {type(model).__name__}")
        if on_empty not in ("raise", "warn", "ignore"):
            raise ValueError(f"capture: on_empty must be 'raise', 'warn' or 'ignore', "
                             f"got {on_empty!r}")
        hooks = [hooks] if isinstance(hooks, str) else list(hooks)
        for p in hooks:
            if not isinstance(p, str):
                raise TypeError(f"capture: hooks must be module-name patterns (str), got "
                                f"{type(p).__name__}")
        self.model = model
        self.dtype = dtype
        self.softmax_selected = _selector(softmax_in)
        self.hook_patterns = hooks
        self.on_empty = on_empty
        self.records = AttentionRecords()
        self.inside_mha = 0
        self._names = {id(m): (name or "<model>") for name, m in model.named_modules()}
        self._stack: List[nn.Module] = []
        self._saved: List[Tuple[nn.Module, bool, Any]] = []
        self._flags: List[Tuple[nn.Module, Any]] = []
        self._handles: List[Any] = []
        self._calls: Dict[str, int] = {}
        self._mha_calls: Dict[int, int] = {}
        self._layer_calls: Dict[int, int] = {}
        self._fastpath: Optional[bool] = None
        self._mode: Optional[_AttentionMode] = None

    # -- where a call happens ----------------------------------------------
    def _push(self, module: nn.Module, _inputs: Any) -> None:
        self._stack.append(module)

    def _pop(self, module: nn.Module, _inputs: Any, _output: Any) -> None:
        # A module that raised never pops: drop everything above it too.
        while self._stack:
            if self._stack.pop() is module:
                break

    def _current(self) -> Tuple[str, Optional[nn.Module]]:
        """The innermost running module that is not a bare nn.Softmax."""
        for m in reversed(self._stack):
            if not isinstance(m, nn.Softmax):
                return self._names.get(id(m), type(m).__name__), m
        return "<model>", None

    def _next_call(self, name: str) -> int:
        call = self._calls.get(name, 0)
        self._calls[name] = call + 1
        return call

    def _add(self, name: str, probs: "torch.Tensor", blocked: Optional[np.ndarray],
             heads_hint: Optional[int], **fields: Any) -> None:
        b, h = _batch_heads(probs.shape, heads_hint)
        n_q, n_k = probs.shape[-2:]
        array = to_numpy(probs, self.dtype, what=name).reshape(b, h, n_q, n_k)
        mask = None
        if blocked is not None and blocked.any():
            mask = np.broadcast_to(blocked, probs.shape).reshape(b, h, n_q, n_k)
        self.records.extend(head_records(
            array, layer=name, call=self._next_call(name), mask=mask,
            precision=dtype_name(probs.dtype), device=str(probs.device), **fields))

    # -- the sources ---------------------------------------------------------
    def record_sdpa(self, a: Dict[str, Any], probs: "torch.Tensor",
                    blocked: "torch.Tensor") -> None:
        name, module = self._current()
        mask = a.get("attn_mask")
        given = None
        if mask is not None:
            given = to_numpy(~mask if mask.dtype == torch.bool else mask,
                             what=f"{name} attn_mask")
        n_q, n_k = probs.shape[-2:]
        self._add(name, probs, blocked.cpu().numpy(), None, attn_mask=given,
                  is_causal=bool(a.get("is_causal", False)), biased=has_bias(given),
                  source="scaled_dot_product_attention",
                  self_attention=None if n_q == n_k else False,
                  head_size=int(a["query"].size(-1)),
                  dropout=float(a.get("dropout_p") or 0.0))

    def maybe_record_softmax(self, args: Sequence[Any], kwargs: Dict[str, Any],
                             result: Any) -> None:
        if not args or not isinstance(args[0], torch.Tensor) or not isinstance(result,
                                                                                torch.Tensor):
            return
        x = args[0]
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if x.dim() < 2 or not isinstance(dim, int) or not x.is_floating_point():
            return
        name, module = self._current()
        if module is None or not self.softmax_selected(name, module):
            return
        if dim % x.dim() != x.dim() - 1:
            return  # not over the keys of a (..., n_q, n_k) score tensor
        blocked = blocked_logits(x.detach()).cpu().numpy()
        self._add(name, result.detach(), blocked, module_heads(module), attn_mask=None,
                  is_causal=False, biased=False, source="softmax", self_attention=None,
                  head_size=module_head_size(module), dropout=0.0)

    def _record_hook(self, module: nn.Module, _inputs: Any, output: Any) -> None:
        if not isinstance(output, torch.Tensor) or output.dim() < 2:
            raise CaptureError(f"capture: hook point {self._names[id(module)]} returned "
                               f"{type(output).__name__}, not a tensor of probabilities")
        name = self._names[id(module)]
        parent = self._stack[-2] if len(self._stack) >= 2 else None
        self._add(name, output.detach(), None, module_heads(parent), source="hook",
                  self_attention=None, head_size=module_head_size(parent))

    # -- nn.MultiheadAttention -------------------------------------------------
    def _wrap(self, name: str, module: nn.MultiheadAttention, original: Any):
        signature = inspect.signature(type(module).forward)

        def forward(*args: Any, **kwargs: Any):
            bound = signature.bind(module, *args, **kwargs)
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)))  # self
            probe = dict(arguments, need_weights=True, average_attn_weights=False)
            dropout_active = module.training and module.dropout > 0.0
            q = arguments.get("query")
            devices = ([q.device.index or 0] if isinstance(q, torch.Tensor)
                       and q.device.type == "cuda" else [])
            self.inside_mha += 1
            try:
                with _mode_suspended(self._mode):
                    # The same random draws for the probe and the real call.
                    with torch.random.fork_rng(devices=devices, enabled=dropout_active):
                        _, weights = original(**probe)
                    result = original(*args, **kwargs)
            finally:
                self.inside_mha -= 1
            self._record_mha(name, module, arguments, weights)
            return result

        return forward

    def _record_mha(self, name: str, module: nn.MultiheadAttention, arguments: Dict[str, Any],
                    weights: "torch.Tensor") -> None:
        self._mha_calls[id(module)] = self._mha_calls.get(id(module), 0) + 1
        w = weights.unsqueeze(0) if weights.dim() == 3 else weights
        q, k, v = arguments.get("query"), arguments.get("key"), arguments.get("value")
        am, kpm = arguments.get("attn_mask"), arguments.get("key_padding_mask")
        am_np = None if am is None else to_numpy(am, what=f"{name} attn_mask")
        kpm_np = (None if kpm is None else
                  to_numpy(kpm, what=f"{name} key_padding_mask").reshape(-1, kpm.shape[-1]))
        is_causal = bool(arguments.get("is_causal", False)) and am is None
        b, h, n_q, n_k = w.shape
        mask = combined_mask((b, h, n_q, n_k), am_np, kpm_np, is_causal)
        array = to_numpy(w, self.dtype, what=name)
        self.records.extend(head_records(
            array, layer=name, call=self._next_call(name), mask=mask, attn_mask=am_np,
            key_padding_mask=kpm_np, is_causal=bool(arguments.get("is_causal", False)),
            biased=has_bias(am_np), source="nn.MultiheadAttention",
            self_attention=(q is k and k is v), head_size=module.embed_dim // module.num_heads,
            precision=dtype_name(weights.dtype), device=str(weights.device),
            dropout=float(module.dropout) if module.training else 0.0))

    def _patch_mha(self) -> None:
        for name, module in self.model.named_modules():
            if isinstance(module, nn.MultiheadAttention):
                self._saved.append((module, "forward" in module.__dict__,
                                    module.__dict__.get("forward")))
                module.forward = self._wrap(name or "<model>", module, module.forward)
        for module in self.model.modules():
            if isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
                self._handles.append(module.register_forward_pre_hook(self._count_layer))
                if hasattr(module, "activation_relu_or_gelu"):
                    # read only by the fused fast paths, which call no self_attn
                    self._flags.append((module, module.activation_relu_or_gelu))
                    module.activation_relu_or_gelu = 0
        mha = getattr(torch.backends, "mha", None)
        if mha is not None and hasattr(mha, "set_fastpath_enabled"):
            self._fastpath = mha.get_fastpath_enabled()
            mha.set_fastpath_enabled(False)

    def _count_layer(self, module: nn.Module, _inputs: Any) -> None:
        self._layer_calls[id(module)] = self._layer_calls.get(id(module), 0) + 1

    def _missed_layers(self) -> List[str]:
        missed = []
        for name, module in self.model.named_modules():
            attn = [getattr(module, a, None) for a in ("self_attn", "multihead_attn")]
            if self._layer_calls.get(id(module), 0) and any(
                    isinstance(a, nn.MultiheadAttention) and not self._mha_calls.get(id(a), 0)
                    for a in attn):
                missed.append(name)
        return missed

    # -- entering and leaving ---------------------------------------------------
    def __enter__(self) -> AttentionRecords:
        try:
            self.records.modules_seen = [
                (name or "<model>", type(m).__name__)
                for name, m in self.model.named_modules() if is_attention_like(name, m)]
            self._patch_mha()
            for name, module in self.model.named_modules():
                self._handles.append(module.register_forward_pre_hook(self._push))
                self._handles.append(module.register_forward_hook(self._pop))
                if any(fnmatch.fnmatchcase(name, p) for p in self.hook_patterns):
                    self._handles.append(module.register_forward_hook(self._record_hook))
            self._mode = _AttentionMode(self)
            self._mode.__enter__()
        except BaseException:
            self._restore()
            raise
        return self.records

    def _restore(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        for module, had_own, own in reversed(self._saved):
            if had_own:
                module.forward = own
            else:
                module.__dict__.pop("forward", None)
        self._saved.clear()
        for module, flag in reversed(self._flags):
            module.activation_relu_or_gelu = flag
        self._flags.clear()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._stack.clear()
        if self._fastpath is not None:
            torch.backends.mha.set_fastpath_enabled(self._fastpath)
            self._fastpath = None

    def _nothing_message(self) -> str:
        seen = ", ".join(f"{n} ({c})" for n, c in self.records.modules_seen) or "none"
        return (f"capture: no attention probabilities were recorded; attention-like modules "
                f"seen: {seen}.  nn.MultiheadAttention, scaled_dot_product_attention and "
                f"softmax inside modules named like attention are captured by default: name "
                f"the modules that compute softmax(scores) with softmax_in=[...] (types or "
                f"name patterns), or their pattern outputs with hooks=[...]; a fused kernel "
                f"that never exposes probabilities cannot be captured")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        missed = self._missed_layers() if exc_type is None else []
        self._restore()
        if missed:
            raise CaptureError(
                f"layers {missed} ran without calling their attention module (a fused fast "
                f"path of this torch version); run the model in train mode with dropout 0, "
                f"or with an attn_mask")
        if exc_type is None and not self.records and self.on_empty != "ignore":
            if self.on_empty == "raise":
                raise CaptureError(self._nothing_message())
            warnings.warn(self._nothing_message(), RuntimeWarning, stacklevel=2)
        return False

