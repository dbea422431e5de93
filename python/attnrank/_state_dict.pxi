# Included by _core.pyx (before _weights.pxi, which uses it): a state dict
# (name -> torch tensor or numpy array) as the tensor table of
# ar_safetensors_from_tensors, the arrays' memory lent to the library
# without a copy where it already holds C-contiguous little-endian bytes.

from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc, free

from attnrank._capi cimport (
    ar_error_printable, ar_safetensors, AR_ST_MAX_DIMS, ar_st_dtype, ar_st_dtype_parse, ar_st_tensor_desc,
    ar_safetensors_from_tensors,
)

import collections.abc
import sys

# numpy (kind, itemsize) -> the safetensors dtype of the same bytes.  bfloat16
# has no numpy dtype: a torch bfloat16 tensor comes as its int16 bit pattern.
_ST_DTYPE_OF_NUMPY = {
    ("f", 8): "F64", ("f", 4): "F32", ("f", 2): "F16", ("b", 1): "BOOL",
    ("i", 1): "I8", ("u", 1): "U8", ("i", 2): "I16", ("u", 2): "U16",
    ("i", 4): "I32", ("u", 4): "U32", ("i", 8): "I64", ("u", 8): "U64",
}


cdef object _state_error(str fn, str message):
    return ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn, message)


cdef tuple _torch_as_numpy(str key, object t, object torch, str fn):
    """(numpy array over the tensor's memory, is bfloat16): a CPU tensor
    is shared, a tensor elsewhere is copied to the CPU once."""
    if t.layout != torch.strided:
        raise _state_error(fn, f"state_dict[{key!r}]: a {t.layout} torch tensor; give a dense "
                               "(strided) one")
    try:
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            # same element size: a view of the bits, whatever the strides
            return t.view(torch.int16).numpy(), True
        return t.numpy(), False
    except (TypeError, RuntimeError, NotImplementedError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise _state_error(fn, f"state_dict[{key!r}]: torch tensor of dtype {t.dtype} cannot be "
                               f"read as a CPU array ({first})") from None


cdef tuple _state_array(str key, object value, str fn):
    """(array, safetensors dtype name) of one entry: C-contiguous and
    little-endian, the value's own memory where it is so already."""
    cdef bint bf16 = 0
    torch = sys.modules.get("torch")  # never imported here: a tensor implies it is loaded
    if torch is not None and isinstance(value, torch.Tensor):
        value, bf16 = _torch_as_numpy(key, value, torch, fn)
    elif not isinstance(value, np.ndarray):
        raise _state_error(fn, f"state_dict[{key!r}]: a torch tensor or numpy array expected, "
                               f"got {type(value).__name__}")
    arr = np.asarray(value)  # a subclass's base array (no copy)
    dt = arr.dtype
    name = "BF16" if bf16 else (_ST_DTYPE_OF_NUMPY.get((dt.kind, dt.itemsize))
                                if dt.fields is None else None)
    if name is None:
        raise _state_error(fn, f"state_dict[{key!r}]: dtype {dt} has no safetensors counterpart "
                               "(floats F64, F32, F16, BF16; integers; bool)")
    # the format's byte order: a big-endian array (or host) is converted
    # once; a little-endian C-contiguous one is returned as is
    arr = np.require(arr, dtype=dt.newbyteorder("<"), requirements="C")
    return arr, name


def _state_dict_views(state_dict):
    """The arrays the library reads for a state dict, one (name, array,
    safetensors dtype) per entry, in the mapping's order: each C-contiguous
    and little-endian, sharing the value's memory where it already is so (a
    CPU tensor or array), else one copy.  The analysis reads them without a
    copy; the tests see that as shared memory."""
    cdef str fn = "ar_safetensors_from_tensors"
    if not isinstance(state_dict, collections.abc.Mapping):
        raise _state_error(fn, f"state_dict= must be a mapping name -> torch tensor or numpy "
                               f"array, got {type(state_dict).__name__}")
    views = []
    for key, value in state_dict.items():
        if not isinstance(key, str):
            raise _state_error(fn, f"state_dict= key {key!r} ({type(key).__name__}) is not a "
                                   "string")
        if "\0" in key:
            raise _state_error(fn, f"state_dict= key {key!r} holds a NUL byte")
        arr, name = _state_array(key, value, fn)
        views.append((key, arr, name))
    return views


cdef int _open_state_dict(list views, ar_safetensors **st) except -1:
    """Open the table of views (which the caller keeps alive until the
    handle is closed)."""
    cdef size_t count = len(views), i, k
    cdef ar_st_tensor_desc *desc = <ar_st_tensor_desc *>calloc(max(count, 1),
                                                               sizeof(ar_st_tensor_desc))
    if desc == NULL:
        raise OutOfMemoryError(AR_ENOMEM, strerror(AR_ENOMEM), "ar_safetensors_from_tensors",
                               "the state dict's tensor table")
    cdef ar_error err
    err.msg[0] = 0
    cdef int rc
    cdef const char *source = "<state_dict>"  # the pseudo-file messages name
    cdef bytes dtype_name
    names = [key.encode("utf-8") for key, _, _ in views]
    try:
        for i in range(count):
            _, arr, dtype = views[i]
            desc[i].name = <const char *>names[i]
            dtype_name = dtype.encode("ascii")
            rc = ar_st_dtype_parse(dtype_name, &desc[i].dtype, NULL)
            if rc != AR_OK:  # a name of the table above the library does not know
                raise_status(rc, "ar_st_dtype_parse", dtype)
            desc[i].ndim = arr.ndim  # the library refuses more than AR_ST_MAX_DIMS
            for k in range(min(<size_t>arr.ndim, <size_t>AR_ST_MAX_DIMS)):
                desc[i].shape[k] = arr.shape[k]
            desc[i].data = <const void *><uintptr_t>arr.__array_interface__["data"][0]
        with nogil:
            rc = ar_error_printable(&err, ar_safetensors_from_tensors(
                st, desc, count, source, &err))
        check_status(rc, "ar_safetensors_from_tensors", &err)
    finally:
        free(desc)
    return 0
