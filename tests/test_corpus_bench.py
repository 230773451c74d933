"""benchmarks/bench_audit.py runs: one real measured audit on a tiny generated corpus."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from benchmarks import bench_audit, corpus


def test_bench_audit_pieces_run(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    assert corpus.write_jsonl(path, n_pairs=4, seed=1, bad_records=1) == 5
    contract = corpus.write_contract(tmp_path / "contract.yaml")
    parsed = bench_audit.orjson_rate(path, 1)
    assert parsed.pairs == 5 and parsed.seconds > 0
    measured = bench_audit.audit_run("check-only", path, contract, 1, False, tmp_path, 1)
    assert measured.pairs == 5
    assert measured.peak_rss is not None and measured.peak_rss > 10 * 2**20
    assert measured.cpu_s is not None and measured.cpu_s > 0 and measured.jobs == 1
    assert "pairs/s" in measured.line()
    doubled = bench_audit.repeated(path, 2)
    assert doubled.stat().st_size == 2 * path.stat().st_size


def test_pool_start_cpu_counts_every_worker_started() -> None:
    # Two fresh interpreters with joblib, pyarrow and the engine cannot start on less than a
    # tenth of a second of CPU; a figure under that would mean the workers were not counted.
    assert bench_audit.pool_start_cpu(2, 1) > 0.1


def test_the_benchmarks_compile_the_package_first() -> None:
    from benchmarks import compiled

    source = compiled.PACKAGE / "corpus" / "run" / "heap.py"
    os.utime(source)  # its bytecode is now stale, whoever wrote it
    assert compiled.ensure_compiled()
    cached = importlib.util.cache_from_source(str(source))
    assert Path(cached).stat().st_mtime >= source.stat().st_mtime
