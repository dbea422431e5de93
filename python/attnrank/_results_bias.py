"""Records of a model's positional biases (``positional_bias`` of
``attnrank heads --config`` and ``attnrank weights``; docs/conventions.md,
docs/theory/positional-bias.md): made from the library's schema
(attnrank._results.records), so ``to_dict()`` equals the CLI's block."""

from attnrank._results import Mask, records  # noqa: F401 (Mask: the hints' globals)

__all__ = records(globals(), "bias")
