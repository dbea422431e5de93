"""attnrank's core bindings: version, errors, rank_metrics against the CLI."""

import gc
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import attnrank
from attnrank import _core, _errors

# ---- version ------------------------------------------------------------------


def test_version_matches_the_c_library(cli):
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    assert attnrank.version() in out.stdout.split()
    assert attnrank.__version__ == attnrank.version()


def test_import_does_not_import_torch():
    code = ("import sys, attnrank; attnrank.rank_metrics([1.0]);"
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    subprocess.run([sys.executable, "-P", "-c", code], check=True)


# ---- status codes and exceptions -----------------------------------------------

EXPECTED_CLASS = {
    "AR_EINVAL": (attnrank.ArgumentError, ValueError),
    "AR_ENOMEM": (attnrank.OutOfMemoryError, MemoryError),
    "AR_ENONFINITE": (attnrank.NonFiniteError, ValueError),
    "AR_ENOCONV": (attnrank.ConvergenceError, RuntimeError),
    "AR_EIO": (attnrank.FileError, OSError),
    "AR_EFORMAT": (attnrank.FormatError, ValueError),
    "AR_EUNSUPPORTED": (attnrank.UnsupportedError, TypeError),
    "AR_EDOMAIN": (attnrank.DomainError, ValueError),
    "AR_ELAPACK": (attnrank.InternalError, RuntimeError),
    "AR_ESIZE": (attnrank.SizeError, ValueError),
}


def test_status_names_match_the_header():
    assert _core.STATUS_CODES == {name: i for i, name in enumerate(_errors.STATUS_NAMES)}
    assert _core.NSTATUS == len(_errors.STATUS_NAMES)
    assert set(EXPECTED_CLASS) == set(_errors.STATUS_NAMES[1:])


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASS))
def test_every_status_raises_its_class_with_the_c_message(name):
    status = _core.STATUS_CODES[name]
    cls, builtin = EXPECTED_CLASS[name]
    with pytest.raises(cls) as info:
        _core.raise_status(status, "some_function", "a detail")
    e = info.value
    assert isinstance(e, attnrank.Error) and isinstance(e, builtin)
    assert e.status == status and e.status_name == name
    assert e.message == attnrank.strerror(status) != "unknown status"
    assert e.function == "some_function" and e.detail == "a detail"
    assert str(e) == f"some_function: {e.message} (a detail)"


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASS))
def test_ar_error_message_reaches_the_exception(name):
    # ar_error_set fills an ar_error as every C function reports; the helper
    # must carry its text, not the generic ar_strerror.
    status = _core.STATUS_CODES[name]
    with pytest.raises(EXPECTED_CLASS[name][0]) as info:
        _core._error_roundtrip(status, "file.npy: line 3: bad value \u00e9")
    assert info.value.message == "file.npy: line 3: bad value \u00e9"
    assert info.value.function == "ar_error_set"


def test_unknown_status_is_internal_and_ok_is_not_an_error():
    with pytest.raises(attnrank.InternalError) as info:
        _core.raise_status(999, "f")
    assert info.value.message == "unknown status"
    with pytest.raises(ValueError):
        _core.raise_status(0, "f")
    assert _core._error_roundtrip(0, "fine") is None


def test_errors_pickle():
    import pickle

    e = attnrank.NonFiniteError(3, attnrank.strerror(3), "f", "x[2] = nan")
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is type(e) and str(e2) == str(e) and e2.status == 3


# ---- rank_metrics against `attnrank spectrum --json` ---------------------------

def _cli_items(cli, path, *flags):
    out = subprocess.run([cli, "spectrum", str(path), "--json", *flags],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["matrices"]


def _matrix(rng, m, n, rank):
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) * 2.385


CASES = [
    ("float64", (7, 5, 3), []),
    ("float64", (6, 9, 6), ["--energy", "0.5"]),
    ("float64", (8, 8, 4), ["--rtol", "1e-3", "--atol", "0.25"]),
    ("float32", (10, 6, 2), []),
    ("float64", (5, 5, 5), ["--precision", "float16"]),
    ("float32", (10, 6, 2), ["--rtol", "1e-6"]),
]


@pytest.mark.parametrize("dtype,shape,flags", CASES)
def test_rank_metrics_equal_the_cli_json(cli, tmp_path, dtype, shape, flags):
    m, n, r = shape
    a = _matrix(np.random.default_rng(m * 31 + n), m, n, r).astype(dtype)
    path = tmp_path / "a.npy"
    np.save(path, a)
    (item,) = _cli_items(cli, path, *flags)
    opts = dict(zip(flags[::2], flags[1::2]))
    if item["tolerance"].get("rule") == "storage":
        # The storage rule sees the matrix, not only its spectrum.
        assert dtype == "float32" or "--precision" in opts
        got = attnrank.spectrum(np.load(path), precision=opts.get("--precision"))
        expected = {k: v for k, v in item.items()
                    if k not in ("label", "index", "singular_values")}
        assert {k: v for k, v in got.to_dict().items()
                if k not in ("index", "singular_values")} == expected
        return
    got = attnrank.rank_metrics(
        np.array(item["singular_values"]), (item["rows"], item["cols"]),
        rtol=float(opts["--rtol"]) if "--rtol" in opts else None,
        atol=float(opts.get("--atol", 0)),
        precision=item["tolerance"]["precision"],
        energy_fraction=float(opts.get("--energy", 0.99)))
    expected = {k: v for k, v in item.items()
                if k not in ("label", "index", "singular_values")}
    assert got.to_dict() == expected
    assert list(got.to_dict()) == list(expected)  # the CLI's key order
    assert got.tolerance.precision == ("float32" if dtype == "float32" and not flags
                                       else item["tolerance"]["precision"])


def test_rank_metrics_of_a_stack_equal_the_cli(cli, tmp_path):
    a = np.random.default_rng(7).random((2, 3, 6, 6))  # batch x heads x n x n
    a /= a.sum(axis=-1, keepdims=True)
    path = tmp_path / "p.npy"
    np.save(path, a)
    items = _cli_items(cli, path)
    assert len(items) == 6
    for item in items:
        sv = np.linalg.svd(a[tuple(item["index"])], compute_uv=False)
        got = attnrank.rank_metrics(np.array(item["singular_values"]), (6, 6))
        assert got.to_dict() == {k: v for k, v in item.items()
                                 if k not in ("label", "index", "singular_values")}
        assert got.rank == attnrank.rank_metrics(sv, (6, 6)).rank


def test_rank_metrics_values():
    m = attnrank.rank_metrics([3.5, 2.25, 1e-3, 0.0], (4, 6))
    assert m.rows == 4 and m.cols == 6 and m.rank == 3
    assert m.tolerance.rtol == 6 * np.finfo(np.float64).eps
    assert m.tolerance.threshold == m.tolerance.rtol * 3.5
    assert m.tolerance.atol == 0.0 and m.tolerance.precision == "float64"
    s = np.array([3.5, 2.25, 1e-3, 0.0])
    assert m.stable_rank == pytest.approx((s ** 2).sum() / 3.5 ** 2, rel=1e-15)
    assert m.participation_ratio == pytest.approx((s ** 2).sum() ** 2 / (s ** 4).sum(),
                                                  rel=1e-14)
    assert m.nuclear_rank == pytest.approx(s.sum() ** 2 / (s ** 2).sum(), rel=1e-14)
    p = s[:3] / s.sum()
    assert m.roy_vetterli_rank == pytest.approx(np.exp(-(p * np.log(p)).sum()), rel=1e-14)
    assert m.energy_rank == 2 and m.energy_fraction == 0.99
    assert attnrank.rank_metrics(s, precision="float32").tolerance.rtol == 4 * 2.0 ** -23
    assert attnrank.rank_metrics(s, precision=np.float16).tolerance.precision == "float16"
    assert attnrank.rank_metrics(s, precision="bf16").tolerance.rtol == 4 * 2.0 ** -7
    assert attnrank.rank_metrics(s, rtol=0.0).rank == 3
    assert attnrank.rank_metrics(s, atol=2.3).rank == 1
    assert attnrank.rank_metrics(s, energy_fraction=1.0).energy_rank == 3
    # rank 3 at t: the margin min(s_3 / t, t / s_4) with s_4 = 0 left out
    assert m.rank_margin == pytest.approx(1e-3 / m.tolerance.threshold, rel=1e-15)
    m2 = attnrank.rank_metrics([4.0, 2.0, 1e-3], atol=1e-2)
    assert m2.rank == 2 and m2.rank_margin == pytest.approx(10.0, rel=1e-15)
    assert m2.to_dict()["rank_margin"] == m2.rank_margin
    with pytest.raises(Exception):
        m.rank = 4  # frozen


def test_any_layout_and_float_dtype():
    base = np.array([9.0, 7.5, 7.5, 2.0, 0.5, 0.0, 0.0, 0.0])
    want = attnrank.rank_metrics(base).to_dict()
    strided = np.zeros(16)
    strided[::2] = base
    assert attnrank.rank_metrics(strided[::2]).to_dict() == want
    reversed_view = base[::-1].copy()[::-1]
    assert attnrank.rank_metrics(reversed_view).to_dict() == want
    ro = base.copy()
    ro.flags.writeable = False
    assert attnrank.rank_metrics(ro).to_dict() == want
    assert attnrank.rank_metrics(list(base)).to_dict() == want
    assert attnrank.rank_metrics(tuple(int(x) for x in [9, 7, 2])).rank == 3
    for dt in (np.float16, np.float32, np.longdouble):
        got = attnrank.rank_metrics(base.astype(dt))
        assert got.rows == 8 and got.rank == 5
    for dt in (np.int32, np.uint8, np.int64):  # 7.5 -> 7, 0.5 -> 0
        assert attnrank.rank_metrics(base.astype(dt)).rank == 4
    col = np.asfortranarray(np.c_[base, base])[:, 1]  # a column of an F-order matrix
    assert attnrank.rank_metrics(col).to_dict() == want


def test_empty_and_zero_spectra():
    for s in ([], np.zeros(0), np.zeros(5)):
        m = attnrank.rank_metrics(s, (3, 4))
        assert m.rank == 0 and m.energy_rank == 0
        assert m.stable_rank == m.roy_vetterli_rank == m.participation_ratio == 0.0
        assert m.nuclear_rank == 0.0
        # no singular value limits the threshold: +inf, null in the JSON
        assert m.rank_margin == float("inf") and m.to_dict()["rank_margin"] is None
    assert attnrank.rank_metrics([]).rows == 0


# ---- error paths ----------------------------------------------------------------

def _raises(cls, builtin, fn, *args, **kw):
    with pytest.raises(cls) as info:
        fn(*args, **kw)
    e = info.value
    assert isinstance(e, attnrank.Error) and isinstance(e, builtin)
    assert e.message == attnrank.strerror(e.status)
    return e


def test_c_error_paths_raise_with_the_c_message():
    rm = attnrank.rank_metrics
    e = _raises(attnrank.ArgumentError, ValueError, rm, [1.0, 2.0])
    assert e.function == "ar_rank_metrics_compute" and "non-increasing" in e.detail
    e = _raises(attnrank.ArgumentError, ValueError, rm, [2.0, -1.0])
    assert e.status_name == "AR_EINVAL" and ">= 0" in e.detail
    e = _raises(attnrank.NonFiniteError, ValueError, rm, [np.nan, 1.0])
    assert e.status_name == "AR_ENONFINITE" and "nan" in e.detail
    e = _raises(attnrank.NonFiniteError, ValueError, rm, [np.inf])
    assert "inf" in e.detail
    for f in (0.0, -0.5, 1.5, np.nan):
        e = _raises(attnrank.ArgumentError, ValueError, rm, [1.0], energy_fraction=f)
        assert "energy_fraction" in e.detail
    e = _raises(attnrank.ArgumentError, ValueError, rm, [1.0], rtol=np.nan)
    assert "rtol" in e.detail
    for a in (-1.0, np.nan, np.inf):
        e = _raises(attnrank.ArgumentError, ValueError, rm, [1.0], atol=a)
        assert "atol" in e.detail
    e = _raises(attnrank.ArgumentError, ValueError, rm, [1.0], precision="float8")
    assert e.function == "ar_precision_parse" and "float8" in e.detail


def test_binding_checks_raise_attnrank_errors():
    rm = attnrank.rank_metrics
    for bad in (np.array([1 + 2j]), np.array([1.0, None], dtype=object), ["a", "b"],
                np.array([True, False]), np.zeros(2, dtype="M8[s]"),
                np.zeros(1, dtype=[("x", "f8")]), {"a": 1}, object()):
        e = _raises(attnrank.UnsupportedError, TypeError, rm, bad)
        assert e.status_name == "AR_EUNSUPPORTED" and e.detail
    for bad in (np.eye(3), 2.0, np.zeros((1, 1, 1))):
        e = _raises(attnrank.ArgumentError, ValueError, rm, bad)
        assert "1-D" in e.detail
    _raises(attnrank.UnsupportedError, TypeError, rm, [[1.0], [2.0, 3.0]])  # ragged
    for shape in ((3,), (1, 2, 3), "ab", 5, (-1, 2), (2, 2 ** 64), (2.5, 3), (None, 1)):
        _raises(attnrank.ArgumentError, ValueError, rm, [1.0], shape)
    for name in ("rtol", "atol", "energy_fraction"):
        _raises(attnrank.ArgumentError, ValueError, rm, [1.0], **{name: "x"})
    _raises(attnrank.ArgumentError, ValueError, rm, [1.0], rtol=-1e-3)
    _raises(attnrank.ArgumentError, ValueError, rm, [1.0], precision=object())
    _raises(attnrank.ArgumentError, ValueError, rm, [1.0], precision="float64\0x")
    _raises(attnrank.ArgumentError, ValueError, rm, [1.0], precision=np.int32)


def test_hostile_inputs_never_crash():
    rm = attnrank.rank_metrics
    # 2^50 float64 values cannot be copied: a MemoryError, not a crash.
    huge = np.broadcast_to(np.float32(1.0), (2 ** 50,))
    e = _raises(attnrank.OutOfMemoryError, MemoryError, rm, huge)
    assert e.status_name == "AR_ENOMEM"
    # A huge shape is only a number.
    m = rm([1.0], (2 ** 63, 2 ** 64 - 1))
    assert m.cols == 2 ** 64 - 1 and m.tolerance.rtol == 2.0 ** 64 * 2.0 ** -52
    assert m.rank == 0 and m.tolerance.threshold == m.tolerance.rtol
    # A long spectrum computed in C without the GIL.
    s = np.sort(np.random.default_rng(3).random(200_000))[::-1]
    assert rm(s).rank == 200_000
    # Extremes of the double range.
    assert rm([np.finfo(float).max, np.finfo(float).tiny]).rank == 1
    assert rm([5e-324, 5e-324]).rank == 2
    assert rm([1e308] * 3).stable_rank == pytest.approx(3.0)
    for bad in ([np.nan] * 3, [-np.inf], [1.0, np.nan, 0.5]):
        _raises(attnrank.NonFiniteError, ValueError, rm, bad)
    gc.collect()


def test_threads_share_the_extension():
    s = np.sort(np.random.default_rng(5).random(50_000))[::-1]
    want = attnrank.rank_metrics(s).to_dict()
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(attnrank.rank_metrics(s).to_dict() == want)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 80 and all(results)
