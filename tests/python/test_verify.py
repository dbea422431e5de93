"""attnrank.verify: the registry of theory checks run from Python, equal to
``attnrank verify --json`` (fields, order and values), its verdicts
consistent with each check's relation, and its argument errors."""

import math

import pytest

import attnrank
from conftest import assert_gil_released
from test_schema import assert_fields_are_keys
from theory_cli import run_json

SEED_ABOVE_INT64 = 2**64 - 1


def _holds(c):
    """The check's relation, recomputed from its numbers."""
    if c.error is not None or math.isnan(c.measured):
        return False
    if c.relation == "==":
        return abs(c.measured - c.expected) <= c.tolerance
    if c.relation == "<=":
        return c.measured <= c.expected + c.tolerance
    assert c.relation == ">="
    return c.measured >= c.expected - c.tolerance


@pytest.mark.parametrize("suite,seed", [("core", 0), ("softmax-bottleneck", 3),
                                        ("core", SEED_ABOVE_INT64)])
def test_verify_equals_the_cli(cli, suite, seed):
    want = run_json(cli, "verify", "--suite", suite, "--seed", seed)
    got = attnrank.verify(suite, seed=seed)
    assert got.to_dict() == want
    assert_fields_are_keys(attnrank.VerifyReport, want)
    assert got.seed == seed and got.suite == suite and got.full is False


def test_every_check_and_its_verdict(cli):
    report = attnrank.verify()
    listed = run_json(cli, "verify", "--seed", 0)["checks"]
    assert [c.name for c in report.checks] == [c["name"] for c in listed]
    assert report.passed + report.failed == len(report.checks) > 0
    assert report.failed == sum(not c.passed for c in report.checks)
    assert bool(report) == (report.failed == 0)
    for c in report.checks:
        assert c.passed == _holds(c), c.name
        assert c.seconds is None and "seconds" not in c.to_dict()
    suites = {c.suite for c in report.checks}
    for s in suites:  # a suite is exactly its checks, in registry order
        part = attnrank.verify(s)
        assert [c.name for c in part.checks] == [c.name for c in report.checks if c.suite == s]


def test_timings():
    report = attnrank.verify("core", timings=True)
    for c in report.checks:
        assert c.seconds >= 0.0 and "seconds" in c.to_dict()


def test_gil_released():
    assert_gil_released(lambda: attnrank.verify("core"))


@pytest.mark.parametrize("kw,match", [
    ({"suite": "nope"}, "unknown suite 'nope'"),
    ({"suite": 3}, "suite must be a str"),
    ({"suite": "core", "seed": -1}, "seed"),
    ({"suite": "core", "seed": 2**64}, "seed"),
    ({"suite": "core", "full": "yes"}, "full must be True or False"),
    ({"suite": "core", "timings": 1}, "timings must be True or False"),
])
def test_argument_errors(kw, match):
    with pytest.raises(attnrank.ArgumentError, match=match):
        attnrank.verify(**kw)
