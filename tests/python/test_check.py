"""attnrank.check and assert_conditions: the CLI's JSON on the same
configurations (sizes, masks, --strict, config.json files with alternating
layers, lists, refit and given laws), assert_conditions' message, hostile
inputs, the GIL, the docstring against `attnrank check --help`."""

import inspect
import json
import subprocess

import numpy as np
import pytest

import attnrank
from conftest import assert_gil_released, python_spelling

CONFIGS = {
    "gpt2": {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768,
             "n_head": 12, "n_layer": 12, "n_positions": 1024},
    "gemma2": {"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16,
               "head_dim": 256, "num_hidden_layers": 42, "max_position_embeddings": 8192,
               "sliding_window": 4096},
    "t5": {"model_type": "t5", "d_model": 512, "num_heads": 8, "n_positions": 512},
    "mistral": {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32,
                "num_key_value_heads": 8, "num_hidden_layers": 32,
                "max_position_embeddings": 32768, "sliding_window": 4096},
    "mystery": {"model_type": "mystery", "hidden_size": 64, "num_attention_heads": 4,
                "max_position_embeddings": 32},
    "no_width": {"model_type": "llama", "num_attention_heads": 4,
                 "max_position_embeddings": 32},
}


@pytest.fixture
def model(tmp_path):
    """The path of a config.json of CONFIGS."""
    def write(name):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(CONFIGS[name]))
        return str(path)
    return write


def _drop(d, keys=("source", "file")):
    if isinstance(d, dict):
        return {k: _drop(v, keys) for k, v in d.items() if k not in keys}
    if isinstance(d, list):
        return [_drop(v, keys) for v in d]
    return d


def _cli(cli, *args):
    out = subprocess.run([cli, "check", *[str(a) for a in args], "--json"],
                         capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return python_spelling(json.loads(out.stdout))


def _flags(kw):
    flags = []
    for k, v in kw.items():
        if k == "require":
            flags += ["--require", ",".join([v] if isinstance(v, str) else v)]
        elif v is True:
            flags.append("--" + k)
        else:
            flags += ["--" + k.replace("_", "-"), v]
    return flags


SINGLE = [
    dict(d=1024, heads=8, n=128, require="no-bottleneck"),
    dict(d=1024, heads=16, n=128, require="no-bottleneck"),
    dict(d=1024, heads=8, n=128, head_size=127, require="no-bottleneck"),
    dict(d=1024, heads=8, n=129, head_size=127, require="no-bottleneck"),
    dict(d=64, heads=1, n=128, head_size=200, require="no-bottleneck"),
    dict(d=768, heads=12, n=512, layers=12,
         require=["no-bottleneck", "depth-efficient", "near-optimal-allocation"]),
    dict(d=13422, layers=80, require="near-optimal-allocation"),
    dict(d=12288, heads=96, n=2048, layers=96, require="depth-efficient"),
    dict(d=8192, heads=64, n=257, mask="causal", require="no-bottleneck"),
    dict(d=8192, heads=64, n=258, mask="causal", require="no-bottleneck"),
    dict(d=64, heads=2, n=40, mask="sink:4+window:16", require="no-bottleneck"),
    dict(d=64, heads=2, n=40, mask="sink:4+window:16", strict=True, require="no-bottleneck"),
    dict(d=64, heads=2, n=40, mask="window:016", require="no-bottleneck"),
    dict(d=64, heads=2, n=40, mask="docs:20/20", require="no-bottleneck"),
    dict(d=64, heads=4, n=40, mask="band:5", layers=3,
         require="no-bottleneck,depth-efficient;near-optimal-allocation"),
    dict(d=64, heads=4, n=40, mask="none", require="no-bottleneck"),
]


@pytest.mark.parametrize("kw", SINGLE)
def test_one_configuration_equals_the_cli(cli, kw):
    want = _cli(cli, *_flags(kw))
    got = attnrank.check(**kw)
    assert isinstance(got, attnrank.Check)
    assert got.to_dict() == want["configs"][0]
    assert got.passed == (want["failed_conditions"] == 0)
    assert len(got.failures) == want["failed_conditions"]


def test_statuses_and_strict():
    c = attnrank.check(64, 2, 40, mask="sink:4+window:16", require="no-bottleneck")
    assert c.passed and c.conditions[0].status == "conjectural"
    s = attnrank.check(64, 2, 40, mask="sink:4+window:16", strict=True, require="no-bottleneck")
    assert not s.passed and "conjectural (strict=True)" in s.conditions[0].why
    assert attnrank.check(128, 4, 65, mask="causal", require="no-bottleneck").conditions[0] \
        .status == "proved"
    assert attnrank.check(64, 2, 40, mask="window:16", require="no-bottleneck").conditions[0] \
        .status == "verified"
    alloc = attnrank.check(768, layers=12, require="depth-efficient,near-optimal-allocation")
    assert [v.status for v in alloc.conditions] == ["empirical", "empirical"]
    # the exact thresholds: causal floor(n/2), bidirectional n - 1 with d >= n
    assert attnrank.check(128, 4, 65, mask="causal", require="no-bottleneck").passed
    assert not attnrank.check(128, 4, 66, mask="causal", require="no-bottleneck").passed
    assert attnrank.check(64, 2, 33, require="no-bottleneck").passed
    assert not attnrank.check(64, 2, 34, require="no-bottleneck").passed
    assert not attnrank.check(63, 1, 64, head_size=63, require="no-bottleneck").passed


@pytest.mark.parametrize("name,kw", [
    ("gpt2", {}), ("gpt2", {"d": 8192, "n": 129, "head_size": 64}),
    ("gemma2", {}), ("gemma2", {"mask": "causal"}),
    ("gemma2", {"layers": 42, "strict": True,
                "require": ("no-bottleneck", "depth-efficient", "near-optimal-allocation")}),
    ("t5", {}), ("mistral", {"strict": True}), ("mystery", {"mask": "causal"}),
])
def test_a_model_config_equals_the_cli(cli, model, name, kw):
    kw = dict(kw)
    kw.setdefault("require", "no-bottleneck")
    path = model(name)
    want = _cli(cli, "--config", path, *_flags(kw))
    got = attnrank.check(config=path, **kw)
    assert isinstance(got, attnrank.CheckReport)
    assert _drop(got.to_dict()) == _drop(want)
    assert got.passed == (want["failed_conditions"] == 0)


def test_gemma2_has_a_verdict_per_layer_kind(model):
    r = attnrank.check(config=model("gemma2"), require="no-bottleneck")
    assert [c.mask for c in r.configs] == ["window:4096", "causal"]
    assert "windowed layers" in r.configs[0].config and "global layers" in r.configs[1].config
    assert all(c.head_size == 256 for c in r.configs)
    assert r.failed_conditions == 2 and len(r.failures) == 2


def test_a_list_equals_the_cli_csv(cli, model, tmp_path):
    rows = [dict(name="bert-large-h8", d=1024, heads=8, n=128, layers=24,
                 require="no-bottleneck"),
            dict(name="gpt3", d=12288, heads=96, n=2048, layers=96, require="depth-efficient"),
            dict(name="gpt", d=8192, heads=64, n=257, mask="causal"),
            dict(name="gemma", config=model("gemma2"))]
    csv = tmp_path / "cfg.csv"
    cols = ["name", "d", "heads", "n", "layers", "mask", "config", "require"]
    csv.write_text(",".join(cols) + "\n" + "".join(
        ",".join(str(r.get(c, "")) for c in cols) + "\n" for r in rows))
    want = _cli(cli, "--configs", csv, "--require", "no-bottleneck")
    got = attnrank.check(configs=rows, require="no-bottleneck")
    assert _drop(got.to_dict()) == _drop(want)
    # the CSV itself, read by the library as the CLI reads it
    for path in (csv, str(csv), bytes(csv)):
        from_file = attnrank.check(configs=path, require="no-bottleneck")
        assert from_file.to_dict() == want
    # rows without a mask take the mask argument, as --mask
    masked = attnrank.check(configs=csv, require="no-bottleneck", mask="causal")
    assert masked.to_dict() == _cli(cli, "--configs", csv, "--require", "no-bottleneck",
                                    "--mask", "causal")
    # the CSV's flag spelling of a key is accepted too
    spelled = attnrank.check(configs=[{"d": 1024, "heads": 8, "n": 129, "head-size": 127}],
                             require="no-bottleneck")
    assert spelled.configs[0].head_size == 127 and not spelled.passed


def test_laws_equal_the_cli(cli, tmp_path):
    pts = np.array([[10, 1000], [20, 2000], [30, 4500.0]])
    (tmp_path / "pts.csv").write_text("depth,width\n" + "".join(f"{a:g},{b:g}\n" for a, b in pts))
    law = {"intercept": 5.5, "slope": 0.05}
    (tmp_path / "law.json").write_text(json.dumps(law))
    nested = {"law": {"intercept": 5.5, "slope": 0.05}, "params_coeff": 10.0}
    (tmp_path / "nested.json").write_text(json.dumps(nested))
    rows = [dict(name="a", d=12288, layers=96), dict(name="b", d=768, layers=12)]
    req = "depth-efficient,near-optimal-allocation"
    csv = tmp_path / "cfg.csv"
    csv.write_text("name,d,layers\na,12288,96\nb,768,12\n")
    for flag, value, arg in [("--fit", tmp_path / "pts.csv", pts),
                             ("--law", tmp_path / "law.json", law),
                             ("--law", tmp_path / "law.json", tmp_path / "law.json"),
                             ("--law", tmp_path / "nested.json", nested)]:
        want = _cli(cli, "--configs", csv, "--require", req, flag, value)
        got = attnrank.check(configs=rows, require=req, law=arg)
        assert _drop(got.to_dict()) == _drop(want), flag
        one = attnrank.check(768, layers=12, require=req, law=arg).to_dict()
        assert one.pop("config") == "d=768, layers=12"
        assert one == {k: v for k, v in got.configs[1].to_dict().items() if k != "config"}
    fitted = attnrank.check(configs=rows, require=req, law=pts)
    assert fitted.law.source == "fit" and fitted.fit.points == 3
    assert attnrank.check(configs=rows, require=req).law.source == "paper"
    # a law object is accepted back
    again = attnrank.check(configs=rows, require=req, law=fitted.law)
    assert again.configs == fitted.configs
    # no allocation condition: no law reported
    assert attnrank.check(configs=[dict(d=8, heads=1, n=4)], require="no-bottleneck",
                          law=law).law is None


def test_assert_conditions_passes_and_returns_the_result(model):
    r = attnrank.assert_conditions(1024, 8, 128, require="no-bottleneck")
    assert isinstance(r, attnrank.Check) and r.passed
    same = attnrank.assert_conditions(r)
    assert same is r
    ok = attnrank.assert_conditions(config=model("gpt2"), d=8192, n=129, head_size=64,
                                    require="no-bottleneck")
    assert isinstance(ok, attnrank.CheckReport)


def test_assert_conditions_names_every_failing_verdict(model):
    with pytest.raises(AssertionError) as info:
        attnrank.assert_conditions(768, 12, 512, layers=12,
                                   require="no-bottleneck,depth-efficient,"
                                           "near-optimal-allocation")
    text = str(info.value)
    assert text.startswith("2 conditions failed:")
    assert "d=768, heads=12, n=512, layers=12: no-bottleneck fails: head size 64 < n - 1 = " \
           "511" in text and "[proved]" in text
    assert "near-optimal-allocation fails: L = 12 vs optimal depth" in text and "[empirical]" in text
    assert "depth-efficient" not in text  # it holds
    with pytest.raises(AssertionError) as info:
        attnrank.assert_conditions(config=model("gemma2"), require="no-bottleneck")
    text = str(info.value)
    assert text.startswith("2 conditions failed:")
    for verdict in attnrank.check(config=model("gemma2"), require="no-bottleneck").configs:
        assert f"{verdict.config}: no-bottleneck fails: {verdict.conditions[0].why}" in text
    with pytest.raises(AssertionError, match=r"(?s)^1 condition failed:.*\(strict=True\)"):
        attnrank.assert_conditions(64, 2, 40, mask="sink:4+window:16", strict=True,
                                   require="no-bottleneck")
    # bad input is an error, not a failed assertion
    with pytest.raises(attnrank.ArgumentError):
        attnrank.assert_conditions(8, 1, 4, require="fast")
    with pytest.raises(attnrank.ArgumentError):
        attnrank.assert_conditions(attnrank.check(8, 1, 4, require="no-bottleneck"), 1)


# ---- hostile inputs ---------------------------------------------------------
# (keyword arguments of check, the error expected); the count is reported.

HOSTILE = [
    (dict(d=8, heads=1, n=4), attnrank.ArgumentError),                         # no require
    (dict(d=8, heads=1, n=4, require="fast"), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=4, require=()), attnrank.ArgumentError),             # no condition
    (dict(d=8, heads=1, n=4, require=3), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=4, require=[None]), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=4, require="no-bottleneck\0"), attnrank.ArgumentError),
    (dict(d=0, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, heads=0, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=0, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, n=4, require="no-bottleneck"), attnrank.ArgumentError),        # heads missing
    (dict(d=8, heads=1, n=4, head_size=0, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=10, heads=3, n=4, require="no-bottleneck"), attnrank.ArgumentError),  # 3 ∤ 10
    (dict(d=8, heads=1, n=4, require="depth-efficient"), attnrank.ArgumentError),  # no layers
    (dict(d=8, layers=0, require="depth-efficient"), attnrank.ArgumentError),
    (dict(d=-1, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=2 ** 70, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=2 ** 48 + 1, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=2 ** 64 - 1, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=float("nan"), heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=float("inf"), heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8.0, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=1j, heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d="8", heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=object(), heads=1, n=4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=-4, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=8, heads=1, n=4, layers=-1, require="depth-efficient"), attnrank.ArgumentError),
    (dict(d=64, heads=2, n=16, mask="sliding", require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=64, heads=2, n=16, mask="docs:2/3", require="no-bottleneck"), attnrank.Error),
    (dict(d=64, heads=2, n=16, mask="auto", require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=64, heads=2, n=16, mask="window:0", require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=64, heads=2, n=16, mask=np.ones((16, 16)), require="no-bottleneck"),
     attnrank.ArgumentError),
    (dict(d=64, heads=2, n=16, mask=3, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law={"intercept": 5.0}),
     attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law={"intercept": "a", "slope": 1}),
     attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient",
          law={"intercept": float("nan"), "slope": 0.05}), attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law={"intercept": 5.0, "slope": 0.0}),
     attnrank.DomainError),
    (dict(d=768, layers=12, require="near-optimal-allocation",
          law={"intercept": 5.0, "slope": 0.05, "params_coeff": -1}), attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.zeros((0, 2))),
     attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.ones(4)), attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.ones((2, 2, 2))),
     attnrank.ArgumentError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.ones((3, 4))), attnrank.SizeError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.ones((3, 2), dtype=complex)),
     attnrank.UnsupportedError),
    (dict(d=768, layers=12, require="depth-efficient", law=[["a", "b"], ["c", "d"]]),
     attnrank.UnsupportedError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.array([[1, 2], [3, np.nan]])),
     attnrank.DomainError),
    (dict(d=768, layers=12, require="depth-efficient", law=np.array([[1, 2], [1, 3.0]])),
     attnrank.Error),                                                          # one depth
    (dict(d=768, layers=12, require="depth-efficient", law="paper"), attnrank.FileError),
    (dict(config=3, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(config="a\0b", require="no-bottleneck"), attnrank.ArgumentError),
    (dict(config="/nonexistent/config.json", require="no-bottleneck"), attnrank.FileError),
    (dict(configs=[], require="no-bottleneck"), attnrank.ArgumentError),
    (dict(configs={"d": 8}, require="no-bottleneck"), attnrank.ArgumentError),
    (dict(configs="no/such/configs.csv", require="no-bottleneck"), attnrank.FileError),
    (dict(configs="bad\0path", require="no-bottleneck"), attnrank.ArgumentError),
    (dict(configs=[3], require="no-bottleneck"), attnrank.ArgumentError),
    (dict(configs=[{"colour": "red"}], require="no-bottleneck"), attnrank.ArgumentError),
    (dict(configs=[{"d": 8, "heads": 1, "n": 4, "require": "fast"}]), attnrank.ArgumentError),
    (dict(configs=[{"d": 8, "heads": 1, "n": 4}]), attnrank.ArgumentError),    # no require
    (dict(configs=[{"d": 8, "heads": 1, "n": 4}], d=4, require="no-bottleneck"),
     attnrank.ArgumentError),
    (dict(configs=[{"d": 8, "heads": 1, "n": 4, "name": 3}], require="no-bottleneck"),
     attnrank.ArgumentError),
]


@pytest.mark.parametrize("kw,error", HOSTILE)
def test_hostile_inputs_raise_and_never_crash(kw, error):
    with pytest.raises(error):
        attnrank.check(**kw)


def test_hostile_config_files(model):
    with pytest.raises(attnrank.UnsupportedError, match="unknown model family"):
        attnrank.check(config=model("mystery"), require="no-bottleneck")
    with pytest.raises(attnrank.ArgumentError, match="no hidden_size"):
        attnrank.check(config=model("no_width"), require="no-bottleneck")


def test_hostile_count():
    assert len(HOSTILE) >= 50


def test_error_messages_name_the_problem():
    with pytest.raises(attnrank.ArgumentError, match="unknown condition 'fast'"):
        attnrank.check(8, 1, 4, require="fast")
    with pytest.raises(attnrank.ArgumentError, match="heads 3 does not divide d 10"):
        attnrank.check(10, 3, 4, require="no-bottleneck")
    with pytest.raises(attnrank.ArgumentError, match=r"depth-efficient needs the depth"):
        attnrank.check(8, 1, 4, require="depth-efficient")
    with pytest.raises(attnrank.DomainError, match="no verdict under the law"):
        attnrank.check(768, layers=12, require="depth-efficient",
                       law={"intercept": 5.0, "slope": 0.0})


def test_edge_sizes():
    assert attnrank.check(1, 1, 1, require="no-bottleneck").passed
    assert attnrank.check(2, 2, 2, require="no-bottleneck").passed
    assert not attnrank.check(3, 3, 3, require="no-bottleneck").passed
    assert attnrank.check(3, 3, 3, head_size=2, require="no-bottleneck").passed
    # a head size above d: d and n bound the logit rank
    assert attnrank.check(8, 1, 4, head_size=9, require="no-bottleneck").passed
    # the allocation conditions need neither heads nor n; heads need not divide d
    c = attnrank.check(10, 3, layers=4, require="depth-efficient")
    assert c.head_size is None and c.heads == 3 and c.n is None
    assert not c.passed and "> transition depth -49.3 of width 10" in c.conditions[0].why


def test_the_gil_is_released():
    # the F_p check of a window's generic value takes a few tenths of a second
    call = lambda: attnrank.check(1024, 8, 512, mask="window:128", require="no-bottleneck")
    assert call().conditions[0].status == "verified"
    assert_gil_released(call, min_ticks=2)


def test_docstring_covers_the_cli_help(cli):
    out = subprocess.run([cli, "check", "--help-json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    flags = [o["name"] for o in json.loads(out.stdout)["options"]]
    assert "--require" in flags and "--junit" in flags
    doc = attnrank.check.__doc__
    params = list(inspect.signature(attnrank.check).parameters)
    tail = doc.split("CLI options without a keyword:")[1]
    for flag in flags:
        if flag == "--help":
            continue
        keyword = flag[2:].replace("-", "_")
        if keyword in params:
            assert f"\n    {keyword}\n" in doc or f"\n    {keyword}," in doc or \
                f", {keyword}" in doc, flag
        else:
            assert f"``{flag}" in tail, flag
    # the CLI's description of the conditions is the docstring's
    for phrase in ("one head can produce every", "(ln d - 5.039) / 0.0555",
                   "within 15% of the optimal depth", "floor(n/2)", "Gemma-2"):
        assert phrase in " ".join(doc.split()), phrase
