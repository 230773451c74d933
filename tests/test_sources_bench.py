"""benchmarks/bench_sources.py runs end to end in its quick form (no speed is asserted): the
session files it writes hold the compactions it says, each derived with its before and after."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_sources
from benchmarks.__main__ import BENCHMARKS


def test_bench_sources_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    bench_sources.main(["--quick", "--mb", "0.5"])
    out = capsys.readouterr().out
    assert out.count("compactions: derive") == 6
    assert "target claude-code: time per MB" in out and "target codex: time per MB" in out


@pytest.mark.parametrize("source", sorted(bench_sources.WRITERS))
def test_the_written_file_derives_every_compaction(source: str, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    bench_sources.WRITERS[source](path, 0.2, 4, 1)
    assert bench_sources.derive_all(source, path) == 4
    assert bench_sources.bare(path) == len(path.read_bytes().splitlines())


def test_bench_sources_is_one_of_the_benchmarks() -> None:
    assert "bench_sources" in BENCHMARKS
