"""pytest set-up for the Python package's tests (run by `meson test`).

The tests import attnrank from the build tree (PYTHONPATH set by
tests/python/meson.build) and find the CLI through $ATTNRANK_CLI.  A file
whose tests were all skipped (torch missing) exits 77, which meson reports as
SKIP rather than as a pass; pytest's own exit 5 (nothing collected) stays a
failure unless something was skipped.
"""

import os

import pytest

_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _outcomes[report.outcome] = _outcomes.get(report.outcome, 0) + 1


def pytest_collectreport(report):
    if report.outcome == "skipped":  # pytest.importorskip at module level
        _outcomes["skipped"] += 1
    elif report.outcome == "failed":
        _outcomes["failed"] += 1


def pytest_sessionfinish(session, exitstatus):
    # 5 = nothing collected, also when the module itself was skipped.
    if (exitstatus in (0, 5) and _outcomes["skipped"] > 0 and _outcomes["passed"] == 0
            and _outcomes["failed"] == 0 and os.environ.get("AR_PYTEST_SKIP_77")):
        session.exitstatus = 77


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("ATTNRANK_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("ATTNRANK_CLI does not name the built attnrank binary")
    return path


def assert_gil_released(call, min_ticks=2):
    """Run call() while another thread ticks about once a millisecond when
    it can take the GIL: a call that held the GIL throughout would leave it
    (nearly) no ticks."""
    import threading
    import time

    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    t0 = time.perf_counter()
    try:
        call()
    finally:
        elapsed = time.perf_counter() - t0
        done.set()
        counter.join()
    assert len(ticks) >= max(min_ticks, int(elapsed * 1000) // 10), (len(ticks), elapsed)


# Text fields of the records that may name an option: the library writes a
# token, the CLI's JSON spells it --mask, the Python record mask= (docs/python.md).
OPTION_TEXT_KEYS = ("why", "mask_reason")


def python_spelling(value):
    """The CLI's JSON with the options named in its text fields spelled as the
    Python records spell them (--mask -> mask=, the switch --strict ->
    strict=True), for comparing to_dict() with the CLI."""
    import re

    def spell(text):
        def one(m):
            name = m.group(1).replace("-", "_")
            return f"{name}=True" if name == "strict" else f"{name}="
        return re.sub(r"--([a-z][a-z0-9-]*)", one, text)

    if isinstance(value, dict):
        return {k: spell(v) if k in OPTION_TEXT_KEYS and isinstance(v, str)
                else python_spelling(v) for k, v in value.items()}
    if isinstance(value, list):
        return [python_spelling(v) for v in value]
    return value
