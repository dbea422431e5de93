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
