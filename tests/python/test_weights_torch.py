"""attnrank.weights(state_dict=...) from torch tensors: the directory's
result on GPT-2, LLaMA (grouped-query) and BERT names in float32, float16 and
bfloat16, contiguous or not, the CPU memory read in place, and the tensors
that cannot be read.  (numpy state dicts: test_weights.py.)"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attnrank  # noqa: E402
from test_weights import (  # noqa: E402
    MEMORY_MODELS, planted_rank, read_safetensors,
)

_TORCH_OF = {"F32": torch.float32, "F16": torch.float16, "F64": torch.float64,
             "I64": torch.int64}


def as_tensor(a, dtype):
    """The stored values as a torch tensor of the stored dtype (bfloat16
    from its bit patterns)."""
    if dtype == "BF16":
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    t = torch.from_numpy(a.copy())
    assert t.dtype == _TORCH_OF[dtype]
    return t


def not_contiguous(t):
    """The same values through non-contiguous strides: a transposed
    contiguous copy seen through .T (a matrix), else a slice."""
    if t.dim() == 2 and min(t.shape) > 1:
        out = t.T.contiguous().T
    else:
        wide = torch.zeros(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype)
        wide[..., ::2] = t
        out = wide[..., ::2]
    assert not out.is_contiguous() and torch.equal(out, t)
    return out


def torch_state_dict(model, layout="contiguous"):
    sd = {name: as_tensor(a, dtype) for name, (a, dtype) in read_safetensors(model).items()}
    return {k: not_contiguous(v) if layout == "strided" else v for k, v in sd.items()}


@pytest.mark.parametrize("family", sorted(MEMORY_MODELS))
@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_torch_state_dict_equals_the_directory(tmp_path, family, dtype, layout):
    model = MEMORY_MODELS[family](tmp_path / family, dtype)
    cfg = json.loads((model / "config.json").read_text())
    sd = torch_state_dict(model, layout)
    w = attnrank.weights(state_dict=sd, config=cfg)
    assert w.to_dict() == attnrank.weights(model).to_dict()
    assert w.family == family and len(w) == 8 and w.tolerance.precision == {
        "F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
    assert [h.rank for h in w] == [planted_rank(h.layer, h.head, w.head_size) for h in w]


def test_parameters_with_grad_and_a_module_state_dict(tmp_path):
    """A module's own state_dict (requires_grad parameters, tied weights
    sharing memory) reads like the file of the same tensors."""
    model = MEMORY_MODELS["llama"](tmp_path / "l", "F32")
    sd = torch_state_dict(model)
    params = {k: torch.nn.Parameter(v) for k, v in sd.items()}
    assert all(p.requires_grad for p in params.values())
    name = "model.layers.0.self_attn.v_proj.weight"
    params["lm_head.weight"] = params[name]  # tied: the same storage twice
    got = attnrank.weights(state_dict=params, config=model / "config.json")
    want = attnrank.weights(model).to_dict()
    assert got.tensors == want["tensors"] + 1
    assert {k: v for k, v in got.to_dict().items() if k != "tensors"} == \
        {k: v for k, v in want.items() if k != "tensors"}


def test_cpu_tensors_are_read_in_place():
    views = attnrank._core._state_dict_views
    f32 = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    bf16 = torch.randn(4, 6).to(torch.bfloat16)
    ids = torch.arange(5)
    got = views({"f32": f32, "bf16": bf16, "ids": ids})
    assert [d for _, _, d in got] == ["F32", "BF16", "I64"]
    for (_, arr, _), t in zip(got, (f32, bf16, ids)):
        assert arr.__array_interface__["data"][0] == t.data_ptr()  # no copy
    # bfloat16 goes as its bit patterns
    np.testing.assert_array_equal(got[1][1], bf16.view(torch.int16).numpy())
    # a non-contiguous tensor is copied once, C-contiguous
    (_, arr, dtype), = views({"t": f32.T})
    assert dtype == "F32" and arr.flags.c_contiguous
    assert arr.__array_interface__["data"][0] != f32.data_ptr()
    np.testing.assert_array_equal(arr, f32.T.numpy())


@pytest.mark.parametrize("what, value, fragment", [
    ("complex", torch.ones(2, 2, dtype=torch.complex64), "complex64"),
    ("sparse", torch.eye(3).to_sparse(), "sparse"),
    ("meta", torch.empty(2, 2, device="meta"), "state_dict['w']"),
    ("quantized", torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8),
     "state_dict['w']"),
])
def test_tensors_that_cannot_be_read(what, value, fragment):
    with pytest.raises(attnrank.ArgumentError) as info:
        attnrank.weights(state_dict={"w": value})
    message = str(info.value)
    assert fragment in message and "state_dict['w']" in message and "\n" not in message, what
