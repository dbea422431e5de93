"""One schema for every result record (docs/architecture.md, "One schema"):
the library writes each record's JSON (attnrank/json.h), the CLI prints it
and the Python records are built from it.  Here: the fields of each record
class are the JSON keys in their order (so the two cannot drift), and
to_dict() equals the CLI's --json on inputs that reach every optional
block."""

import dataclasses
import json
import math

import numpy as np
import pytest

import attnrank
from attnrank._results import Tolerance, _from_json
from theory_cli import flags as _flags, run_json as _cli

# The tolerance block's storage-rule keys (left out under the relative rule).
_TOLERANCE_OPTIONAL = frozenset({"rule", "certain_threshold", "certain_rank", "seed", "draws"})


def _optional(cls):
    if cls is attnrank.RepresentSlice:  # a verdict only for a tested head size
        return frozenset({"representable"})
    return _TOLERANCE_OPTIONAL if cls is Tolerance else getattr(cls, "_OMIT", frozenset())


def _record_class(hint):
    """The record class a field's type hint holds (directly, in Optional or
    in a tuple), or None for plain values."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    for arg in getattr(hint, "__args__", ()):
        found = _record_class(arg)
        if found is not None:
            return found
    return None


def assert_fields_are_keys(cls, obj, where="record"):
    """The JSON keys of obj are the fields of cls in order (without
    _NOT_JSON, and without the optional fields obj leaves out), recursively
    for the nested records."""
    import typing
    hints = typing.get_type_hints(cls)
    not_json = getattr(cls, "_NOT_JSON", frozenset())
    names = [f.name for f in dataclasses.fields(cls) if f.name not in not_json]
    expected = [n for n in names if n in obj or n not in _optional(cls)]
    assert list(obj) == expected, f"{where} ({cls.__name__})"
    for name in expected:
        sub = _record_class(hints[name])
        value = obj[name]
        if sub is None or value is None:
            continue
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            assert_fields_are_keys(sub, item, f"{where}.{name}[{i}]")


# ---- seprank ----------------------------------------------------------------------

SEPRANK_FULL = ["--layers", 1, "--d", 4, "--embed-rank", 2, "--vocab", 3, "--positions",
                "--exact"]


def test_seprank_fields_are_the_keys(cli):
    assert_fields_are_keys(attnrank.Seprank, _cli(cli, "seprank", *SEPRANK_FULL))


SEPRANK_CASES = [
    ((1, 4), {"embed_rank": 2}),
    ((2, 3), {"embed_rank": 2, "vocab": 4, "exact": True}),
    ((1, 3), {"embed_rank": 5, "positions": True}),
    ((1, 27), {"templates": 2}),
    ((5, 2), {"templates": 2}),
    ((1, 2), {"n": 3, "residual": True, "exact": True}),
    ((1, 2), {"seed": 2 ** 63}),
]


@pytest.mark.parametrize("args,kw", SEPRANK_CASES)
def test_seprank_equals_the_cli(cli, args, kw):
    got = attnrank.seprank(*args, **kw)
    want = _cli(cli, "seprank", "--layers", args[0], "--d", args[1], *_flags(kw))
    assert got.to_dict() == want


def test_seprank_record_from_json_keeps_ieee_values():
    # NaN bounds stay NaN (the CLI's null), tuples of records, float64 arrays
    r = attnrank.seprank(1, 4, embed_rank=2, vocab=3, positions=True, exact=True)
    assert math.isnan(r.bound_log_parity) and r.to_dict()["bound_log_parity"] is None
    assert isinstance(r.primes, tuple) and isinstance(r.primes[0], attnrank.PrimeRank)
    assert r.singular_values.dtype == np.float64 and isinstance(r.tolerance, Tolerance)
    assert r.tolerance.rule == "relative"
    assert isinstance(r.embedding, attnrank.SeprankEmbedding)
    assert r.seed == 0 and attnrank.seprank(1, 2, seed=2 ** 64 - 1).seed == 2 ** 64 - 1


# ---- the builder itself -------------------------------------------------------------

def test_from_json_converts_by_type_hint():
    rec = _from_json(attnrank.PrimeRank, {"prime": 7, "rank": 2})
    assert rec == attnrank.PrimeRank(prime=7, rank=2)
    tol = _from_json(Tolerance, {"threshold": "inf", "rtol": "-inf", "atol": "nan",
                                 "precision": "float64"})
    assert tol.threshold == math.inf and tol.rtol == -math.inf and math.isnan(tol.atol)
    with pytest.raises(ValueError, match="without a field"):
        _from_json(attnrank.PrimeRank, {"prime": 7, "rank": 2, "extra": 1})


# ---- depthwidth -------------------------------------------------------------------

def _without_file(d):
    # the CLI's "file" of a refit names its input: a face-only key, not the record's
    d = {k: v for k, v in d.items() if k != "file"}
    if isinstance(d.get("fit"), dict):
        d["fit"] = _without_file(d["fit"])
    return d


_POINTS = [[6, 215.0, 5.0], [12, 300.0, 8.0], [24, 585.0, 20.0], [48, 2215.0, 60.0]]

DEPTHWIDTH_MODES = [
    (attnrank.DepthWidthOptimum, ["--params", "1e9"], {"params": 1e9}),
    (attnrank.DepthWidthTransitionWidth, ["--layers", 12], {"layers": 12}),
    (attnrank.DepthWidthTransitionDepth, ["--d", 768], {"d": 768}),
    (attnrank.DepthWidthVerdict, ["--layers", 12, "--d", 768], {"layers": 12, "d": 768}),
]


@pytest.fixture
def points_csv(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("depth,width,error\n" + "\n".join(",".join(map(str, p)) for p in _POINTS)
                    + "\n")
    return path


@pytest.mark.parametrize("cls,args,kw", DEPTHWIDTH_MODES)
def test_depthwidth_fields_are_the_keys(cli, points_csv, cls, args, kw):
    # every optional block: a refit law and the embedding crossover
    want = _without_file(_cli(cli, "depthwidth", "--fit", points_csv, "--embed-rank", 100,
                              *args))
    assert_fields_are_keys(cls, want)
    got = attnrank.depthwidth(**kw, fit=_POINTS, embed_rank=100)
    assert type(got) is cls and got.to_dict() == want


def test_depthwidth_fit_fields_are_the_keys(cli, points_csv):
    want = _without_file(_cli(cli, "depthwidth", "--fit", points_csv))
    assert_fields_are_keys(attnrank.DepthWidthFit, want)
    assert attnrank.depthwidth_fit(_POINTS).to_dict() == want
    two = attnrank.depthwidth_fit(_POINTS[:2])
    assert math.isnan(two.chi2_red) and two.to_dict()["chi2_red"] is None


# ---- collapse ---------------------------------------------------------------------

COLLAPSE_CASES = [
    ((3, 8, 8, 2), {"gamma": 1, "beta": 0.5}),
    ((2, 8, 8, 2), {"skip": True, "mlp": True, "mlp_width": 5, "seed": 2 ** 64 - 1}),
    ((2, 1, 4, 1), {}),
    ((3, 4, 4, 1), {"rtol": 1e-3, "atol": 1e-9, "fit_floor": 1e-6}),
]


def _collapse_cli(cli, args, kw):
    return _cli(cli, "collapse", "--layers", args[0], "--n", args[1], "--d", args[2],
                "--heads", args[3], *_flags(kw))


def test_collapse_fields_are_the_keys(cli):
    args, kw = COLLAPSE_CASES[0]
    assert_fields_are_keys(attnrank.Collapse, _collapse_cli(cli, args, kw))


@pytest.mark.parametrize("args,kw", COLLAPSE_CASES)
def test_collapse_equals_the_cli(cli, args, kw):
    assert attnrank.collapse(*args, **kw).to_dict() == _collapse_cli(cli, args, kw)


def test_collapse_keeps_infinite_bounds():
    # 3^L overflows: the log bound is +inf, the CLI's null, and the record keeps inf
    c = attnrank.collapse(700, 4, 4, 1, gamma=100, beta=100)
    assert c.depths[-1].bound_log == math.inf
    assert c.to_dict()["depths"][-1]["bound_log"] is None
    assert math.isnan(c.depths[0].ratio)


# ---- softmax-bottleneck -------------------------------------------------------------

def _next_word(rng, n, v, k):
    logits = rng.standard_normal((n, k)) @ rng.standard_normal((k, v)) + rng.standard_normal(v)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


SBN_CASES = [
    {"d": 2},
    {"d": 3, "bias": True, "no_fit": True},
    {"d": 1, "seed": 2 ** 64 - 1, "max_iter": 3, "jitter": 0.1},  # a seed above INT64_MAX
    {"d": 9, "rtol": 1e-6, "atol": 1e-9, "sum_tol": 1e-3},
]


@pytest.mark.parametrize("kw", SBN_CASES)
def test_softmax_bottleneck_equals_the_cli(cli, tmp_path, kw):
    p = _next_word(np.random.default_rng(3), 6, 10, 3)
    path = tmp_path / "p.npy"
    np.save(path, p)
    want = _cli(cli, "softmax-bottleneck", path, *_flags(kw))
    assert want.pop("source") == str(path)  # the face's key, first
    if "no_fit" in kw:
        kw = dict(kw, fit=False)
        del kw["no_fit"]
    got = attnrank.softmax_bottleneck(p, **kw)
    assert got.to_dict() == want
    assert_fields_are_keys(attnrank.SoftmaxBottleneck, want)
    if want["fit"] is not None:
        assert got.fit.seed == kw.get("seed", 0)


# ---- circuits -----------------------------------------------------------------------

import os as _os  # noqa: E402 (this block's own imports, kept beside it)
import subprocess as _subprocess  # noqa: E402
import sys as _sys  # noqa: E402

from test_circuits import assert_same  # noqa: E402 (to_dict against the CLI to 1e-13)

_GEN = _os.path.join(_os.path.dirname(__file__), "..", "tools", "make_safetensors.py")


def _model(tmp_path, name, *args):
    """A checkpoint written by tests/tools/make_safetensors.py."""
    path = tmp_path / name
    _subprocess.run([_sys.executable, _GEN, str(path), *map(str, args)], check=True,
                   capture_output=True)
    return path


CIRCUITS_CASES = [
    ({"tl": True, "ov": True, "qk": True, "full": True, "composition": "q,k,v"},
     ["--tl", "--ov", "--qk", "--full", "--composition", "q,k,v"]),
    ({}, []),
    ({"composition": "v", "precision": "float16"}, ["--composition", "v", "--precision",
                                                    "float16"]),
]


@pytest.mark.parametrize("kw,flags", CIRCUITS_CASES)
def test_circuits_equals_the_cli(cli, tmp_path, kw, flags):
    # GPT-2 with a tied embedding and the norms' gains: every optional block
    path = _model(tmp_path, "gpt2", "--family", "gpt2", "--layers", 2, "--heads", 2, "--d", 8,
                  "--embed", "tied", "--norms")
    want = _cli(cli, "circuits", path, *flags)
    assert want.pop("source") == str(path)  # the face's key, first
    assert_fields_are_keys(attnrank.Circuits, want)
    got = attnrank.circuits(path, **kw)
    # the same keys and values; a symmetric part's spectrum may differ in the
    # last bits (the CLI runs one BLAS thread per factorisation)
    assert_same(got.to_dict(), want)
    if "full" in kw:
        # the full circuits' z figures are not certified: None in the copying block
        assert got.circuit_heads[0]["full_copying"]["z_eig"] is None
        assert isinstance(got.copying_tolerance["null_sd_eig"], float)
        assert all(isinstance(p["scaled"], float) for p in got.composition["pairs"])
# ---- spectrum -----------------------------------------------------------------------
# A Spectrum is a RankMetrics (its fields first, by inheritance) with index and
# singular_values after them; the JSON puts index first, so the order checked
# is the JSON's: index, the RankMetrics fields, singular_values.

def _spectrum_keys(entry):
    metrics = [f.name for f in dataclasses.fields(attnrank.RankMetrics)]
    assert list(entry) == ["index"] + metrics + ["singular_values"]
    assert_fields_are_keys(Tolerance, entry["tolerance"], "tolerance")


SPECTRUM_CASES = [
    (np.float64, {}),
    (np.float32, {"seed": 7}),  # the storage rule's block
    (np.float16, {"rtol": 0.01}),
    (np.float32, {"precision": "bfloat16", "energy_fraction": 0.5}),
]


@pytest.mark.parametrize("dtype, kw", SPECTRUM_CASES)
def test_spectrum_equals_the_cli(cli, tmp_path, dtype, kw):
    a = np.random.default_rng(4).standard_normal((2, 3, 5, 4)).astype(dtype)
    path = tmp_path / "a.npy"
    np.save(path, a)
    flags = dict(kw)
    if "energy_fraction" in flags:
        flags["energy"] = flags.pop("energy_fraction")
    want = _cli(cli, "spectrum", path, *_flags(flags))
    assert want.pop("source") == str(path)  # the face's keys: source, each label
    for entry in want["matrices"]:
        assert entry.pop("label").startswith(str(path))
        _spectrum_keys(entry)
    got = attnrank.spectrum(a, **kw)
    assert got.to_dict() == want
    one = attnrank.spectrum(a[1, 2], **kw)
    assert one.to_dict()["singular_values"] == want["matrices"][5]["singular_values"]


# ---- heads --------------------------------------------------------------------------

HEADS_CASES = [
    ((64, 4, 32), {"samples": 1}),
    ((60, 7, 16), {"head_size": 5, "samples": 2, "seed": 2 ** 64 - 1}),  # h not dividing d
    ((768, 12, 1024), {"mask": "causal"}),
    ((256, 4, 64), {"mask": "docs:16/48", "samples": 0}),
]


@pytest.mark.parametrize("args, kw", HEADS_CASES)
def test_heads_equals_the_cli(cli, args, kw):
    want = _cli(cli, "heads", "--d", args[0], "--heads", args[1], "--n", args[2], *_flags(kw))
    assert attnrank.heads(*args, **kw).to_dict() == want
    assert_fields_are_keys(attnrank.Heads, want)


def _config(tmp_path, **keys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(keys))
    return path


HEADS_CONFIGS = [
    {"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16, "head_dim": 256,
     "num_hidden_layers": 42, "max_position_embeddings": 8192, "sliding_window": 4096},
    {"model_type": "bloom", "hidden_size": 1024, "n_head": 16, "n_layer": 24},  # ALiBi
    {"model_type": "t5", "d_model": 512, "num_heads": 8, "d_kv": 64, "num_layers": 6,
     "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
]


@pytest.mark.parametrize("keys", HEADS_CONFIGS)
def test_heads_model_equals_the_cli(cli, tmp_path, keys):
    path = _config(tmp_path, **keys)
    want = _cli(cli, "heads", "--config", path, "--n", 64, "--samples", 0)
    assert want["config"].pop("source") == str(path)  # the face's key, first in config
    assert attnrank.heads(config=path, n=64, samples=0).to_dict() == want
    assert_fields_are_keys(attnrank.HeadsModel, want)


# ---- params -------------------------------------------------------------------------

@pytest.mark.parametrize("args, kw", [((512, 8), {}), ((768, 12), {"layers": 12}),
                                      ((100, 7), {"head_size": 9, "ffn": 50, "vocab": 11})])
def test_params_equals_the_cli(cli, args, kw):
    want = _cli(cli, "params", "--d", args[0], "--heads", args[1], *_flags(kw))
    assert attnrank.params(*args, **kw).to_dict() == want
    assert_fields_are_keys(attnrank.ParamCount, want)


def test_paper_tables_equal_the_cli(cli):
    want = _cli(cli, "params", "--paper-tables")
    assert attnrank.params(paper_tables=True).to_dict() == want
    assert_fields_are_keys(attnrank.PaperTables, want)


# ---- weights ------------------------------------------------------------------------

from conftest import python_spelling  # noqa: E402 (the CLI's --mask as Python's mask=)

WEIGHTS_CASES = [
    # rotary (its note), a token embedding, both verdicts, the given rule's face note
    (["--family", "llama", "--layers", 2, "--heads", 4, "--kv-heads", 2, "--d", 16,
      "--dtype", "F16", "--embed", "untied"], {"n": 4, "rtol": 1e-3}),
    # ALiBi: the positional-bias block; a seed above INT64_MAX
    (["--family", "gpt2", "--layers", 1, "--heads", 4, "--d", 16, "--max-positions", 24,
      "--alibi"], {"seed": 2 ** 64 - 1, "mask": "none", "n": 8}),
    # T5's stored buckets; the default rule
    (["--family", "bert", "--layers", 1, "--heads", 3, "--d", 12, "--max-positions", 40,
      "--t5-bias"], {"precision": "bfloat16"}),
    # no config: no context, no verdict
    (["--family", "bert", "--layers", 2, "--heads", 2, "--d", 16, "--no-config"],
     {"heads": 2, "atol": 1e-3}),
]


@pytest.mark.parametrize("gen,kw", WEIGHTS_CASES)
def test_weights_equals_the_cli(cli, tmp_path, gen, kw):
    path = _model(tmp_path, "model", *gen)
    want = python_spelling(_cli(cli, "weights", path, *_flags(kw)))
    assert want.pop("source") == str(path)  # the face's key, first
    assert_fields_are_keys(attnrank.Weights, want)
    got = attnrank.weights(path, **kw)
    assert got.to_dict() == want
    assert list(got.to_dict()) == list(want)  # the same order too
    for layer in got.layers:
        assert all(h.layer == layer.layer for h in layer.heads)  # the enclosing layer's
# ---- represent ----------------------------------------------------------------------
# The CLI's input names are the face's: "source" first, x's "source" (the --X
# file) and the certificate's "weights_prefix" (--weights-out).

def _map(rng, n, rank, window=0):
    """A column-stochastic map of logit rank `rank`; with window W > 0 under
    the window:W mask (query j sees keys j - W < i <= j; n: causal)."""
    logits = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, n))
    e = np.exp(logits - logits.max(axis=0))
    if window:
        i, j = np.indices((n, n))
        e = np.where((i <= j) & (i > j - window), e, 0.0)
    return e / e.sum(axis=0)


def _represent_cli(cli, tmp_path, p, kw, x=None):
    path = tmp_path / "p.npy"
    np.save(path, p)
    flags = dict(kw)
    if flags.pop("fit", True) is False:
        flags["no_fit"] = True
    args = []
    if x is not None:
        np.save(tmp_path / "x.npy", x)
        args = ["--X", tmp_path / "x.npy"]
    want = _cli(cli, "represent", path, "--axis", "col", *args, *_flags(flags), ok=(0, 1))
    assert want.pop("source") == str(path)
    if x is not None:
        assert want["x"].pop("source") == str(tmp_path / "x.npy")
    return want


REPRESENT_CASES = [
    (attnrank.Represent, {}),
    (attnrank.Represent, {"head_size": 1, "max_iter": 3, "seed": 2 ** 64 - 1}),
    (attnrank.Represent, {"head_size": 1, "fit": False, "smooth": 1e-9}),
    (attnrank.Represent, {"bias": "alibi:0.5"}),
    (attnrank.Represent, {"precision": "float16", "head_size": 4, "fit": False}),
    (attnrank.MaskedRepresent, {"mask": "auto", "smooth": 1e-12}),
    (attnrank.MaskedRepresent, {"mask": "causal", "head_size": 1, "max_iter": 3}),
    (attnrank.MaskedRepresent, {"mask": "window:3", "head_size": 2}),
    (attnrank.MaskedRepresent, {"mask": "auto", "bias": "alibi-causal:0.25"}),
]


@pytest.mark.parametrize("cls, kw", REPRESENT_CASES)
def test_represent_equals_the_cli(cli, tmp_path, cls, kw):
    rng = np.random.default_rng(6)
    window = 3 if kw.get("mask") == "window:3" else 8 if "mask" in kw else 0
    p = _map(rng, 8, 3, window)
    want = _represent_cli(cli, tmp_path, p, kw)
    got = attnrank.represent(p, axis="col", **kw)
    assert type(got) is cls and got.to_dict() == want
    assert_fields_are_keys(cls, want)


def test_represent_with_x_equals_the_cli(cli, tmp_path):
    rng = np.random.default_rng(7)
    p, x = _map(rng, 6, 2), rng.standard_normal((4, 6))
    want = _represent_cli(cli, tmp_path, p, {}, x=x)
    assert want["x"]["given"] and "shift_forced" in want["x"]
    assert attnrank.represent(p, axis="col", x=x).to_dict() == want
    assert_fields_are_keys(attnrank.Represent, want)


@pytest.mark.parametrize("kw", [{}, {"mask": "auto", "head_size": 2}])
def test_represent_stack_equals_the_cli(cli, tmp_path, kw):
    rng = np.random.default_rng(8)
    window = 6 if "mask" in kw else 0
    p = np.stack([_map(rng, 6, r, window) for r in (1, 2, 3, 4)]).reshape(2, 2, 6, 6)
    want = _represent_cli(cli, tmp_path, p, kw)
    got = attnrank.represent(p, axis="col", **kw)
    assert type(got) is attnrank.RepresentStack and got.to_dict() == want
    assert_fields_are_keys(attnrank.RepresentStack, want)
    assert ("representable" in want["slices"][0]) == ("head_size" in kw)


def test_represent_record_keeps_the_weights():
    p = _map(np.random.default_rng(9), 5, 2)
    r = attnrank.represent(p, axis="col", certificate=True)
    assert r.certificate.wq.shape == (r.certificate.head_size, 5)
    assert "wq" not in r.to_dict()["certificate"]
    assert attnrank.represent(p, axis="col").certificate.wq is None
# ---- check --------------------------------------------------------------------------

CHECK_CASES = [  # every optional block: a config's bias per layer kind, the law and its refit
    ({"model_type": "t5", "d_model": 512, "num_heads": 8, "n_positions": 512},
     "no-bottleneck,depth-efficient", True),
    ({"model_type": "bloom", "hidden_size": 1024, "n_head": 16, "seq_length": 2048},
     "no-bottleneck,near-optimal-allocation", False),
    ({"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16, "head_dim": 256,
      "max_position_embeddings": 8192, "sliding_window": 4096}, "no-bottleneck", False),
]


@pytest.mark.parametrize("keys,require,refit", CHECK_CASES)
def test_check_fields_are_the_keys(cli, tmp_path, points_csv, keys, require, refit):
    path = _config(tmp_path, **keys)
    law = ["--fit", points_csv] if refit else []
    want = _without_file(_cli(cli, "check", "--config", path, "--layers", 24, "--require",
                              require, *law, ok=(0, 1)))
    assert_fields_are_keys(attnrank.CheckReport, want)
    got = attnrank.check(config=path, layers=24, require=require,
                         law=_POINTS if refit else None)
    assert got.to_dict() == want
    assert [v.status for c in got.configs for v in c.conditions] == \
        [v["status"] for c in want["configs"] for v in c["conditions"]]
# ---- the library's schema -----------------------------------------------------------
# The records' fields come from the library's table (attnrank/schema.h): each
# record and key is described there, docs/conventions.md's key list agrees with
# it, and the classes are its records.

import os as _os2  # noqa: E402
import re as _re  # noqa: E402

from attnrank._results import SCHEMA, _CLASSES  # noqa: E402

_CONVENTIONS = _os2.path.join(_os2.path.dirname(__file__), "..", "..", "docs", "conventions.md")
# Keys a face adds to the library's records (the input files, labels).
_FACE_KEYS = {"source", "file", "label", "weights_prefix", "note"}


def _named(key, text):
    return _re.search(r"(?<![A-Za-z0-9_])" + _re.escape(key) + r"(?![A-Za-z0-9_])", text)


def test_every_record_and_key_is_described():
    for name, rec in SCHEMA.items():
        assert rec["description"].strip(), name
        assert rec["fields"], name
        for f in rec["fields"]:
            assert f.get("doc") or _named(f["key"], rec["description"]), (name, f["key"])


def test_the_classes_are_the_schema():
    for name, rec in SCHEMA.items():
        cls = _CLASSES[name]
        assert cls.__name__ == name and cls.__doc__.startswith(rec["description"])
        chain = []
        while rec is not None:
            chain[:0] = rec["fields"]
            rec = SCHEMA[rec["base"]] if rec["base"] else None
        assert [f.name for f in dataclasses.fields(cls)] == [f["key"] for f in chain], name
        if not name.startswith("_"):  # a base no binding returns keeps its underscore
            assert getattr(attnrank, name) is cls, name


def _json_keys_section():
    """The "JSON keys" section of docs/conventions.md: its text and, per key
    in the first cell of a table row, the subsection that lists it."""
    text = open(_CONVENTIONS, encoding="utf-8").read()
    section = text[text.index("\n## JSON keys"):]
    section = section[:section.index("\n## ", 5)]
    listed, current = {}, None
    for line in section.split("\n"):
        if line.startswith("### "):
            current = line[4:].strip()
        elif line.startswith("| `"):
            for key in _re.findall(r"`([A-Za-z0-9_]+)`", line[2:].split(" | ")[0]):
                listed.setdefault(key, current)
    return section, listed


def test_conventions_lists_the_schema_keys():
    # every key of the schema is documented in the section, and every key the
    # section's tables list is a schema key, a face's key, or one of the
    # circuits' blocks (kind "any" in the schema: copying, qk, composition, ...)
    section, listed = _json_keys_section()
    keys = {f["key"] for rec in SCHEMA.values() for f in rec["fields"] if not f.get("face")}
    assert sorted(k for k in keys if f"`{k}`" not in section) == []
    stray = sorted(k for k, where in listed.items()
                   if k not in keys and k not in _FACE_KEYS and where != "circuits")
    assert stray == []


def test_a_record_extending_another_keeps_the_json_order():
    # the base's keys come first but for the fields that lead (a spectrum's index)
    rec, base = SCHEMA["Spectrum"], SCHEMA["RankMetrics"]
    order = ([f["key"] for f in rec["fields"] if f.get("leads")] +
             [f["key"] for f in base["fields"]] +
             [f["key"] for f in rec["fields"] if not f.get("leads")])
    assert list(attnrank.spectrum(np.eye(3)).to_dict()) == order
