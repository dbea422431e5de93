"""Exceptions of attnrank: one class per C status code (include/attnrank/status.h).

Every exception the package raises for a bad argument or a failed computation
is an :class:`Error`.  Each subclass also derives from the built-in exception a
Python caller would expect (``ValueError``, ``TypeError``, ``MemoryError``,
``OSError``, ``RuntimeError``), so ``except ValueError`` keeps working.

An error carries what the C library said:

``status``
    the C status code (``AR_EINVAL`` = 1, ...), an int;
``status_name``
    its name, ``"AR_EINVAL"``;
``message``
    the C message: the function's ``ar_error`` text when it filled one, else
    ``ar_strerror(status)``;
``function``
    the C function (or the Python entry point that checked the argument);
``detail``
    what the binding adds about which argument was wrong, or ``None``.

``str(err)`` is ``"function: message (detail)"``.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "Error",
    "ArgumentError",
    "NonFiniteError",
    "SizeError",
    "DomainError",
    "FormatError",
    "UnsupportedError",
    "OutOfMemoryError",
    "FileError",
    "ConvergenceError",
    "InternalError",
    "STATUS_NAMES",
    "error_class",
]

# The order of enum ar_status.
STATUS_NAMES = (
    "AR_OK",
    "AR_EINVAL",
    "AR_ENOMEM",
    "AR_ENONFINITE",
    "AR_ENOCONV",
    "AR_EIO",
    "AR_EFORMAT",
    "AR_EUNSUPPORTED",
    "AR_EDOMAIN",
    "AR_ELAPACK",
    "AR_ESIZE",
)


class Error(Exception):
    """Base class of every attnrank error; see the module docstring."""

    def __init__(self, status: int, message: str, function: str = "",
                 detail: Optional[str] = None) -> None:
        self.status = int(status)
        self.status_name = (STATUS_NAMES[self.status]
                            if 0 <= self.status < len(STATUS_NAMES) else "unknown")
        self.message = message
        self.function = function
        self.detail = detail
        text = f"{function}: {message}" if function else message
        if detail:
            text += f" ({detail})"
        super().__init__(text)

    def __reduce__(self):  # picklable (multiprocessing) despite the signature
        return (type(self), (self.status, self.message, self.function, self.detail))


class ArgumentError(Error, ValueError):
    """AR_EINVAL: a bad argument (size, value out of range, wrong shape)."""


class NonFiniteError(ArgumentError):
    """AR_ENONFINITE: NaN or Inf in an input."""


class SizeError(ArgumentError):
    """AR_ESIZE: the sizes of operands do not agree."""


class DomainError(ArgumentError):
    """AR_EDOMAIN: an input outside the mathematical domain (e.g. P <= 0)."""


class FormatError(Error, ValueError):
    """AR_EFORMAT: malformed file content."""


class UnsupportedError(Error, TypeError):
    """AR_EUNSUPPORTED: well formed but not supported (a dtype, a layout)."""


class OutOfMemoryError(Error, MemoryError):
    """AR_ENOMEM: an allocation failed or would exceed a memory limit."""


class FileError(Error, OSError):
    """AR_EIO: a file could not be opened, read or written."""


class ConvergenceError(Error, RuntimeError):
    """AR_ENOCONV: an iterative method did not converge."""


class InternalError(Error, RuntimeError):
    """AR_ELAPACK or an unknown status: a bug in attnrank, please report it."""


_BY_STATUS: Dict[int, Type[Error]] = {
    1: ArgumentError,
    2: OutOfMemoryError,
    3: NonFiniteError,
    4: ConvergenceError,
    5: FileError,
    6: FormatError,
    7: UnsupportedError,
    8: DomainError,
    9: InternalError,
    10: SizeError,
}


def error_class(status: int) -> Type[Error]:
    """The exception class of a non-zero C status (InternalError if unknown)."""
    return _BY_STATUS.get(int(status), InternalError)
