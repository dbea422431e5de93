"""Input conversion shared by the bindings: any array-like (numpy arrays of
any layout, torch tensors, nested lists) to a real numpy array the C views
can borrow, and the storage precision it came in.

Zero-copy where the C API allows it: a float64 array is handed over with its
own strides (C order, Fortran order, slices, transposes).  Other real dtypes
are converted to float64 (one copy; the C library computes in float64) and
keep their precision for the tolerance.  torch tensors are detached (no
copy), moved to the CPU (a copy, only when they live elsewhere), and bfloat16
becomes float32 exactly; tensors never go through Python lists.  A
:class:`StoredArray` (what :mod:`attnrank.torch` records hold for bfloat16
weights) says its storage precision itself.
"""

from __future__ import annotations

import numpy as np

from attnrank._errors import ArgumentError, OutOfMemoryError, UnsupportedError

_PRECISION_OF_DTYPE = {
    np.dtype(np.float64): "float64",
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
}


class StoredArray(np.ndarray):
    """A numpy array whose values were stored in a precision its dtype does
    not show: a bfloat16 tensor widened (exactly) to float32, which numpy
    cannot hold, or a float16/float32 one converted on request.  The
    bindings read ``attnrank_precision`` (``"bfloat16"``, ...) for their
    default tolerances, as they read a float16 array's dtype.

    Views of the same values (slices, reshapes, transposes, copies, astype)
    keep the precision; the result of arithmetic (ufuncs, reductions) is a
    plain ndarray, since its values are no longer the stored ones.
    """

    attnrank_precision: str

    def __new__(cls, values, precision: str):
        obj = np.asarray(values).view(cls)
        obj.attnrank_precision = precision
        return obj

    def __array_finalize__(self, obj):
        self.attnrank_precision = getattr(obj, "attnrank_precision", "float64")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        def plain(x):
            return x.view(np.ndarray) if isinstance(x, StoredArray) else x
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs)

    def __reduce__(self):
        fn, args, state = super().__reduce__()
        return fn, args, (state, self.attnrank_precision)

    def __setstate__(self, state):
        base, self.attnrank_precision = state
        super().__setstate__(base)


def fail(cls, status_name: str, function: str, detail: str):
    """Raise cls with the C library's text for status_name, as a C failure
    would be reported (imported lazily: attnrank._core imports this module)."""
    from attnrank import _core

    status = _core.STATUS_CODES[status_name]
    raise cls(status, _core.strerror(status), function, detail)


def _is_torch_tensor(a) -> bool:
    # Without importing torch: users who never pass a tensor never pay for it.
    return type(a).__module__.split(".")[0] == "torch" and hasattr(a, "detach")


def _from_torch(t, function: str):
    """A numpy array sharing the tensor's memory when it can, and its
    precision name (bfloat16 is widened to float32 exactly)."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_complex():
        fail(UnsupportedError, "AR_EUNSUPPORTED", function,
             f"complex tensors are not supported (dtype {t.dtype})")
    precision = None
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
        precision = "bfloat16"
    try:
        a = t.numpy()
    except (TypeError, RuntimeError) as exc:
        fail(UnsupportedError, "AR_EUNSUPPORTED", function,
             f"a tensor of dtype {t.dtype} has no numpy view: {exc}")
    return a, precision


def as_real_array(a, function: str, name: str = "input"):
    """(array, precision) for a real array-like: float64 arrays as they are,
    other real dtypes as a float64 copy; precision is the storage precision's
    name (float64 for integers)."""
    precision = None
    arr = a
    if type(arr) is not np.ndarray:  # a plain ndarray needs neither step (the common case)
        if isinstance(arr, StoredArray):
            precision = arr.attnrank_precision
        elif _is_torch_tensor(arr):
            arr, precision = _from_torch(arr, function)
        try:
            arr = np.asarray(arr)
        except MemoryError:
            fail(OutOfMemoryError, "AR_ENOMEM", function, f"converting {name} to an array")
        except Exception as exc:
            fail(UnsupportedError, "AR_EUNSUPPORTED", function,
                 f"{name} is not convertible to a numpy array: {exc}")
    if arr.dtype.kind not in "fiu":
        fail(UnsupportedError, "AR_EUNSUPPORTED", function,
             f"{name} must be real (float16, float32, float64 or integer), got dtype {arr.dtype}")
    if precision is None:
        precision = _PRECISION_OF_DTYPE.get(arr.dtype, "float64")
    if arr.dtype != np.float64:
        try:
            arr = arr.astype(np.float64)
        except MemoryError:
            fail(OutOfMemoryError, "AR_ENOMEM", function,
                 f"a float64 copy of {name} (shape {arr.shape})")
    return arr, precision


def require_matrix(arr, function: str, name: str = "input") -> None:
    """ArgumentError for an array of fewer than 2 dimensions: a scalar or a
    vector is not a matrix (the CLI refuses such .npy files too)."""
    if arr.ndim == 0:
        fail(ArgumentError, "AR_EINVAL", function,
             f"{name} has shape () (a 0-d scalar); a matrix needs 2 dimensions")
    if arr.ndim == 1:
        fail(ArgumentError, "AR_EINVAL", function,
             f"{name} has shape {tuple(arr.shape)} (1 dimension); a matrix needs 2 dimensions "
             f"(for a single row use reshape(1, -1))")


def as_matrix_stack(a, function: str, name: str = "input"):
    """(array, precision) of a matrix or a stack of them (at least two axes;
    0-d and 1-d inputs are refused: ArgumentError)."""
    arr, precision = as_real_array(a, function, name)
    require_matrix(arr, function, name)
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        fail(ArgumentError, "AR_EINVAL", function,
             f"{name} has an empty matrix shape {arr.shape[-2:]}")
    return arr, precision
