"""attnrank: exact linear algebra for the rank and expressivity of attention.

The Python face of the attnrank C library (docs/python.md):

- :func:`version` -- the C library's version;
- :func:`spectrum` -- singular values and rank metrics of a matrix or a
  stack (numpy of any layout, torch tensors), as ``attnrank spectrum --json``;
- :func:`rank_metrics` -- numerical rank (with the tolerance used) and the
  effective ranks of a singular spectrum, as ``attnrank spectrum --json``;
- :func:`represent` -- can one attention head produce this map (unmasked or
  under a mask, one map or a stack), with the certificate W_q, W_k, as
  ``attnrank represent --json``;
- :func:`heads` -- head-size bound of a layer (d, h, n, a mask or a model's
  config.json), as ``attnrank heads --json``;
- :func:`params` -- BERT-style parameter counts, as ``attnrank params --json``;
- :func:`copying_scores`, :func:`composition_score`, :func:`circuits` -- OV
  copying scores and composition scores of heads, as ``attnrank circuits``;
- :func:`verify` -- re-measure the theory's statements on seeded instances,
  as ``attnrank verify --json`` (for a test suite: ``assert attnrank.verify()``);
- :func:`head_scores` -- previous-token, first-token, diagonal and induction
  scores of attention maps (rows as queries by default);
- :class:`Error` and its subclasses -- one per C status, each also a
  ValueError, TypeError, MemoryError, OSError or RuntimeError;
- :mod:`attnrank.torch` -- per-head attention probabilities captured from
  PyTorch models (imported on first use; needs torch, ``import attnrank``
  does not).
"""

from attnrank import (
    _results,
    _results_bias,
    _results_check,
    _results_circuits,
    _results_scores,
    _results_theory,
    _results_verify,
    _results_weights,
)
from attnrank._errors import (
    ArgumentError,
    ConvergenceError,
    DomainError,
    Error,
    FileError,
    FormatError,
    InternalError,
    NonFiniteError,
    OutOfMemoryError,
    SizeError,
    UnsupportedError,
)
from attnrank._core import (
    assert_conditions,
    check,
    circuits,
    collapse,
    composition_score,
    copying_scores,
    depthwidth,
    depthwidth_fit,
    full_copying_scores,
    head_scores,
    heads,
    params,
    rank_metrics,
    represent,
    seprank,
    softmax_bottleneck,
    spectrum,
    strerror,
    verify,
    version,
    weights,
)

__version__ = version()

# The result records: each module's __all__, whose record names come from
# the library's schema (attnrank._results.records) -- spectrum, represent,
# heads and params (_results); positional biases; seprank, depthwidth and
# collapse (_results_theory); softmax_bottleneck and weights; check; verify;
# circuits and copying scores; head scores.
_RECORD_MODULES = (_results, _results_bias, _results_theory, _results_weights, _results_check,
                   _results_verify, _results_circuits, _results_scores)
globals().update({name: getattr(m, name) for m in _RECORD_MODULES for name in m.__all__
                  if name != "SCORE_NAMES"})

__all__ = [
    "ArgumentError",
    "ConvergenceError",
    "DomainError",
    "Error",
    "FileError",
    "FormatError",
    "InternalError",
    "NonFiniteError",
    "OutOfMemoryError",
    "SizeError",
    "UnsupportedError",
    "assert_conditions",
    "check",
    "circuits",
    "collapse",
    "composition_score",
    "copying_scores",
    "depthwidth",
    "depthwidth_fit",
    "full_copying_scores",
    "head_scores",
    "heads",
    "params",
    "rank_metrics",
    "represent",
    "seprank",
    "softmax_bottleneck",
    "spectrum",
    "strerror",
    "verify",
    "version",
    "weights",
] + [name for m in _RECORD_MODULES for name in m.__all__ if name != "SCORE_NAMES"]


def __getattr__(name):
    # attnrank.torch without an explicit import, and without importing torch
    # (about a second) for users who never touch it.
    if name == "torch":
        import importlib

        return importlib.import_module("attnrank.torch")
    raise AttributeError(f"module 'attnrank' has no attribute {name!r}")
