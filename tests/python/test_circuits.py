"""attnrank.copying_scores, composition_score and circuits: the closed forms
of docs/theory/circuits.md, agreement with numpy's dense products, the CLI's
JSON, and the refusals."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import attnrank

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "tools", "make_safetensors.py")


def closed_form(c, d, seed=1):
    """W_V = C Q^T, W_O = Q (orthonormal columns): eig(W_OV) = eig(C)."""
    r = c.shape[0]
    q = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, r)))[0]
    return c @ q.T, q


@pytest.mark.parametrize("c, want", [
    (np.eye(3), (1.0, 1.0, 1.0)),
    (np.array([[0.5, -np.sqrt(3) / 2], [np.sqrt(3) / 2, 0.5]]), (0.5, 0.5, 1.0)),
    (np.diag([3.0, 1.0, -1.0, -1.0]), (1 / 3, 1 / 3, 1 / 3)),
])
def test_closed_forms(c, want):
    s = attnrank.copying_scores(*closed_form(c, 9))
    assert isinstance(s, attnrank.CopyingScores)
    assert s.s_eig_defined and s.sign_certain
    np.testing.assert_allclose((s.s_eig, s.s_nuc, s.s_sym), want, atol=1e-13)
    np.testing.assert_allclose(np.sort_complex(s.eigenvalues),
                               np.sort_complex(np.linalg.eigvals(c)), atol=1e-13)


def test_nilpotent_core_is_undefined_not_round_off():
    n = np.triu(np.full((4, 4), 2.385), 1)
    s = attnrank.copying_scores(*closed_form(n, 11))
    assert not s.s_eig_defined and np.isnan(s.s_eig) and s.nonzero_eigenvalues == 0
    assert abs(s.s_nuc) < 1e-14 and abs(s.s_sym) < 1e-14 and not s.sign_certain
    assert s.to_dict()["s_eig"] is None


def test_dense_products_and_layouts():
    rng = np.random.default_rng(5)
    wv, wo = rng.standard_normal((4, 10)), rng.standard_normal((10, 4))
    m = wo @ wv
    lam = np.linalg.eigvals(wv @ wo)
    sv = np.linalg.svd(m, compute_uv=False)
    sym = np.linalg.eigvalsh((m + m.T) / 2)
    # C order, Fortran order and a transposed view are read as they are
    for a, b in ((wv, wo), (np.asfortranarray(wv), wo), (wv.T.copy().T, np.asfortranarray(wo))):
        s = attnrank.copying_scores(a, b)
        np.testing.assert_allclose(s.s_eig, lam.real.sum() / np.abs(lam).sum(), rtol=1e-12)
        np.testing.assert_allclose(s.s_nuc, np.trace(m) / sv.sum(), rtol=1e-12)
        np.testing.assert_allclose(s.s_sym, np.trace(m) / np.abs(sym).sum(), rtol=1e-12)
        np.testing.assert_allclose(s.z_eig, s.s_eig / (1.5 / 4), rtol=1e-15)
    # float32 inputs: the bound assumes float32 storage
    s32 = attnrank.copying_scores(wv.astype(np.float32), wo.astype(np.float32))
    assert s32.precision == "float32" and s32.trace_bound > 1e6 * s.trace_bound
    assert attnrank.copying_scores(wv, wo, precision="bfloat16").precision == "bfloat16"


def test_composition_scores():
    rng = np.random.default_rng(6)
    d = 8
    v1, o1 = rng.standard_normal((3, d)), rng.standard_normal((d, 3))
    q2, k2 = rng.standard_normal((2, d)), rng.standard_normal((2, d))
    v2, o2 = rng.standard_normal((2, d)), rng.standard_normal((2, d)).T
    ov1, qk2, ov2 = o1 @ v1, q2.T @ k2, o2 @ v2
    fro = np.linalg.norm

    def cs(m2):
        return fro(m2 @ ov1) / (fro(m2) * fro(ov1))
    got = {m: attnrank.composition_score((v1, o1), (q2, k2) if m != "v" else (v2, o2), mode=m)
           for m in "qkv"}
    np.testing.assert_allclose([got["q"], got["k"], got["v"]], [cs(qk2.T), cs(qk2), cs(ov2)],
                               rtol=1e-12)
    e = np.eye(4, 2)
    assert abs(attnrank.composition_score((e.T, e), (e.T, e.T), mode="k") - 2 ** -0.5) < 1e-15
    z = np.zeros((2, 4))
    assert np.isnan(attnrank.composition_score((z, z.T), (z, z.T), mode="v"))


def test_refusals():
    wv, wo = np.ones((2, 5)), np.ones((5, 2))
    with pytest.raises(attnrank.SizeError):
        attnrank.copying_scores(wv, np.ones((4, 2)))
    with pytest.raises(attnrank.NonFiniteError):
        attnrank.copying_scores(np.full((2, 5), np.nan), wo)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.copying_scores(np.ones(5), wo)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.composition_score((wv, wo), (wv, wv), mode="x")
    with pytest.raises(attnrank.ArgumentError):
        attnrank.composition_score(wv, (wv, wv), mode="q")
    with pytest.raises(attnrank.SizeError):
        attnrank.composition_score((wv, wo), (np.ones((2, 4)), np.ones((2, 4))), mode="q")
    with pytest.raises(attnrank.ArgumentError):
        attnrank.circuits()
    with pytest.raises(attnrank.ArgumentError):
        attnrank.circuits("x", state_dict={})


# ---- checkpoints: the CLI's JSON ---------------------------------------------------

def assert_same(a, b, where="$"):
    """Equal structure, keys, ints, strings and nulls; floats to 1e-13
    relative.  Why not bit equality: the CLI runs BLAS on one thread and
    this process on the default count, and OpenBLAS's symmetric kernels
    (dsyev's reduction, behind s_sym) round differently with the count."""
    assert type(a) is type(b) or {type(a), type(b)} <= {int, float}, (where, a, b)
    if isinstance(a, dict):
        assert list(a) == list(b), (where, list(a), list(b))
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert abs(a - b) <= 1e-13 * max(1.0, abs(b)), (where, a, b)
    else:
        assert a == b, (where, a, b)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("circuit_models")
    out = {}
    for fam, extra in (("gpt2", ["--dtype", "F16", "--embed", "tied", "--norms"]),
                       ("llama", ["--kv-heads", "2", "--dtype", "BF16", "--embed", "untied",
                                  "--norms"]),
                       ("bert", ["--dtype", "F32"])):
        path = root / fam
        subprocess.run([sys.executable, GEN, str(path), "--family", fam, "--layers", "2",
                        "--heads", "4", "--d", "16", *extra], check=True, capture_output=True)
        out[fam] = path
    return out


@pytest.mark.parametrize("fam", ["gpt2", "llama", "bert"])
@pytest.mark.parametrize("kw, flags", [
    ({}, []),
    ({"ov": True, "qk": True, "composition": "q,k,v"}, ["--ov", "--qk", "--composition", "q,k,v"]),
    ({"composition": ["v"], "layer_range": "0-1", "head_range": (1, 2)},
     ["--composition", "v", "--layer-range", "0-1", "--head-range", "1-2"]),
    ({"full": True, "head_range": "1-2"}, ["--full", "--head-range", "1-2"]),
])
def test_equals_the_cli(cli, models, fam, kw, flags):
    got = attnrank.circuits(models[fam], **kw)
    assert isinstance(got, attnrank.Circuits) and len(got) == len(list(got))
    out = subprocess.run([cli, "circuits", str(models[fam]), *flags, "--json"],
                         capture_output=True, text=True, check=True)
    want = json.loads(out.stdout)
    assert want.pop("source") == str(models[fam])
    assert_same(got.to_dict(), want)


def stored(model, decode_bf16=False):
    """The tensors of model/model.safetensors as numpy arrays (BF16 decoded
    to float64 when asked, else not readable)."""
    raw = (model / "model.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    hdr = json.loads(raw[8:8 + n])
    tensors = {}
    for name, t in hdr.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        buf = raw[8 + n + a:8 + n + b]
        if t["dtype"] == "BF16" and decode_bf16:
            u = np.frombuffer(buf, np.uint16).astype(np.uint32) << 16
            tensors[name] = u.view(np.float32).astype(np.float64).reshape(t["shape"])
            continue
        dtype = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
                 "I32": np.int32}[t["dtype"]]
        tensors[name] = np.frombuffer(buf, dtype).reshape(t["shape"])
    return tensors


def dense_factors(t, fam, r, layer, head):
    """(W_Q, W_K, W_V, W_O) of one head in float64, column convention."""
    d, dh = r.d, r.head_size
    g = head // (r.heads // r.kv_heads)
    rows, krows = slice(head * dh, (head + 1) * dh), slice(g * dh, (g + 1) * dh)
    if fam == "gpt2":
        w = t[f"h.{layer}.attn.c_attn.weight"].astype(np.float64)
        o = t[f"h.{layer}.attn.c_proj.weight"].astype(np.float64)
        return (w[:, rows].T, w[:, d:][:, krows].T, w[:, 2 * d:][:, krows].T, o[rows, :].T)
    p = f"model.layers.{layer}.self_attn."
    q, k, v, o = (t[p + n + "_proj.weight"].astype(np.float64) for n in "qkvo")
    return q[rows], k[krows], v[krows], o[:, rows]


@pytest.mark.parametrize("fam, unembedding", [("gpt2", None), ("llama", "lm_head.weight")])
def test_full_circuits_of_a_checkpoint_equal_the_dense_product(models, fam, unembedding):
    r = attnrank.circuits(models[fam], full=True)
    t = stored(models[fam], decode_bf16=True)
    emb = {"gpt2": "wte.weight", "llama": "model.embed_tokens.weight"}[fam]
    assert r.full_circuits == {"embedding": emb, "unembedding": unembedding or "tied",
                               "vocab": t[emb].shape[0]}
    we = t[emb].astype(np.float64)
    wu = we if unembedding is None else t[unembedding].astype(np.float64)
    for e in r:
        _, _, v, o = dense_factors(t, fam, r, e["layer"], e["head"])
        f = wu @ o @ v @ we.T
        lam = np.linalg.eigvals(f)
        lam = lam[np.abs(lam) > 1e-9 * np.abs(lam).max()]
        tr = np.trace(f)
        c = e["full_copying"]
        np.testing.assert_allclose(c["s_eig"], lam.real.sum() / np.abs(lam).sum(), rtol=1e-12)
        np.testing.assert_allclose(c["s_nuc"], tr / np.linalg.svd(f, compute_uv=False).sum(),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            c["s_sym"], tr / np.abs(np.linalg.eigvalsh((f + f.T) / 2)).sum(), rtol=1e-12)
        np.testing.assert_allclose(c["trace"], tr, rtol=1e-12)
        assert c["trace_bound"] is None and not c["sign_certain"]


@pytest.mark.parametrize("fam", ["gpt2", "llama"])
def test_tl_equals_the_cli(cli, models, fam):
    got = attnrank.circuits(models[fam], tl=True, full=True, composition="k", ov=True)
    out = subprocess.run([cli, "circuits", str(models[fam]), "--tl", "--full", "--composition",
                          "k", "--ov", "--json"], capture_output=True, text=True, check=True)
    want = json.loads(out.stdout)
    want.pop("source")
    assert want["weight_preprocessing"] == "tl" and want["weights_centred"] == (fam == "gpt2")
    assert_same(got.to_dict(), want)


@pytest.mark.parametrize("fam", ["gpt2", "llama"])
def test_tl_equals_numpy_preprocessing(models, fam):
    """TransformerLens's fold_ln / center_writing_weights on the dense
    factors: W_V diag(g) P and P W_O with LayerNorm, W_V diag(g) with RMSNorm."""
    r = attnrank.circuits(models[fam], tl=True)
    t = stored(models[fam], decode_bf16=True)
    d = r.d
    centre = np.eye(d) - np.ones((d, d)) / d if fam == "gpt2" else np.eye(d)
    for e in r:
        _, _, v, o = dense_factors(t, fam, r, e["layer"], e["head"])
        g = t[f"h.{e['layer']}.ln_1.weight" if fam == "gpt2" else
              f"model.layers.{e['layer']}.input_layernorm.weight"].astype(np.float64)
        v, o = v @ np.diag(g) @ centre, centre @ o
        m = o @ v
        lam = np.linalg.eigvals(v @ o)
        c = e["copying"]
        np.testing.assert_allclose(c["s_eig"], lam.real.sum() / np.abs(lam).sum(), rtol=1e-12)
        np.testing.assert_allclose(c["s_nuc"], np.trace(m) / np.linalg.svd(m, compute_uv=False).sum(),
                                   rtol=1e-12)
        assert c["trace_bound"] is None and not c["sign_certain"]


def test_tl_refusals(models):
    with pytest.raises(attnrank.UnsupportedError, match="post-LayerNorm"):
        attnrank.circuits(models["bert"], tl=True)
    t = {k: v for k, v in stored(models["gpt2"]).items() if "ln_1" not in k}
    cfg = json.loads((models["gpt2"] / "config.json").read_text())
    with pytest.raises(attnrank.FormatError, match="LayerNorm gain"):
        attnrank.circuits(state_dict=t, config=cfg, tl=True)


def test_full_circuits_need_the_token_embedding(models):
    t = {k: v for k, v in stored(models["gpt2"]).items() if k != "wte.weight"}
    cfg = json.loads((models["gpt2"] / "config.json").read_text())
    with pytest.raises(attnrank.FormatError, match="token embedding"):
        attnrank.circuits(state_dict=t, config=cfg, full=True)


def test_state_dict_equals_the_file(models):
    tensors = stored(models["bert"])
    cfg = json.loads((models["bert"] / "config.json").read_text())
    got = attnrank.circuits(state_dict=tensors, config=cfg, composition="k")
    assert_same(got.to_dict(), attnrank.circuits(models["bert"], composition="k").to_dict())


@pytest.mark.parametrize("tied", [False, True])
def test_full_circuits_equal_the_dense_product(tied):
    rng = np.random.default_rng(9)
    V, d, h = 40, 6, 3
    we, wu = rng.standard_normal((V, d)), rng.standard_normal((V, d))
    heads = [(rng.standard_normal((h, d)), rng.standard_normal((d, h))) for _ in range(2)]
    got = attnrank.full_copying_scores(heads, we, None if tied else wu)
    for (v, o), s in zip(heads, got):
        f = (we if tied else wu) @ o @ v @ we.T
        lam = np.linalg.eigvals(f)
        lam = lam[np.abs(lam) > 1e-9 * np.abs(lam).max()]
        tr = np.trace(f)
        np.testing.assert_allclose(s.s_eig, lam.real.sum() / np.abs(lam).sum(), rtol=1e-12)
        np.testing.assert_allclose(s.s_nuc, tr / np.linalg.svd(f, compute_uv=False).sum(),
                                   rtol=1e-12)
        np.testing.assert_allclose(s.s_sym, tr / np.abs(np.linalg.eigvalsh((f + f.T) / 2)).sum(),
                                   rtol=1e-12)
        assert np.isnan(s.trace_bound) and not s.sign_certain
    with pytest.raises(attnrank.SizeError):
        attnrank.full_copying_scores([(np.ones((2, 5)), np.ones((5, 2)))], we)
    with pytest.raises(attnrank.ArgumentError):
        attnrank.full_copying_scores([np.ones((2, 6))], we)
