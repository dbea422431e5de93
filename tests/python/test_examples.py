"""python/examples/tiny_decoder.py, the session of docs/python.md, runs from
the build tree and writes what it says (a few training steps here)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
from attnrank._report import AttentionReport  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "python" / "examples" / "tiny_decoder.py"


def test_tiny_decoder_session(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT), "--steps", "20", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "8 heads in 2 calls" in run.stdout and "step   19" in run.stderr
    report = AttentionReport.from_csv(tmp_path / "report.csv")
    assert len(report) == 2 * 4 * 2  # layers x heads x batch
    assert {r.mask for r in report.rows} == {"causal"} and {r.n for r in report.rows} == {24}
    assert {r.head_size for r in report.rows} == {16}
    figure = tmp_path / "heads.png"
    assert figure.exists() or (tmp_path / "heads.csv").exists()
