"""benchmarks/bench_scale.py runs: its pieces on a tiny generated corpus (no speed is asserted)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench_scale
from sessiongen import realistic


def test_bench_scale_pieces_run(tmp_path: Path) -> None:
    path = tmp_path / "tiny.jsonl"
    realistic.write_jsonl(path, target_bytes=60_000, seed=1, nights=1, bad_records=1)
    contract = realistic.write_contract(tmp_path / "contract.yaml")
    measured = bench_scale.audit_run("loky", path, contract, ["--jobs", "1", "--no-mutate"], tmp_path)
    assert measured.pairs > 0 and measured.seconds > 0
    assert bench_scale.task_overhead("threading", 2) > 0


def test_bench_scale_is_one_of_the_benchmarks() -> None:
    from benchmarks.__main__ import BENCHMARKS

    assert "bench_scale" in BENCHMARKS
