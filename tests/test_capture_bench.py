"""benchmarks/bench_capture.py runs end to end in its quick form (no speed is asserted) and is
registered with `python -m benchmarks`."""

from __future__ import annotations

import pytest

from benchmarks import bench_capture
from benchmarks.__main__ import BENCHMARKS


def test_bench_capture_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_capture.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "record median" in out and "every line whole" in out
    assert out.count("  target ") == 3


def test_bench_capture_is_one_of_the_benchmarks() -> None:
    assert "bench_capture" in BENCHMARKS
