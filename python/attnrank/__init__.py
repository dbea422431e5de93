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
from attnrank._results import RankMetrics, Spectrum, SpectrumStack, Tolerance
from attnrank._results import (
    Certificate,
    FamilyError,
    Fit,
    HeadConfig,
    Heads,
    HeadsModel,
    InnovationGap,
    InputX,
    Mask,
    MaskedCertificate,
    MaskedRepresent,
    MaskedTolerance,
    ModelConfig,
    PaperTables,
    ParamBreakdown,
    ParamCount,
    PositionalBias,
    Represent,
    RepresentSlice,
    RepresentStack,
    RepresentSummary,
    RepresentTolerance,
    Residual,
    Smoothing,
)
from attnrank._core import rank_metrics, spectrum, strerror, version
from attnrank._core import heads, params, represent

__version__ = version()

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
    "RankMetrics",
    "SizeError",
    "Spectrum",
    "SpectrumStack",
    "Tolerance",
    "UnsupportedError",
    "rank_metrics",
    "spectrum",
    "strerror",
    "version",
    # represent, heads, params
    "Certificate",
    "FamilyError",
    "Fit",
    "HeadConfig",
    "Heads",
    "HeadsModel",
    "InnovationGap",
    "InputX",
    "Mask",
    "MaskedCertificate",
    "MaskedRepresent",
    "PositionalBias",
    "MaskedTolerance",
    "ModelConfig",
    "PaperTables",
    "ParamBreakdown",
    "ParamCount",
    "Represent",
    "RepresentSlice",
    "RepresentStack",
    "RepresentSummary",
    "RepresentTolerance",
    "Residual",
    "Smoothing",
    "heads",
    "params",
    "represent",
]


def __getattr__(name):
    # attnrank.torch without an explicit import, and without importing torch
    # (about a second) for users who never touch it.
    if name == "torch":
        import importlib

        return importlib.import_module("attnrank.torch")
    raise AttributeError(f"module 'attnrank' has no attribute {name!r}")

# ---- softmax bottleneck, weights ----
# softmax_bottleneck(P, d=...) -- can an output layer of width d express P
# (Yang et al. 2018), as ``attnrank softmax-bottleneck --json``;
# weights(model_dir) -- QK-circuit spectra and head-size verdicts of a
# model's safetensors weights, a per-layer, per-head table, as
# ``attnrank weights --json``.
from attnrank._results_weights import (
    EmbeddingRank,
    FixedMultiHead,
    LayerKind,
    ModelMasks,
    QKHead,
    QKNoise,
    SoftmaxBottleneck,
    SoftmaxBottleneckFit,
    SoftmaxBottleneckTolerance,
    Weights,
    WeightsConfig,
    WeightsEmbedding,
    WeightsLayer,
    WeightsSummary,
    WeightsTolerance,
    WeightsVerdict,
    WeightsVerdicts,
    YangCondition,
)
from attnrank._core import softmax_bottleneck, weights

__all__ += [
    "EmbeddingRank",
    "FixedMultiHead",
    "LayerKind",
    "ModelMasks",
    "QKHead",
    "QKNoise",
    "SoftmaxBottleneck",
    "SoftmaxBottleneckFit",
    "SoftmaxBottleneckTolerance",
    "Weights",
    "WeightsConfig",
    "WeightsEmbedding",
    "WeightsLayer",
    "WeightsSummary",
    "WeightsTolerance",
    "WeightsVerdict",
    "WeightsVerdicts",
    "YangCondition",
    "softmax_bottleneck",
    "weights",
]

# ---- positional biases ----
# the ``positional_bias`` block of heads(config=...) and weights(): per
# layer kind and head, the bias rank and the reach (docs/theory/positional-bias.md).
from attnrank._results_bias import BiasLayerKind, HeadBias, ModelBias  # noqa: E402

__all__ += ["BiasLayerKind", "HeadBias", "ModelBias"]

# ---- seprank, depthwidth, collapse ----
# seprank -- grid-tensor rank of the simplified self-attention network (a
# lower bound on its separation rank), as ``attnrank seprank --json``;
# depthwidth, depthwidth_fit -- depth/width allocation by the transition law
# and its refit from points, as ``attnrank depthwidth --json``; collapse --
# rank collapse across depth, as ``attnrank collapse --json``.
from attnrank._results_theory import (  # noqa: E402
    Collapse,
    CollapseBound,
    CollapseDecayFit,
    CollapseDepth,
    DepthWidthEmbedding,
    DepthWidthFit,
    DepthWidthLaw,
    DepthWidthOptimum,
    DepthWidthTransitionDepth,
    DepthWidthTransitionWidth,
    DepthWidthVerdict,
    PrimeRank,
    Seprank,
    SeprankEmbedding,
)
from attnrank._core import collapse, depthwidth, depthwidth_fit, seprank  # noqa: E402

__all__ += [
    "Collapse",
    "CollapseBound",
    "CollapseDecayFit",
    "CollapseDepth",
    "DepthWidthEmbedding",
    "DepthWidthFit",
    "DepthWidthLaw",
    "DepthWidthOptimum",
    "DepthWidthTransitionDepth",
    "DepthWidthTransitionWidth",
    "DepthWidthVerdict",
    "PrimeRank",
    "Seprank",
    "SeprankEmbedding",
    "collapse",
    "depthwidth",
    "depthwidth_fit",
    "seprank",
]

# ---- check ----
from attnrank._results_check import (  # noqa: E402
    Check,
    CheckLaw,
    CheckLawFit,
    CheckReport,
    CheckVerdict,
)
from attnrank._core import assert_conditions, check  # noqa: E402

__all__ += [
    "Check",
    "CheckLaw",
    "CheckLawFit",
    "CheckReport",
    "CheckVerdict",
    "assert_conditions",
    "check",
]

# ---- head scores ----
# head_scores -- previous-token, first-token (sink), diagonal, induction and
# duplicate-token scores of attention maps (docs/theory/head-scores.md).
from attnrank._results_scores import HeadScores  # noqa: E402
from attnrank._core import head_scores  # noqa: E402

__all__ += [
    "HeadScores",
    "head_scores",
]

# ---- circuits ----
# copying_scores, composition_score -- one head's OV copying scores and the
# composition of two heads from their factors; circuits -- those of every
# head of a checkpoint, as ``attnrank circuits`` (docs/theory/circuits.md).
from attnrank._results_circuits import Circuits, CopyingScores  # noqa: E402
from attnrank._core import (  # noqa: E402
    circuits, composition_score, copying_scores, full_copying_scores,
)

__all__ += [
    "Circuits",
    "CopyingScores",
    "circuits",
    "composition_score",
    "copying_scores",
    "full_copying_scores",
]

# ---- verify ----
# verify -- re-measure the theory's statements on seeded instances, as
# ``attnrank verify`` (a report that is true when every check passed).
from attnrank._results_verify import VerifyCheck, VerifyReport  # noqa: E402
from attnrank._core import verify  # noqa: E402

__all__ += [
    "VerifyCheck",
    "VerifyReport",
    "verify",
]
