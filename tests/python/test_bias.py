"""Positional biases of a model (docs/theory/positional-bias.md): the
``positional_bias`` block of attnrank.heads(config=...) and
attnrank.weights() equals the CLI's; ALiBi slopes and the proved ranks
(causal 1, bidirectional n - 1); T5 ranks computed from bucket values
stored in a checkpoint; no block without a bias; the records' fields."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attnrank
from conftest import python_spelling

GEN = Path(__file__).resolve().parents[1] / "tools" / "make_safetensors.py"

CONFIGS = {
    "bloom": {"model_type": "bloom", "n_head": 16, "hidden_size": 1024, "seq_length": 2048},
    "mpt": {"model_type": "mpt", "d_model": 240, "n_heads": 6, "max_seq_len": 64,
            "attn_config": {"alibi": True, "alibi_bias_max": 8}},
    "t5": {"model_type": "t5", "d_model": 64, "num_heads": 4, "n_positions": 48},
    "gpt2": {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_positions": 32},
}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    d = tmp_path_factory.mktemp("configs")
    paths = {}
    for name, cfg in CONFIGS.items():
        paths[name] = d / (name + ".json")
        paths[name].write_text(json.dumps(cfg))
    return paths


def _cli(cli, *args):
    """The CLI's JSON (exit 0, or 1 when a check fails)."""
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("mask", [None, "window:8"])
def test_heads_config_equals_the_cli(cli, configs, name, mask):
    extra = ["--mask", mask] if mask else []
    want = _cli(cli, "heads", "--config", str(configs[name]), "--samples", "0", *extra)
    want["config"].pop("source")
    want = python_spelling(want)
    got = attnrank.heads(config=configs[name], samples=0, mask=mask).to_dict()
    assert got == want
    assert list(got) == list(want)


def test_alibi_slopes_and_ranks(configs):
    b = attnrank.heads(config=configs["bloom"], samples=0).positional_bias
    assert isinstance(b, attnrank.ModelBias)
    assert b.kind == "alibi" and b.n == 2048 and b.head_size == 64
    (kind,) = b.layer_kinds
    assert kind.causal and not kind.bound_only and kind.mask.kind == "causal"
    np.testing.assert_allclose([h.slope for h in kind.heads],
                               [2.0 ** (-(h + 1) / 2) for h in range(16)], rtol=1e-15)
    assert {(h.bias_rank, h.reach, h.known, h.proved) for h in kind.heads} == {(1, 65, True, True)}
    # bidirectional: every head needs n - 1
    b = attnrank.heads(config=configs["bloom"], samples=0, mask="none", n=100).positional_bias
    assert {h.bias_rank for h in b.layer_kinds[0].heads} == {99}
    # MPT, 6 heads: the slopes of 8 heads, odd positions first
    b = attnrank.heads(config=configs["mpt"], samples=0).positional_bias
    assert [h.slope for h in b.layer_kinds[0].heads] == [2.0 ** -k for k in (2, 4, 6, 8, 1, 3)]


def test_masks_inside_causal_give_bounds(configs):
    b = attnrank.heads(config=configs["bloom"], samples=0, mask="window:8").positional_bias
    kind = b.layer_kinds[0]
    assert kind.causal and kind.bound_only
    assert all(h.bias_rank == 1 and not h.known for h in kind.heads)
    b = attnrank.heads(config=configs["bloom"], samples=0, mask="band:8").positional_bias
    kind = b.layer_kinds[0]
    assert not kind.causal and kind.bound_only
    assert {h.bias_rank for h in kind.heads} == {2047}


def test_t5_config_bounds_per_stack(configs):
    b = attnrank.heads(config=configs["t5"], samples=0).positional_bias
    assert b.kind == "t5" and b.buckets == 32 and b.max_distance == 128
    assert [k.label for k in b.layer_kinds] == ["encoder self-attention",
                                                 "decoder self-attention"]
    assert [k.causal for k in b.layer_kinds] == [False, True]
    for k in b.layer_kinds:
        assert not k.values_read
        assert {(h.bias_rank, h.known) for h in k.heads} == {(47, False)}


def test_no_bias_no_block(cli, configs):
    assert attnrank.heads(config=configs["gpt2"], samples=0).positional_bias is None
    assert "positional_bias" not in attnrank.heads(config=configs["gpt2"], samples=0).to_dict()


@pytest.fixture(scope="module")
def t5_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "t5bias"
    subprocess.run([sys.executable, str(GEN), str(path), "--family", "bert", "--layers", "1",
                    "--heads", "3", "--d", "12", "--max-positions", "40", "--t5-bias"],
                   check=True, capture_output=True)
    return path


def test_weights_reads_t5_values(cli, t5_model):
    r = attnrank.weights(t5_model)
    b = r.positional_bias
    (kind,) = b.layer_kinds
    assert kind.values_read and not kind.causal
    # head 0's buckets are constant (rank 0, reach = head size), the others generic
    assert [h.bias_rank for h in kind.heads] == [0, 39, 39]
    assert [h.reach for h in kind.heads] == [4, 39, 39]
    want = _cli(cli, "weights", str(t5_model))
    assert r.to_dict()["positional_bias"] == want["positional_bias"]
    # the ranks are those of the stored values: recompute head 1 with numpy
    table = np.frombuffer(_tensor_bytes(t5_model / "model.safetensors",
                                        "relative_attention_bias.weight"),
                          dtype="<f4").reshape(32, 3).astype(np.float64)
    n = 40
    rel = np.arange(n)[None, :] - np.arange(n)[:, None]
    buckets = np.vectorize(lambda r: _t5_bucket(r, 32, 128))(rel)
    bias = table[buckets, 1]
    centred = bias - bias.mean(axis=1, keepdims=True)
    s = np.linalg.svd(centred, compute_uv=False)
    assert int((s > 1e-9 * s[0]).sum()) == 39


def _tensor_bytes(path, suffix):
    raw = Path(path).read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    (name,) = [k for k in header if k.endswith(suffix)]
    lo, hi = header[name]["data_offsets"]
    return raw[8 + size + lo:8 + size + hi]


def _t5_bucket(relative, num_buckets, max_distance):
    """T5's bidirectional bucket of relative position key - query."""
    num_buckets //= 2
    bucket = num_buckets if relative > 0 else 0
    n = abs(relative)
    exact = num_buckets // 2
    if n < exact:
        return bucket + n
    large = exact + int(np.log(n / exact) / np.log(max_distance / exact) * (num_buckets - exact))
    return bucket + min(large, num_buckets - 1)


def test_weights_without_bias_has_no_block(tmp_path):
    subprocess.run([sys.executable, str(GEN), str(tmp_path / "m"), "--family", "gpt2",
                    "--layers", "1", "--heads", "2", "--d", "8"], check=True,
                   capture_output=True)
    r = attnrank.weights(tmp_path / "m")
    assert r.positional_bias is None and "positional_bias" not in r.to_dict()


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("mask", [None, "window:8"])
def test_check_config_equals_the_cli(cli, configs, name, mask):
    extra = ["--mask", mask] if mask else []
    want = _cli(cli, "check", "--config", str(configs[name]), "--require", "no-bottleneck",
                *extra)
    got = attnrank.check(config=configs[name], require="no-bottleneck", mask=mask)
    assert [c.to_dict() for c in got.configs] == python_spelling(want)["configs"]
    for c in got.configs:
        if name in ("gpt2",):
            assert c.positional_bias is None
        else:
            assert len(c.positional_bias.layer_kinds) == 1
