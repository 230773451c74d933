"""Every worker of a run killed at once (SIGKILL, all together), on a real local Dask cluster, on
loky and on Ray.

The shards in flight are retried, so when workers come back (a `LocalCluster` restarts the
worker of each nanny, loky and Ray start fresh ones) the run completes with every record
exactly once and the tables of a run nobody killed. When no worker comes back, the run ends
with the shards it could not audit named, and commits only the shards audited whole.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import frayproof_audit.corpus.run.audit_run as corpus_run
from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.run.audit_run import Progress
from frayproof_audit.corpus.run.summary import RunSummary
from tests import worker_faults
from tests.corpus_support import good_lines, write_contract, write_jsonl
from tests.helpers import REPO

DATA_TABLES = ("pairs", "findings", "mutants")
FILES, PER_FILE, SHARD_BYTES = 4, 8, 8000
"""Four inputs of eight records, two shards each: eight shards."""
EVERY_PAIR = sorted(f"p{100 * n + i:04d}" for n in range(FILES) for i in range(PER_FILE))


@dataclass(frozen=True)
class Corpus:
    inputs: Path
    contract: Path
    reference: Path
    """The tables of a loky run of `inputs` nobody killed."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    folder = tmp_path_factory.mktemp("corpus")
    inputs = folder / "in"
    for night in range(FILES):
        write_jsonl(inputs / f"n{night}.jsonl",
                    good_lines(PER_FILE, start=100 * night, night=night, compactor="keep_all"))
    contract = write_contract(folder)
    audit([str(inputs)], str(contract), str(folder / "reference"), jobs=2, run_id="r",
          shard_bytes=SHARD_BYTES)
    return Corpus(inputs, contract, folder / "reference")


def _rows(out: Path, table: str) -> pl.DataFrame:
    frame = read_table(out, table).collect()
    return frame.sort("pair_id", *(c for c in ("check", "operator", "message_index") if c in frame.columns),
                      nulls_last=True, maintain_order=True)


def _same_tables(out: Path, reference: Path) -> None:
    for table in DATA_TABLES:
        assert _rows(out, table).equals(_rows(reference, table)), table


def _retried_after_the_kill(record_dir: Path, killed: list[int]) -> bool:
    """Some shard was started by a killed worker and then again by another one."""
    return any(pids & set(killed) and pids - set(killed)
               for pids in worker_faults.attempts(record_dir).values())


def _kill_on_first_progress(victims: Callable[[], list[int]],
                            killed: list[int]) -> Callable[[Progress], None]:
    """A progress callback that kills every worker `victims()` names, once, as the first shard
    is done: every other worker is then busy with a shard (each takes `Logged.delay_s` longer)."""
    def kill(_: Progress) -> None:
        if not killed:
            killed.extend(worker_faults.kill_all(victims()) or [-1])

    return kill


# --- Dask: a real LocalCluster on 127.0.0.1 ---------------------------------------------------------

ALLOWED_FAILURES = 1
"""Deaths of a worker running a task that the scheduler forgives before the task is a
`KilledWorker` (Dask's default is 3: four worker restarts, seconds each, for one test)."""


@contextlib.contextmanager
def _environment_restored() -> Iterator[None]:
    """A nanny writes `distributed.nanny.pre-spawn-environ` (MALLOC_TRIM_THRESHOLD_=65536,
    OMP_NUM_THREADS=1, ...) into this process's `os.environ` before each worker it spawns and never
    takes it back: every later subprocess of the test worker would inherit it (tests/test_heap.py's
    glibc control then measured Dask's trim threshold, not glibc's)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _local_cluster() -> Any:
    distributed = pytest.importorskip("dask.distributed")
    import dask

    forgiving = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}
    with warnings.catch_warnings(), dask.config.set(forgiving):
        warnings.simplefilter("ignore")
        return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, silence_logs=logging.CRITICAL)


def _close(local: Any) -> None:
    """Close a cluster, allowing a loaded machine its time: a nanny whose worker is slow to
    exit times out its kill (`CancelledError` out of `distributed`), which is no finding of
    the test, whose assertions have run; the worker processes are the cluster's children and
    go with the interpreter."""
    import asyncio
    import contextlib

    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        local.close(timeout=60)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A LocalCluster of two single-threaded worker processes, each with a nanny that restarts
    its worker when it dies."""
    with _environment_restored():
        local = _local_cluster()
        try:
            yield local
        finally:
            _close(local)


def _two_workers(cluster: Any) -> str:
    from dask.distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
    address: str = cluster.scheduler_address
    return address


def test_both_dask_workers_killed_at_once_are_replaced_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: Any, corpus: Corpus
) -> None:
    # repro (issue 23, D6): FutureCancelledError "already forgotten" (the scattered settings died
    # with the workers), exit 123, nothing committed
    address = _two_workers(cluster)
    record_dir = tmp_path / "attempts"
    record_dir.mkdir()
    monkeypatch.setattr(corpus_run, "audit_shard", worker_faults.Logged(str(record_dir)))
    killed: list[int] = []
    summary = audit([str(corpus.inputs)], str(corpus.contract), str(tmp_path / "out"), backend="dask",
                    scheduler=address,
                    run_id="r", shard_bytes=SHARD_BYTES,
                    progress=_kill_on_first_progress(lambda: worker_faults.dask_worker_pids(address), killed))
    assert len(killed) == 2 and _retried_after_the_kill(record_dir, killed)
    assert summary.not_audited == () and summary.exit_code == 0
    assert sorted(read_table(tmp_path / "out", "pairs").collect()["pair_id"]) == EVERY_PAIR
    _same_tables(tmp_path / "out", corpus.reference)


def test_both_dask_workers_killed_through_the_cli(tmp_path: Path, cluster: Any, corpus: Corpus) -> None:
    address = _two_workers(cluster)
    record_dir = tmp_path / "attempts"
    record_dir.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "tests.worker_faults", address, str(record_dir), "audit", str(corpus.inputs),
         "--contract", str(corpus.contract), "--out", str(tmp_path / "out"), "--backend", "dask",
         "--scheduler", address, "--run-id", "r", "--shard-bytes", str(SHARD_BYTES), "--format", "json"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "INTERNAL ERROR" not in done.stderr
    (killed_line,) = [text for text in done.stderr.splitlines() if text.startswith(worker_faults.KILLED_LINE)]
    killed = [int(pid) for pid in killed_line.removeprefix(worker_faults.KILLED_LINE).split()]
    assert len(killed) == 2 and _retried_after_the_kill(record_dir, killed)
    result = json.loads(done.stdout)
    assert result["pairs"] == len(EVERY_PAIR) and result["not_audited"] == []
    _same_tables(tmp_path / "out", corpus.reference)


def _die_on_three(_shared: None, task: int) -> int:
    if task == 3:
        os._exit(9)
    time.sleep(0.05)
    return task


def test_a_dask_task_that_keeps_killing_its_workers_is_a_lost_worker_naming_it(cluster: Any) -> None:
    """Dask reruns a task whose worker died until it has killed `ALLOWED_FAILURES` + 1 of them;
    then it is `KilledWorker`: a `WorkerLost` naming the tasks in flight, the task among them."""
    from frayproof_audit.corpus.run.executor import IN_FLIGHT_PER_WORKER, Executor, WorkerLost

    executor: Executor[None, int, int] = Executor("dask", 2, _two_workers(cluster))
    with executor:
        executor.submit(_die_on_three, None, list(range(8)))
        done: list[int] = []
        with pytest.raises(WorkerLost, match="KilledWorker") as lost:
            done.extend(executor.completed())
        in_flight = set(lost.value.in_flight)
        assert 3 in in_flight and len(in_flight) <= 2 * IN_FLIGHT_PER_WORKER
        assert not in_flight & set(done)
        rest = [task for task in range(8) if task not in done and task != 3]
        executor.submit(_die_on_three, None, rest)
        done.extend(executor.completed())
    assert sorted(done) == [0, 1, 2, 4, 5, 6, 7]


def _audit_without_workers(tmp_path: Path, corpus: Corpus) -> subprocess.CompletedProcess[str]:
    """The CLI audit of the corpus on a LocalCluster whose two workers were closed for good."""
    local = _local_cluster()
    try:
        address = _two_workers(local)
        for nanny in local.workers.values():
            nanny.close_gracefully()  # "we shouldn't try to restart workers if they go away"
        record_dir = tmp_path / "attempts"
        record_dir.mkdir()
        return subprocess.run(
            [sys.executable, "-m", "tests.worker_faults", address, str(record_dir), "--worker-wait", "2",
             "audit", str(corpus.inputs), "--contract", str(corpus.contract), "--out", str(tmp_path / "out"),
             "--backend", "dask", "--scheduler", address, "--run-id", "r", "--shard-bytes",
             str(SHARD_BYTES), "--format", "json"],
            cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    finally:
        _close(local)


def test_dask_workers_that_never_come_back_name_the_shards_not_audited(
    tmp_path: Path, corpus: Corpus
) -> None:
    """Both workers killed once their nannies were told not to restart them: the cluster has no
    worker left. After waiting `WORKER_WAIT_S` (2 s here) for one, the run names every shard it
    could not audit and commits the shards audited whole (exit 1: shards not audited)."""
    with _environment_restored():
        done = _audit_without_workers(tmp_path, corpus)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "INTERNAL ERROR" not in done.stderr
    result = json.loads(done.stdout)
    missing = result["not_audited"]
    assert missing and result["gate_failures"] == [f"{len(missing)} shard(s) could not be audited"]
    assert all("no Dask worker" in item["reason"] for item in missing)
    assert result["pairs"] + sum(item["records"] for item in missing) == len(EVERY_PAIR)
    pairs = read_table(tmp_path / "out", "pairs").collect()
    assert pairs.height == result["pairs"] == pairs["pair_id"].n_unique() > 0
    assert set(pairs["pair_id"]) < set(EVERY_PAIR)
    (run,) = read_table(tmp_path / "out", "runs").collect().to_dicts()
    assert run["not_audited_shards"] == [item["shard"] for item in missing]


# --- loky and Ray: every worker of the pool killed at once ------------------------------------------

def _kill_when_busy(record_dir: Path, killed: list[int]) -> threading.Thread:
    """A thread that kills every worker that has started a shard, once a third shard has
    started: one is done by then and two are in flight (each takes `Logged.delay_s` longer).
    Ray runs shards in rounds, so the run's progress callback, called when a round is over,
    would find every worker idle."""
    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = worker_faults.attempts(record_dir)
            if len(started) >= 3:
                killed.extend(worker_faults.kill_all({pid for pids in started.values() for pid in pids}))
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _all_killed_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: Corpus, backend: str,
                           **options: Any) -> RunSummary:
    """A run of the corpus whose workers all die at once while two shards are in flight."""
    record_dir = tmp_path / "attempts"
    record_dir.mkdir()
    monkeypatch.setattr(corpus_run, "audit_shard", worker_faults.Logged(str(record_dir)))
    killed: list[int] = []
    watcher = _kill_when_busy(record_dir, killed)
    summary = audit([str(corpus.inputs)], str(corpus.contract), str(tmp_path / "out"), backend=backend,
                    run_id="r", shard_bytes=SHARD_BYTES, **options)
    watcher.join()
    assert len(killed) == 2 and _retried_after_the_kill(record_dir, killed)
    return summary


def test_every_loky_worker_killed_at_once_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: Corpus
) -> None:
    summary = _all_killed_in_process(tmp_path, monkeypatch, corpus, "loky", jobs=2)
    assert summary.not_audited == () and summary.exit_code == 0
    _same_tables(tmp_path / "out", corpus.reference)


def _ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _ray_installed(), reason="the ray extra is not installed")
def test_every_ray_worker_killed_at_once_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: Corpus
) -> None:
    summary = _all_killed_in_process(tmp_path, monkeypatch, corpus, "ray", jobs=2, scheduler="local")
    assert summary.not_audited == () and summary.exit_code == 0
    _same_tables(tmp_path / "out", corpus.reference)
