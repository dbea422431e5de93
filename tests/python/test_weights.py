"""attnrank.weights: the CLI's JSON on small GPT-2 (fused Conv1D) and LLaMA
(grouped-query) checkpoints written here in F32, F16 and BF16, planted
circuit ranks read at their tolerance, the per-head table (rows, grid,
pandas), edge sizes, hostile models and keywords, the GIL, help parity;
state dicts of numpy arrays (GPT-2, LLaMA and BERT names) against the same
model on disk, read in place, and their errors (torch tensors:
test_weights_torch.py)."""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released, python_spelling

# ---- a tiny safetensors writer ------------------------------------------------------
#
# The format: 8-byte little-endian header length, the JSON header (name ->
# dtype, shape, data_offsets into the data region), the raw little-endian
# row-major data.


def _bf16(a):
    """float64 -> bfloat16 bit patterns, rounded to nearest even through
    float32 (exact for the values bfloat16 holds)."""
    bits = np.asarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    keep = (bits >> 16) & 1
    return ((bits + 0x7FFF + keep) >> 16).astype("<u2")


_LE = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8"}


def _raw(a, dtype):
    return _bf16(a).tobytes() if dtype == "BF16" else np.ascontiguousarray(
        a, dtype=_LE[dtype]).tobytes()


def write_safetensors(path, tensors, header_extra=None):
    """tensors: {name: (array, dtype)} written in that order."""
    header, blobs, offset = {}, [], 0
    for name, (a, dtype) in tensors.items():
        raw = _raw(a, dtype)
        header[name] = {"dtype": dtype, "shape": list(np.shape(a)),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header.update(header_extra or {})
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def stored(a, dtype):
    """The values a takes once stored in dtype (what the library reads)."""
    if dtype == "BF16":
        return (_bf16(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(a, dtype=_LE[dtype]).astype(np.float64)


# ---- models with planted circuit ranks -------------------------------------------------

def planted_rank(layer, head, head_size):
    return 1 + (2 * layer + head) % head_size


def _query_head(rng, d, head_size, rank):
    """W_q^h = A B with A head_size x rank orthonormal and B rank x d:
    with a full-rank key head the circuit W_q^h^T W_k^h has rank `rank`."""
    a = np.linalg.qr(rng.standard_normal((head_size, rank)))[0]
    return a @ rng.standard_normal((rank, d)) / np.sqrt(d)


def gpt2_model(path, *, d=16, heads=2, layers=2, dtype="F32", config=True, positions=64,
               seed=0, ranks=planted_rank):
    """h.L.attn.c_attn.weight: Conv1D [d, 3 d], columns q | k | v."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    hs = d // heads
    tensors = {"wte.weight": (rng.standard_normal((10, d)), dtype)}
    for layer in range(layers):
        wq = np.vstack([_query_head(rng, d, hs, ranks(layer, h, hs)) for h in range(heads)])
        wk = rng.standard_normal((d, d)) / np.sqrt(d)
        wv = rng.standard_normal((d, d))
        tensors[f"h.{layer}.attn.c_attn.weight"] = (np.hstack([wq.T, wk.T, wv.T]), dtype)
        tensors[f"h.{layer}.attn.c_attn.bias"] = (rng.standard_normal(3 * d), dtype)
    write_safetensors(path / "model.safetensors", tensors)
    if config:
        (path / "config.json").write_text(json.dumps(
            {"model_type": "gpt2", "n_embd": d, "n_head": heads, "n_layer": layers,
             "n_positions": positions}))
    return path


def llama_model(path, *, d=32, heads=4, kv_heads=2, layers=2, dtype="BF16", config=True,
                positions=128, seed=1, shards=1, ranks=planted_rank):
    """model.layers.L.self_attn.{q,k}_proj.weight, Linear [out, in], k with
    kv_heads * head_size rows (grouped-query); rope_theta in config.json."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    hs = d // heads
    per_shard = [dict() for _ in range(shards)]
    for layer in range(layers):
        wq = np.vstack([_query_head(rng, d, hs, ranks(layer, h, hs)) for h in range(heads)])
        wk = rng.standard_normal((kv_heads * hs, d)) / np.sqrt(d)
        part = per_shard[layer % shards]
        part[f"model.layers.{layer}.self_attn.q_proj.weight"] = (wq, dtype)
        part[f"model.layers.{layer}.self_attn.k_proj.weight"] = (wk, dtype)
        part[f"model.layers.{layer}.self_attn.v_proj.weight"] = (wk, dtype)
    weight_map = {}
    for s, part in enumerate(per_shard):
        name = "model.safetensors" if shards == 1 else f"model-{s + 1:05d}.safetensors"
        write_safetensors(path / name, part)
        weight_map.update(dict.fromkeys(part, name))
    if shards > 1:  # the index Hugging Face writes beside shards
        (path / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {}, "weight_map": weight_map}))
    if config:
        (path / "config.json").write_text(json.dumps(
            {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": d,
             "num_attention_heads": heads, "num_key_value_heads": kv_heads,
             "num_hidden_layers": layers, "max_position_embeddings": positions,
             "rope_theta": 10000.0}))
    return path


def bert_model(path, *, d=16, heads=4, layers=2, dtype="F32", config=True, positions=32,
               seed=2, ranks=planted_rank):
    """bert.encoder.layer.L.attention.self.{query,key}.weight, Linear [out,
    in], with biases and the int64 position ids BERT checkpoints carry."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    hs = d // heads
    tensors = {"bert.embeddings.position_ids": (np.arange(positions)[None, :], "I64")}
    for layer in range(layers):
        wq = np.vstack([_query_head(rng, d, hs, ranks(layer, h, hs)) for h in range(heads)])
        prefix = f"bert.encoder.layer.{layer}.attention.self."
        tensors[prefix + "query.weight"] = (wq, dtype)
        tensors[prefix + "query.bias"] = (rng.standard_normal(d), dtype)
        tensors[prefix + "key.weight"] = (rng.standard_normal((d, d)) / np.sqrt(d), dtype)
    write_safetensors(path / "model.safetensors", tensors)
    if config:
        (path / "config.json").write_text(json.dumps(
            {"model_type": "bert", "hidden_size": d, "num_attention_heads": heads,
             "num_hidden_layers": layers, "max_position_embeddings": positions}))
    return path


_NUMPY_OF = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}


def read_safetensors(model):
    """{name: (array, dtype)} of every *.safetensors file of a model
    directory, the arrays as stored (bfloat16 as its uint16 bit patterns)."""
    out = {}
    for f in sorted(model.glob("*.safetensors")):
        raw = f.read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        for name, meta in json.loads(raw[8:8 + n]).items():
            lo, hi = meta["data_offsets"]
            a = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtype=_NUMPY_OF[meta["dtype"]])
            out[name] = (a.reshape(meta["shape"]).copy(), meta["dtype"])
    return out


def strided(a):
    """The same values in memory that is not C-contiguous: a transposed
    copy seen through .T (a matrix), else every other column of a wider
    array (a slice)."""
    if a.ndim == 2 and min(a.shape) > 1:
        out = np.ascontiguousarray(a.T).T
    else:
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        wide[..., ::2] = a
        out = wide[..., ::2]
    assert not out.flags.c_contiguous and np.array_equal(out, a)
    return out


def _cli(cli, model, *args, ok=(0,)):
    out = subprocess.run([cli, "weights", str(model), *[str(a) for a in args], "--json"],
                         capture_output=True, text=True)
    assert out.returncode in ok, out.stderr
    got = python_spelling(json.loads(out.stdout))
    assert got.pop("source") == str(model)
    return got


def _flags(kw):
    flags = []
    for k, v in kw.items():
        if k == "config":
            flags += [] if v else ["--no-config"]
        else:
            flags += ["--" + k.replace("_", "-"), v]
    return flags


# ---- the CLI's JSON ---------------------------------------------------------------

def _models(root):
    return {
        "gpt2-f32": (gpt2_model(root / "gpt2-f32", dtype="F32"), {}),
        "gpt2-f16-n": (gpt2_model(root / "gpt2-f16", dtype="F16", seed=3), {"n": 8}),
        "gpt2-bf16-rule": (gpt2_model(root / "gpt2-bf16", dtype="BF16", seed=4),
                           {"rtol": 1e-3, "seed": 7, "energy": 0.9}),
        "gpt2-atol-range": (gpt2_model(root / "gpt2-r", layers=4, seed=5),
                            {"atol": 1e-3, "layer_range": "1-2"}),
        "gpt2-no-config": (gpt2_model(root / "gpt2-nc", config=False, seed=6),
                           {"heads": 2, "n": 12}),
        "gpt2-mask": (gpt2_model(root / "gpt2-m", seed=8),
                      {"mask": "window:4", "n": 16, "context": 32, "precision": "float16"}),
        "llama-bf16": (llama_model(root / "llama-bf16"), {}),
        "llama-f16-sharded": (llama_model(root / "llama-sh", dtype="F16", shards=2, layers=3),
                              {"n": 4, "seed": 1 << 63}),
        "llama-f32-mask-none": (llama_model(root / "llama-f32", dtype="F32", seed=2),
                                {"mask": "none"}),
        "llama-patterns": (llama_model(root / "llama-p", dtype="F32", config=False, seed=9),
                           {"q_pattern": "layers.{layer}.self_attn.q_proj.weight",
                            "k_pattern": "layers.{layer}.self_attn.k_proj.weight",
                            "heads": 4, "kv_heads": 2, "head_size": 8}),
    }


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return _models(tmp_path_factory.mktemp("models"))


@pytest.mark.parametrize("name", [
    "gpt2-f32", "gpt2-f16-n", "gpt2-bf16-rule", "gpt2-atol-range", "gpt2-no-config",
    "gpt2-mask", "llama-bf16", "llama-f16-sharded", "llama-f32-mask-none", "llama-patterns"])
def test_equals_the_cli(cli, models, name):
    model, kw = models[name]
    got = attnrank.weights(model, **kw)
    assert isinstance(got, attnrank.Weights)
    assert got.to_dict() == _cli(cli, model, *_flags(kw)), name


def test_file_and_path_forms_equal_the_directory(cli, models):
    model, _ = models["gpt2-f16-n"]
    by_dir = attnrank.weights(model).to_dict()
    assert attnrank.weights(str(model)).to_dict() == by_dir
    assert attnrank.weights(os.fsencode(model)).to_dict() == by_dir
    # the file itself: config.json is still found beside it
    assert attnrank.weights(model / "model.safetensors").to_dict() == \
        _cli(cli, model / "model.safetensors")
    assert attnrank.weights(model, config=False, heads=2).to_dict() == \
        _cli(cli, model, "--no-config", "--heads", "2")
    sharded, kw = models["llama-f16-sharded"]
    index = sharded / "model.safetensors.index.json"
    by_index = attnrank.weights(index, **kw)
    assert by_index.files == 2 and by_index.to_dict() == _cli(cli, index, *_flags(kw))
    assert by_index.to_dict() == attnrank.weights(sharded, **kw).to_dict()


def test_seed_above_int64_is_a_string_in_json_and_an_int_in_the_record(models):
    model, _ = models["gpt2-f32"]
    w = attnrank.weights(model, seed=(1 << 64) - 1)
    assert w.tolerance.seed == (1 << 64) - 1
    assert w.to_dict()["tolerance"]["seed"] == str((1 << 64) - 1)
    seeds = [h.noise.seed for h in w]
    assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == len(seeds)


# ---- weights already in memory (numpy; torch: test_weights_torch.py) ------------------

MEMORY_MODELS = {
    "gpt2": lambda p, dtype: gpt2_model(p, heads=4, dtype=dtype, seed=21),
    "llama": lambda p, dtype: llama_model(p, dtype=dtype, seed=22),  # GQA: 4 heads, 2 kv
    "bert": lambda p, dtype: bert_model(p, dtype=dtype, seed=23),
}


def numpy_state_dict(model, layout="contiguous"):
    """The model's tensors as numpy arrays of their stored dtype."""
    sd = {}
    for name, (a, dtype) in read_safetensors(model).items():
        assert dtype != "BF16", "numpy has no bfloat16: the torch tests cover it"
        sd[name] = strided(a) if layout == "strided" else a
    return sd


def _without_source(d):
    return {k: v for k, v in d.items() if k != "files"}


@pytest.mark.parametrize("family", sorted(MEMORY_MODELS))
@pytest.mark.parametrize("dtype", ["F32", "F16", "F64"])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_state_dict_equals_the_directory(tmp_path, family, dtype, layout):
    model = MEMORY_MODELS[family](tmp_path / family, dtype)
    cfg = json.loads((model / "config.json").read_text())
    by_dir = attnrank.weights(model)
    w = attnrank.weights(state_dict=numpy_state_dict(model, layout), config=cfg)
    assert w.to_dict() == by_dir.to_dict()
    # a real analysis: the family's names, every head, the planted ranks
    assert w.family == family and w.files == 1 and len(w) == w.summary.heads_total == 8
    assert w.kv_heads == (2 if family == "llama" else w.heads)
    assert [h.rank for h in w] == [planted_rank(h.layer, h.head, w.head_size) for h in w]


def test_state_dict_keywords_and_config_forms(tmp_path, models):
    model, kw = models["gpt2-f16-n"]
    sd = numpy_state_dict(model)
    by_dir = attnrank.weights(model, **kw).to_dict()
    cfg_path = model / "config.json"
    for config in (json.loads(cfg_path.read_text()), cfg_path, str(cfg_path),
                   os.fsencode(cfg_path)):
        assert attnrank.weights(state_dict=sd, config=config, **kw).to_dict() == by_dir
    # no config: the layout from the shapes and the keywords, as --no-config
    no_cfg = attnrank.weights(model, config=False, heads=2, **kw).to_dict()
    for config in (None, False, True):
        got = attnrank.weights(state_dict=sd, config=config, heads=2, **kw)
        assert got.config is None and got.to_dict() == no_cfg
    # the other keywords act on a state dict as on a directory
    model, kw = models["gpt2-bf16-rule"]  # rtol, seed, energy (file in BF16)
    f32 = gpt2_model(tmp_path / "g", dtype="F32", seed=4)
    assert attnrank.weights(state_dict=numpy_state_dict(f32), config=json.loads(
        (f32 / "config.json").read_text()), **kw).to_dict() == attnrank.weights(f32, **kw).to_dict()
    model, kw = models["llama-patterns"]
    assert attnrank.weights(state_dict=numpy_state_dict(model), config=None, **kw).to_dict() == \
        attnrank.weights(model, **kw).to_dict()


def test_sharded_state_dict_differs_only_in_files(models):
    model, kw = models["llama-f16-sharded"]
    by_dir = attnrank.weights(model, **kw)
    w = attnrank.weights(state_dict=numpy_state_dict(model),
                         config=model / "config.json", **kw)
    assert by_dir.files == 2 and w.files == 1
    assert _without_source(w.to_dict()) == _without_source(by_dir.to_dict())


def _address(a):
    return a.__array_interface__["data"][0]


def test_state_dict_is_read_in_place(tmp_path):
    """C-contiguous little-endian arrays are lent to the library as they are
    (read-only ones too); other layouts and byte orders are copied once."""
    views = attnrank._core._state_dict_views
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    ro = a.copy()
    ro.flags.writeable = False
    half = np.ones((2, 2), dtype="<f2")
    got = views({"a": a, "ro": ro, "half": half, "ids": np.arange(3), "b": np.array(True)})
    assert [(k, d) for k, _, d in got] == [("a", "F32"), ("ro", "F32"), ("half", "F16"),
                                           ("ids", "I64"), ("b", "BOOL")]
    for (_, arr, _), value in zip(got, (a, ro, half)):
        assert _address(arr) == _address(value) and arr.shape == value.shape
    # a subclass is read through its base memory
    sub = views({"m": a.view(type("Sub", (np.ndarray,), {}))})[0][1]
    assert type(sub) is np.ndarray and _address(sub) == _address(a)
    # copies: not C-contiguous, big-endian
    for value in (strided(a), a[:, ::2], a.T, a.astype(">f4")):
        (_, arr, dtype), = views({"w": value})
        assert dtype == "F32" and not np.shares_memory(arr, value)
        assert arr.flags.c_contiguous and arr.dtype == np.dtype("<f4")
        np.testing.assert_array_equal(arr, value)
    # the analysis is the same from read-only and big-endian memory
    model = gpt2_model(tmp_path / "g", dtype="F32", seed=31)
    cfg = model / "config.json"
    sd = numpy_state_dict(model)
    for a in sd.values():
        a.flags.writeable = False
    want = attnrank.weights(model).to_dict()
    assert attnrank.weights(state_dict=sd, config=cfg).to_dict() == want
    big = {k: v.astype(v.dtype.newbyteorder(">")) for k, v in sd.items()}
    assert attnrank.weights(state_dict=big, config=cfg).to_dict() == want


def test_state_dict_needs_no_torch(tmp_path):
    model = gpt2_model(tmp_path / "g", d=8, heads=2, layers=1)
    code = (
        "import sys, json, pathlib\n"
        "sys.modules['torch'] = None  # any import of torch fails\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "import attnrank\n"
        "from test_weights import numpy_state_dict\n"
        "m = pathlib.Path(sys.argv[1])\n"
        "w = attnrank.weights(state_dict=numpy_state_dict(m), config=m / 'config.json')\n"
        "assert w.to_dict() == attnrank.weights(m).to_dict()\n"
        "print(len(w))\n")
    out = subprocess.run([sys.executable, "-P", "-c", code, str(model),
                          os.path.dirname(__file__)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "2", out.stderr


def _state_dict_cases():
    w = np.eye(4, 12, dtype=np.float32)
    nan = w.copy()
    nan[1, 2] = np.nan
    q = "model.layers.0.self_attn.q_proj.weight"
    k = "model.layers.0.self_attn.k_proj.weight"
    return [
        # (what, keywords, exception, fragments of the message)
        ("neither model_dir nor state_dict", {}, attnrank.ArgumentError,
         ["model_dir", "state_dict="]),
        ("both", {"model_dir": ".", "state_dict": {"w": w}}, attnrank.ArgumentError,
         ["model_dir", "state_dict=", "not both"]),
        ("not a mapping", {"state_dict": [("w", w)]}, attnrank.ArgumentError,
         ["state_dict=", "mapping", "list"]),
        ("key not a string", {"state_dict": {3: w}}, attnrank.ArgumentError,
         ["state_dict=", "key 3", "not a string"]),
        ("key with NUL", {"state_dict": {"a\0b": w}}, attnrank.ArgumentError,
         ["state_dict=", "NUL"]),
        ("value a list", {"state_dict": {"w": [1.0, 2.0]}}, attnrank.ArgumentError,
         ["state_dict['w']", "list"]),
        ("value a float", {"state_dict": {"w": 1.0}}, attnrank.ArgumentError,
         ["state_dict['w']", "float"]),
        ("value None", {"state_dict": {"w": None}}, attnrank.ArgumentError,
         ["state_dict['w']", "NoneType"]),
        ("complex array", {"state_dict": {"c": np.ones((2, 2), complex)}},
         attnrank.ArgumentError, ["state_dict['c']", "complex128"]),
        ("object array", {"state_dict": {"o": np.array([object()])}}, attnrank.ArgumentError,
         ["state_dict['o']", "object"]),
        ("structured array", {"state_dict": {"s": np.zeros(2, dtype=[("a", "<f4")])}},
         attnrank.ArgumentError, ["state_dict['s']", "dtype"]),
        ("long double", {"state_dict": {"g": np.ones(2, dtype=np.longdouble)}},
         attnrank.ArgumentError, ["state_dict['g']"]),
        ("empty", {"state_dict": {}}, attnrank.ArgumentError, ["<state_dict>", "no tensors"]),
        ("9 dimensions", {"state_dict": {"w": w, "x": np.zeros((1,) * 9)}},
         attnrank.UnsupportedError, ["<state_dict>", "tensor 'x'", "9 dimensions"]),
        ("config an int", {"state_dict": {"w": w}, "config": 3}, attnrank.ArgumentError,
         ["config=", "int"]),
        ("config with NaN", {"state_dict": {"w": w}, "config": {"n_embd": float("nan")}},
         attnrank.ArgumentError, ["config=", "JSON"]),
        ("config not JSON", {"state_dict": {"w": w}, "config": {"n_embd": object()}},
         attnrank.ArgumentError, ["config=", "JSON"]),
        ("config key of the wrong type", {"state_dict": {"w": w}, "config": {"n_head": "two"}},
         attnrank.FormatError, ["config=", "n_head"]),
        ("config path missing", {"state_dict": {"w": w}, "config": "/nonexistent/config.json"},
         attnrank.FileError, ["/nonexistent/config.json"]),
        ("config path empty", {"state_dict": {"w": w}, "config": ""}, attnrank.ArgumentError,
         ["config="]),
        ("config dict with model_dir", {"model_dir": ".", "config": {}}, attnrank.ArgumentError,
         ["config=", "state_dict="]),
        ("config path with model_dir", {"model_dir": ".", "config": "config.json"},
         attnrank.ArgumentError, ["config=", "state_dict="]),
        ("NaN weight", {"state_dict": {"h.0.attn.c_attn.weight": nan}, "heads": 2},
         attnrank.NonFiniteError, ["<state_dict>", "h.0.attn.c_attn.weight"]),
        ("integer query", {"state_dict": {q: np.ones((4, 4), np.int64), k: np.eye(4)},
                           "heads": 1}, attnrank.UnsupportedError, ["<state_dict>", q, "I64"]),
        ("no attention tensors", {"state_dict": {"wte.weight": w}, "heads": 1},
         attnrank.FormatError, ["<state_dict>"]),
        ("heads unknown", {"state_dict": {"h.0.attn.c_attn.weight": w}},
         attnrank.ArgumentError, ["heads"]),
    ]


STATE_DICT_ERRORS = _state_dict_cases()


@pytest.mark.parametrize("what", [c[0] for c in STATE_DICT_ERRORS])
def test_state_dict_errors_name_the_problem(what):
    _, kw, exc, fragments = next(c for c in STATE_DICT_ERRORS if c[0] == what)
    with pytest.raises(exc) as info:
        attnrank.weights(**kw)
    message = str(info.value)
    assert isinstance(info.value, attnrank.Error) and "\n" not in message
    for fragment in fragments:
        assert fragment in message, (what, message)


# ---- planted ranks, grouped-query, the table -------------------------------------------

@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_planted_ranks_read_at_their_tolerance(tmp_path, dtype):
    for family, model in (("gpt2", gpt2_model(tmp_path / "g", d=32, heads=4, layers=3,
                                              dtype=dtype)),
                          ("llama", llama_model(tmp_path / "l", d=32, heads=4, kv_heads=2,
                                                layers=3, dtype=dtype))):
        w = attnrank.weights(model)
        assert w.family == family and w.tolerance.precision == {
            "F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
        assert w.tolerance.unit_roundoff == {"F32": 2.0 ** -24, "F16": 2.0 ** -11,
                                             "BF16": 2.0 ** -8}[dtype]
        for h in w:
            k = planted_rank(h.layer, h.head, w.head_size)
            s = h.singular_values
            assert h.rank == h.default_rank == k, (family, dtype, h.layer, h.head)
            assert s[k - 1] > h.tolerance.threshold == h.tau_default
            if k < len(s):
                assert s[k] <= h.tolerance.threshold
            assert h.certain_rank <= h.default_rank and h.tau_default <= h.tau_cert
            assert h.rule == "uniform-rounding-mc" and h.noise.draws == 4


def test_gpt2_spectrum_is_that_of_the_stored_factors(tmp_path):
    """The circuit W_q^h^T W_k^h computed here from the stored (rounded)
    c_attn blocks has the reported singular values."""
    d, heads = 16, 2
    hs = d // heads
    model = gpt2_model(tmp_path / "g", d=d, heads=heads, layers=1, dtype="F16", seed=12)
    hdr = (model / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", hdr[:8])[0]
    meta = json.loads(hdr[8:8 + n])["h.0.attn.c_attn.weight"]
    lo, hi = meta["data_offsets"]
    w = np.frombuffer(hdr[8 + n + lo:8 + n + hi], dtype="<f2").astype(np.float64).reshape(d, 3 * d)
    rec = attnrank.weights(model)
    for h in rec:
        wq = w[:, h.head * hs:(h.head + 1) * hs].T
        wk = w[:, d + h.head * hs:d + (h.head + 1) * hs].T
        s = np.linalg.svd(wq.T @ wk, compute_uv=False)[:hs]
        np.testing.assert_allclose(h.singular_values, s, rtol=1e-10, atol=1e-14 * s[0])


def test_grouped_query_heads_share_key_heads(tmp_path):
    model = llama_model(tmp_path / "l", d=48, heads=6, kv_heads=2, layers=2, dtype="F32")
    w = attnrank.weights(model)
    assert (w.heads, w.kv_heads, w.head_size, w.d) == (6, 2, 8, 48)
    assert [h.kv_head for h in w][:6] == [0, 0, 0, 1, 1, 1]
    assert w.rotary and w.rotary_note and "rotary_note" in w.to_dict()
    assert w.masks.layer_kinds[0].mask.kind == "causal"
    # the same tensors read as 12 heads of size 4 sharing 4 key heads
    small = attnrank.weights(model, heads=12, kv_heads=4, head_size=4, config=False)
    assert small.kv_heads == 4 and [h.kv_head for h in small][:12] == [
        k // 3 for k in range(12)]
    assert small.rotary and small.config is None  # LLaMA names: rotary without a config


def test_rows_grid_and_verdicts(tmp_path):
    model = gpt2_model(tmp_path / "g", d=16, heads=4, layers=3, positions=32)
    w = attnrank.weights(model, n=3, mask="none")
    rows = list(w)
    assert len(w) == len(rows) == 12 and all(isinstance(h, attnrank.QKHead) for h in rows)
    assert [(h.layer, h.head) for h in rows] == [(l, k) for l in range(3) for k in range(4)]
    g = w.grid("rank")
    assert g.shape == (3, 4) and g[2, 1] == rows[9].rank
    np.testing.assert_array_equal(w.grid("roy_vetterli_rank").ravel(),
                                  [h.roy_vetterli_rank for h in rows])
    with pytest.raises(ValueError):
        w.grid("rule")
    # unmasked, a head reaches min(rank, n - 1): head size 4 is no bottleneck
    # at n = 3, and every head is one at the context 32
    assert w.verdicts.n.needed_head_size == 2 and w.verdicts.context.needed_head_size == 31
    assert all(h.reach_n == min(h.rank, 2) and h.bottleneck_n == (h.rank < 2) for h in rows)
    assert all(h.bottleneck_context and h.reach_context == h.rank for h in rows)
    assert w.verdicts.n.heads_bottlenecked == sum(h.rank < 2 for h in rows)
    ctx = w.verdicts.context
    assert ctx.n == 32 and ctx.bottleneck and ctx.heads_bottlenecked == 12
    assert ctx.fixed_multihead.head_size == 32 and ctx.heads_total == 12
    assert not w.verdicts.n.bottleneck and w.summary.heads_total == 12
    assert w.summary.rank_max <= 4 and w.summary.rank_mean == pytest.approx(
        np.mean([h.rank for h in rows]))
    # GPT-2's own mask is causal: the needed head size is floor(n / 2)
    causal = attnrank.weights(model, n=9)
    assert causal.masks.layer_kinds[0].mask.kind == "causal"
    assert causal.verdicts.n.needed_head_size == 4
    assert all(h.reach_n == min(h.rank, 4) for h in causal)
    row = rows[0].as_row()
    assert row["layer"] == 0 and row["threshold"] == rows[0].tolerance.threshold
    assert row["noise_seed"] == rows[0].noise.seed and "layer" not in rows[0].to_dict()


def test_to_pandas_without_pandas(tmp_path, monkeypatch):
    model = gpt2_model(tmp_path / "g", d=8, heads=2, layers=2)
    w = attnrank.weights(model)
    # without pandas: a clear ImportError
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        w.to_pandas()
    # with a stand-in module: one row per head, the as_row() columns
    fake = type(sys)("pandas")
    fake.DataFrame = lambda rows: ("frame", rows)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    tag, rows = w.to_pandas()
    assert tag == "frame" and rows == [h.as_row() for h in w] and len(rows) == 4


def test_to_pandas_with_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    w = attnrank.weights(gpt2_model(tmp_path / "g", d=8, heads=2, layers=2))
    df = w.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df["layer"]) == [0, 0, 1, 1] and list(df["head"]) == [0, 1, 0, 1]
    assert list(df["rank"]) == [h.rank for h in w]


def test_edge_sizes(tmp_path):
    # d = 1, 2, 3 with one head of the full width, and a zero query head
    for d in (1, 2, 3):
        model = gpt2_model(tmp_path / f"d{d}", d=d, heads=1, layers=2, seed=d,
                           ranks=lambda layer, head, hs: hs)
        w = attnrank.weights(model, n=2)
        assert len(w) == 2 and all(h.singular_values.shape == (d,) for h in w)
        assert all(h.rank == d for h in w), d
    zero = tmp_path / "zero"
    zero.mkdir()
    write_safetensors(zero / "model.safetensors", {
        "h.0.attn.c_attn.weight": (np.hstack([np.zeros((4, 4)), np.eye(4), np.eye(4)]), "F32")})
    w = attnrank.weights(zero, heads=2)
    assert [h.rank for h in w] == [0, 0] and [h.noise.tail for h in w] == [None, None]
    assert w.to_dict()["layers"][0]["heads"][0]["noise"]["tail"] is None
    one = attnrank.weights(gpt2_model(tmp_path / "one", d=4, heads=2, layers=3),
                           layer_range=2)
    assert [l.layer for l in one.layers] == [2] and one.layers_found == 3
    assert attnrank.weights(tmp_path / "one", layer_range=(0, 1)).summary.heads_total == 4


# ---- hostile models and keywords ----------------------------------------------------

def _corrupt(root):
    """name -> model directory of a broken or hostile model."""
    out = {}

    def model(name, files):
        p = root / name
        p.mkdir()
        for fname, data in files.items():
            if data is None:
                (p / fname).mkdir()
            else:
                (p / fname).write_bytes(data)
        out[name] = p

    good = root / "good.safetensors"
    write_safetensors(good, {"h.0.attn.c_attn.weight": (np.eye(4, 12), "F32")})
    raw = good.read_bytes()
    gpt2_cfg = json.dumps({"model_type": "gpt2", "n_embd": 4, "n_head": 2}).encode()

    def header(h):
        text = json.dumps(h).encode()
        return struct.pack("<Q", len(text)) + text

    model("empty-dir", {})
    model("not-safetensors", {"model.bin": b"\0" * 64})
    model("short", {"model.safetensors": b"\x05\0\0"})
    model("header-past-eof", {"model.safetensors": struct.pack("<Q", 1 << 20) + b"{}"})
    model("truncated", {"model.safetensors": raw[:-8], "config.json": gpt2_cfg})
    model("invalid-json", {"model.safetensors": struct.pack("<Q", 5) + b"{nope"})
    model("not-an-object", {"model.safetensors": header([1, 2])})
    model("unknown-dtype", {"model.safetensors": header(
        {"h.0.attn.c_attn.weight": {"dtype": "F7", "shape": [1], "data_offsets": [0, 1]}})
        + b"\0"})
    model("offsets-outside", {"model.safetensors": header(
        {"h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 400]}})
        + b"\0" * 4})
    model("shape-mismatch", {"model.safetensors": header(
        {"h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 4]}})
        + b"\0" * 4})
    def st_model(name, tensors, config=None):
        p = root / name
        p.mkdir()
        write_safetensors(p / "model.safetensors", tensors)
        if config is not None:
            (p / "config.json").write_bytes(config)
        out[name] = p

    nan, inf = np.eye(4, 12), np.eye(4, 12)
    nan[1, 2], inf[0, 5] = np.nan, np.inf
    st_model("nan-f32", {"h.0.attn.c_attn.weight": (nan, "F32")}, gpt2_cfg)
    st_model("inf-bf16", {"h.0.attn.c_attn.weight": (inf, "BF16")}, gpt2_cfg)
    st_model("int-query", {"model.layers.0.self_attn.q_proj.weight": (np.ones((4, 4)), "I64"),
                           "model.layers.0.self_attn.k_proj.weight": (np.ones((4, 4)), "F32")})
    st_model("no-attention", {"wte.weight": (np.ones((3, 4)), "F32")})
    for name, cfg in (("config-invalid-json", b"{not json"), ("config-wrong-type",
                      json.dumps({"model_type": "gpt2", "n_head": "two"}).encode()),
                      ("config-not-object", b"[1, 2]")):
        model(name, {"model.safetensors": raw, "config.json": cfg})
    model("config-is-a-directory", {"model.safetensors": raw, "config.json": None})
    model("heads-do-not-divide", {"model.safetensors": raw, "config.json": json.dumps(
        {"model_type": "gpt2", "n_embd": 4, "n_head": 3}).encode()})
    model("heads-unknown", {"model.safetensors": raw})
    model("index-missing-shard", {"model.safetensors.index.json": json.dumps(
        {"weight_map": {"h.0.attn.c_attn.weight": "absent.safetensors"}}).encode()})
    model("index-not-json", {"model.safetensors.index.json": b"{weight_map"})
    return out


@pytest.fixture(scope="module")
def corrupt(tmp_path_factory):
    return _corrupt(tmp_path_factory.mktemp("corrupt"))


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return gpt2_model(tmp_path_factory.mktemp("good") / "g", d=8, heads=2, layers=2)


# (what, model name or None for the good model, keywords, exception)
HOSTILE = [
    ("missing directory", "/nonexistent/attnrank-model", {}, attnrank.FileError),
    ("empty directory", "empty-dir", {}, attnrank.FileError),
    ("no safetensors file", "not-safetensors", {}, attnrank.FileError),
    ("file shorter than its header length", "short", {}, attnrank.FormatError),
    ("header past the end", "header-past-eof", {}, attnrank.FormatError),
    ("truncated data", "truncated", {}, attnrank.FormatError),
    ("header not JSON", "invalid-json", {}, attnrank.FormatError),
    ("header not an object", "not-an-object", {}, attnrank.FormatError),
    ("unknown dtype", "unknown-dtype", {}, attnrank.UnsupportedError),
    ("offsets outside the data", "offsets-outside", {}, attnrank.FormatError),
    ("shape and size disagree", "shape-mismatch", {}, attnrank.FormatError),
    ("NaN weight (F32)", "nan-f32", {}, attnrank.NonFiniteError),
    ("Inf weight (BF16)", "inf-bf16", {}, attnrank.NonFiniteError),
    ("integer query tensor", "int-query", {"heads": 1}, attnrank.UnsupportedError),
    ("no attention tensors", "no-attention", {"heads": 1}, attnrank.FormatError),
    ("config.json not JSON", "config-invalid-json", {}, attnrank.FormatError),
    ("config.json key of the wrong type", "config-wrong-type", {}, attnrank.FormatError),
    ("config.json not an object", "config-not-object", {}, attnrank.FormatError),
    ("config.json a directory", "config-is-a-directory", {}, attnrank.FileError),
    ("heads not dividing the width", "heads-do-not-divide", {}, attnrank.FormatError),
    ("heads unknown", "heads-unknown", {}, attnrank.ArgumentError),
    ("index naming a missing shard", "index-missing-shard", {}, attnrank.FileError),
    ("index not JSON", "index-not-json", {}, attnrank.FormatError),
    ("model_dir None", None, {"model_dir": None}, attnrank.ArgumentError),
    ("model_dir an int", None, {"model_dir": 3}, attnrank.ArgumentError),
    ("model_dir empty", None, {"model_dir": ""}, attnrank.ArgumentError),
    ("model_dir with NUL", None, {"model_dir": "a\0b"}, attnrank.ArgumentError),
    ("model_dir an array", None, {"model_dir": np.ones(3)}, attnrank.ArgumentError),
    ("n 0", None, {"n": 0}, attnrank.ArgumentError),
    ("n negative", None, {"n": -1}, attnrank.ArgumentError),
    ("n huge", None, {"n": 1 << 70}, attnrank.ArgumentError),
    ("n float", None, {"n": 8.5}, attnrank.ArgumentError),
    ("n str", None, {"n": "8"}, attnrank.ArgumentError),
    ("heads 0", None, {"heads": 0}, attnrank.ArgumentError),
    ("heads too many", None, {"heads": 3}, attnrank.FormatError),
    ("head_size negative", None, {"head_size": -4}, attnrank.ArgumentError),
    ("kv_heads not dividing heads", None, {"kv_heads": 3}, attnrank.FormatError),
    ("context 0", None, {"context": 0}, attnrank.ArgumentError),
    ("rtol negative", None, {"rtol": -1e-3}, attnrank.ArgumentError),
    ("rtol NaN", None, {"rtol": np.nan}, attnrank.ArgumentError),
    ("atol Inf", None, {"atol": np.inf}, attnrank.ArgumentError),
    ("atol complex", None, {"atol": 1j}, attnrank.ArgumentError),
    ("energy 0", None, {"energy": 0.0}, attnrank.ArgumentError),
    ("energy above 1", None, {"energy": 1.5}, attnrank.ArgumentError),
    ("energy NaN", None, {"energy": np.nan}, attnrank.ArgumentError),
    ("seed negative", None, {"seed": -1}, attnrank.ArgumentError),
    ("seed 2^64", None, {"seed": 1 << 64}, attnrank.ArgumentError),
    ("precision unknown", None, {"precision": "float8"}, attnrank.ArgumentError),
    ("precision an object", None, {"precision": object()}, attnrank.ArgumentError),
    ("mask auto", None, {"mask": "auto"}, attnrank.ArgumentError),
    ("mask file:", None, {"mask": "file:m.npy"}, attnrank.ArgumentError),
    ("mask documents", None, {"mask": "docs:3/4"}, attnrank.ArgumentError),
    ("mask misspelt", None, {"mask": "windo:3"}, attnrank.ArgumentError),
    ("mask window 0", None, {"mask": "window:0"}, attnrank.ArgumentError),
    ("mask an int", None, {"mask": 3}, attnrank.ArgumentError),
    ("mask an array", None, {"mask": np.ones((4, 4), dtype=bool)}, attnrank.ArgumentError),
    ("layer_range reversed", None, {"layer_range": "3-1"}, attnrank.ArgumentError),
    ("layer_range not numbers", None, {"layer_range": "a-b"}, attnrank.ArgumentError),
    ("layer_range triple", None, {"layer_range": (0, 1, 2)}, attnrank.ArgumentError),
    ("layer_range negative", None, {"layer_range": -1}, attnrank.ArgumentError),
    ("layer_range beyond the layers", None, {"layer_range": "5-9"}, attnrank.ArgumentError),
    ("q_pattern alone", None, {"q_pattern": "h.{layer}.q"}, attnrank.ArgumentError),
    ("pattern without {layer}", None, {"q_pattern": "q", "k_pattern": "k"},
     attnrank.ArgumentError),
    ("pattern with NUL", None, {"q_pattern": "q.{layer}\0", "k_pattern": "k.{layer}"},
     attnrank.ArgumentError),
    ("pattern not a string", None, {"q_pattern": 1, "k_pattern": 2}, attnrank.ArgumentError),
    ("patterns matching nothing", None, {"q_pattern": "x.{layer}.q", "k_pattern": "x.{layer}.k"},
     attnrank.FormatError),
]


@pytest.mark.parametrize("what", [h[0] for h in HOSTILE])
def test_hostile_models_and_keywords_raise_and_never_crash(corrupt, good, what):
    _, model, kw, exc = next(h for h in HOSTILE if h[0] == what)
    kw = dict(kw)
    if "model_dir" in kw:
        target = kw.pop("model_dir")
    elif model is None:
        target = good
    else:
        target = corrupt.get(model, model)
    with pytest.raises(exc) as info:
        attnrank.weights(target, **kw)
    assert isinstance(info.value, attnrank.Error) and str(info.value)


def test_hostile_count():
    assert len(HOSTILE) == 66


def test_hostile_models_fail_in_the_cli_too(cli, corrupt):
    """The CLI refuses every broken model the binding refuses (exit != 0)."""
    for name, path in corrupt.items():
        out = subprocess.run([cli, "weights", str(path), "--json"], capture_output=True,
                             text=True)
        assert out.returncode != 0, name
        with pytest.raises(attnrank.Error):
            attnrank.weights(path)


def test_error_messages_name_the_problem(corrupt, tmp_path):
    with pytest.raises(attnrank.FileError, match="nonexistent"):
        attnrank.weights("/nonexistent/attnrank-model")
    with pytest.raises(attnrank.NonFiniteError, match="c_attn"):
        attnrank.weights(corrupt["nan-f32"])
    with pytest.raises(attnrank.FormatError, match="config.json"):
        attnrank.weights(corrupt["config-wrong-type"])
    with pytest.raises(attnrank.ArgumentError, match="heads"):
        attnrank.weights(corrupt["heads-unknown"])
    # a broken config.json is not read with config=False
    assert len(attnrank.weights(corrupt["config-invalid-json"], config=False, heads=2)) == 2


# ---- GIL, help --------------------------------------------------------------------

def test_the_gil_is_released(tmp_path):
    model = llama_model(tmp_path / "big", d=256, heads=8, kv_heads=4, layers=6, dtype="F32")
    assert_gil_released(lambda: attnrank.weights(model))


def test_docstring_names_the_rules():
    # every CLI option is checked by test_help.py
    doc = attnrank.weights.__doc__
    assert "uniform-rounding-mc" in doc and "tau_cert" in doc and "FixedMultiHead" in doc
