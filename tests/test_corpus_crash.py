"""Failure handling: a run killed with SIGKILL, a worker that dies once, a worker that always dies.

The faults come from `tests/fault_entry.py`: production code has no hooks for them.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import frayproof_audit.corpus.run.audit_run as corpus_run
from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.store.layout import STAGING
from tests.corpus_support import good_lines, write_contract, write_jsonl
from tests.fault_entry import PAUSE_LINE, CrashOn
from tests.helpers import REPO

DATA_TABLES = ("pairs", "findings", "mutants")


def _start_and_kill(args: list[str], stage: str) -> None:
    """Run the CLI in a subprocess that pauses at `stage`, wait for the pause, then SIGKILL it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fault_entry", stage, *args],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stderr is not None
        seen = []
        for text in process.stderr:
            if f"{PAUSE_LINE}{stage}" in text:
                break
            seen.append(text)
        else:
            pytest.fail(f"the audit ended before pausing at {stage}: exit {process.wait()}\n{''.join(seen)}")
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def _runs(out: Path) -> list[str]:
    return sorted(read_table(out, "runs").collect()["run_id"])


def _rows(out: Path) -> dict[str, int]:
    return {t: read_table(out, t).collect().height for t in DATA_TABLES}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    contract = write_contract(tmp_path)
    base = write_jsonl(tmp_path / "base.jsonl", good_lines(4))
    night = write_jsonl(tmp_path / "night.jsonl", good_lines(20, start=10, night=1))
    return tmp_path / "out", contract, base, night


@pytest.mark.parametrize("stage", ["shards", "commit"])
def test_sigkill_leaves_no_partial_run_and_a_rerun_completes(
    setup: tuple[Path, Path, Path, Path], stage: str
) -> None:
    out, contract, base, night = setup
    audit([str(base)], str(contract), str(out), jobs=1, run_id="base")
    before = _rows(out)
    args = ["audit", str(night), "--contract", str(contract), "--out", str(out), "--run-id", "night",
            "--jobs", "1", "--shard-bytes", "3000", "-q"]
    _start_and_kill(args, stage)
    if stage == "commit":  # files were moved into the dataset, the runs row never written
        assert list(out.rglob("part-night-*.parquet"))
    assert _runs(out) == ["base"]
    assert _rows(out) == before
    summary = audit([str(night)], str(contract), str(out), jobs=1, run_id="night", shard_bytes=3000)
    assert summary.pairs == 20
    assert _runs(out) == ["base", "night"]
    assert read_table(out, "pairs").filter(pl.col("run_id") == "night").collect().height == 20
    assert not any((out / STAGING).iterdir())


def test_sigkill_while_replacing_a_run_leaves_it_absent_never_mixed(
    setup: tuple[Path, Path, Path, Path],
) -> None:
    out, contract, base, night = setup
    audit([str(base)], str(contract), str(out), jobs=1, run_id="night")
    args = ["audit", str(night), "--contract", str(contract), "--out", str(out), "--run-id", "night",
            "--jobs", "1", "-q"]
    _start_and_kill(args, "commit")
    assert _runs(out) == []
    assert _rows(out) == {t: 0 for t in DATA_TABLES}
    audit([str(night)], str(contract), str(out), jobs=1, run_id="night")
    pairs = read_table(out, "pairs").collect()
    assert pairs.height == 20 and set(pairs["source"]) == {str(night)}


def _crash_corpus(tmp_path: Path) -> tuple[Path, Path]:
    write_jsonl(tmp_path / "in" / "calm.jsonl", good_lines(10))
    write_jsonl(tmp_path / "in" / "crashy.jsonl", good_lines(6, start=50))
    return tmp_path / "in", write_contract(tmp_path)


def _crash_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, once: bool) -> Path:
    """Make every worker die on the shards of crashy.jsonl; returns where the deaths are logged."""
    deaths = tmp_path / "deaths"
    deaths.mkdir()
    monkeypatch.setattr(corpus_run, "audit_shard", CrashOn("crashy", str(deaths), once=once))
    return deaths


def test_a_worker_that_dies_once_is_retried_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs, contract = _crash_corpus(tmp_path)
    clean = audit([str(inputs)], str(contract), str(tmp_path / "clean"), jobs=1, run_id="r",
                  shard_bytes=4000)
    deaths = _crash_on(tmp_path, monkeypatch, once=True)
    summary = audit([str(inputs)], str(contract), str(tmp_path / "out"), jobs=2, run_id="r",
                    shard_bytes=4000)
    died = sorted(p.name for p in deaths.iterdir())
    assert died and all(name.endswith(".1") for name in died)  # first attempts died, retries did not
    assert summary.not_audited == ()
    assert summary.pairs == clean.pairs == 16
    for table in DATA_TABLES:
        assert read_table(tmp_path / "out", table).collect().equals(
            read_table(tmp_path / "clean", table).collect()
        )


def test_a_worker_that_always_dies_is_reported_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs, contract = _crash_corpus(tmp_path)
    deaths = _crash_on(tmp_path, monkeypatch, once=False)
    out = tmp_path / "out"
    summary = audit([str(inputs)], str(contract), str(out), jobs=2, run_id="r", shard_bytes=4000,
                    fail_on=("none",))
    crashy = str(inputs / "crashy.jsonl")
    assert summary.pairs == 10
    assert summary.not_audited and all(item.shard.startswith(crashy) for item in summary.not_audited)
    assert len(summary.not_audited) == 2
    assert sum(item.records or 0 for item in summary.not_audited) == 6
    assert all("died twice" in item.reason for item in summary.not_audited)
    assert {p.name.split(".")[1] for p in deaths.iterdir()} == {"1", "2"}
    assert "NOT AUDITED" in summary.to_text() and crashy in summary.to_text()
    assert summary.exit_code == 0  # --fail-on none
    (run,) = read_table(out, "runs").collect().to_dicts()
    assert run["not_audited_shards"] == [item.shard for item in summary.not_audited]
    assert run["not_audited_records"] == 6
    assert set(read_table(out, "pairs").collect()["source"]) == {str(inputs / "calm.jsonl")}
    failing = replace(summary, fail_on=("input-errors",))
    assert failing.exit_code == 1
    assert failing.gate_failures == ("2 shard(s) could not be audited",)


def test_a_pool_found_broken_when_the_first_tasks_are_handed_out_is_a_lost_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """loky marks a pool broken on its own thread a moment after a worker dies, so the next
    hand-out can be refused with `TerminatedWorkerError` before any task ran. That must be a
    lost worker (every pending shard retried alone), never an error that ends the run."""
    import joblib
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    inputs, contract = _crash_corpus(tmp_path)
    clean = audit([str(inputs)], str(contract), str(tmp_path / "clean"), jobs=1, run_id="r",
                  shard_bytes=4000)
    call = joblib.Parallel.__call__
    refused: list[bool] = []

    def refuse_the_first_generator(self: Any, iterable: Any) -> Any:
        if self.return_generator and not refused:
            refused.append(True)
            raise TerminatedWorkerError("A worker process managed by the executor was terminated")
        return call(self, iterable)

    monkeypatch.setattr(joblib.Parallel, "__call__", refuse_the_first_generator)
    summary = audit([str(inputs)], str(contract), str(tmp_path / "out"), jobs=2, run_id="r",
                    shard_bytes=4000)
    assert refused == [True]
    assert summary.not_audited == ()
    assert summary.pairs == clean.pairs == 16
    for table in DATA_TABLES:
        assert read_table(tmp_path / "out", table).collect().equals(
            read_table(tmp_path / "clean", table).collect()
        )
