"""The run id's lock on an object store (`corpus/store/run_lock.py`), on fsspec's memory filesystem:
who may take it, when a holder counts as dead, and that a run whose lock was taken over cannot
commit. The S3 runs (two CLI audits with one run id at once) are in tests/test_scale.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import fsspec
import pytest

from frayproof_audit.corpus.store import run_lock
from frayproof_audit.corpus.store.layout import StoreError
from frayproof_audit.corpus.store.run_lock import Holder, RunLock, RunLocked, process_running, process_start

STAGING = "/ds/_staging"


@pytest.fixture()
def fs() -> Iterator[Any]:
    """fsspec's memory filesystem (one per process), emptied of the dataset around each test."""
    memory = fsspec.filesystem("memory")
    for _ in range(2):
        if memory.exists("/ds"):
            memory.rm("/ds", recursive=True)
        if _ == 0:
            yield memory


def lock(fs: Any, token: str) -> RunLock:
    return RunLock(fs, STAGING, "n1", token, "memory://ds")


def plant(fs: Any, holder: Holder, alive: bool = True) -> None:
    """A lock held by `holder` (another run), with its heartbeat when `alive`."""
    fs.pipe_file(f"{STAGING}/n1.lock", holder.to_bytes())
    if alive:
        fs.pipe_file(f"{STAGING}/n1.{holder.token}/_alive", b"{}")


def finished_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_the_first_run_takes_the_lock_and_a_second_live_one_is_refused_by_name(fs: Any) -> None:
    first = lock(fs, "aaaa")
    first.acquire()
    assert first.held and fs.exists(f"{STAGING}/n1.aaaa/_alive")
    assert Holder.from_bytes(fs.cat_file(f"{STAGING}/n1.lock")) == first.me
    second = lock(fs, "bbbb")
    with pytest.raises(RunLocked, match=rf"another audit holds run id 'n1' in 'memory://ds' "
                                         rf"\(pid {os.getpid()} on .*--run-id"):
        second.acquire()
    assert isinstance(RunLocked("x"), StoreError)  # the CLI's OUTPUT ERROR, exit 2
    assert not second.held
    first.release()
    assert not fs.exists(f"{STAGING}/n1.lock")
    second.acquire()  # free again
    assert second.held
    second.release()


def test_a_dead_holder_on_this_host_is_replaced_at_once(fs: Any) -> None:
    me = lock(fs, "x").me
    plant(fs, Holder("dead", me.host, finished_pid(), None, "earlier"))
    taker = lock(fs, "cccc")
    taker.acquire()
    assert taker.held
    assert Holder.from_bytes(fs.cat_file(f"{STAGING}/n1.lock")).token == "cccc"  # type: ignore[union-attr]
    taker.release()


def test_a_reused_pid_is_not_taken_for_the_holder(fs: Any) -> None:
    if process_start(os.getpid()) is None:
        pytest.skip("no /proc: process start times are not known here")
    me = lock(fs, "x").me
    # this very process, but started at another time: the holder's process is gone
    plant(fs, Holder("old", me.host, os.getpid(), "1", "earlier"))
    assert not process_running(os.getpid(), "1") and process_running(os.getpid(), me.pid_start)
    taker = lock(fs, "dddd")
    taker.acquire()
    assert taker.held
    taker.release()


def test_a_holder_on_another_host_counts_until_its_heartbeat_is_stale(
        fs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(fs, Holder("far", "another-host", 1, None, "earlier"))
    with pytest.raises(RunLocked, match="pid 1 on another-host"):
        lock(fs, "eeee").acquire()
    monkeypatch.setattr(run_lock, "STALE_S", -1.0)  # every heartbeat is now too old
    taker = lock(fs, "ffff")
    taker.acquire()
    assert taker.held
    taker.release()


def test_a_run_whose_lock_was_taken_over_cannot_commit(fs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = lock(fs, "gggg")
    slow.acquire()
    # another host judged it dead (its heartbeat looked stale) and took the lock
    monkeypatch.setattr(run_lock, "STALE_S", -1.0)
    other = lock(fs, "hhhh")
    other.me = Holder("hhhh", "another-host", 4242, None, "now")
    other.acquire()
    with pytest.raises(RunLocked, match="was taken over by pid 4242 on another-host"):
        slow.verify()
    slow.release()  # lets go without deleting the new holder's lock
    assert Holder.from_bytes(fs.cat_file(f"{STAGING}/n1.lock")).token == "hhhh"  # type: ignore[union-attr]
    other.verify()
    other.release()


def test_an_unreadable_lock_is_replaced(fs: Any) -> None:
    fs.pipe_file(f"{STAGING}/n1.lock", b"not json")
    taker = lock(fs, "iiii")
    taker.acquire()
    assert taker.held
    taker.release()


class _NoExclusiveCreate:
    """A filesystem that cannot create-if-absent, as fsspec reports it: ValueError for `xb`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        if "x" in mode:
            raise ValueError(f"mode {mode!r} not supported")
        return self.inner.open(path, mode, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_store_without_create_if_absent_runs_unlocked(fs: Any) -> None:
    unlocked = RunLock(_NoExclusiveCreate(fs), STAGING, "n1", "jjjj", "memory://ds")
    unlocked.acquire()
    assert not unlocked.supported and not unlocked.held
    unlocked.verify()  # nothing to verify
    unlocked.release()
    assert not fs.exists(f"{STAGING}/n1.lock")


@pytest.mark.parametrize("data", [b"", b"{}", b"[]", b'{"token": 1}', b"\xff"])
def test_holder_reading_never_raises(data: bytes) -> None:
    assert Holder.from_bytes(data) is None


def test_a_run_id_that_prefixes_another_leaves_that_runs_staging_and_lock_alone(fs: Any) -> None:
    from frayproof_audit.corpus.store.object_stage import ObjectStage

    longer = ObjectStage("memory://ds", "n1.b")  # holds its lock, its staging prefix is alive
    _, longer_prefix = longer.folder.split("://", 1)
    assert fs.exists(f"/{longer_prefix}/_alive") and fs.exists(f"{STAGING}/n1.b.lock")
    fs.pipe_file(f"{STAGING}/n1.0123456789ab/shard.parquet", b"left by a dead run of n1")
    shorter = ObjectStage("memory://ds", "n1")  # cleans up what dead runs of n1 left
    assert not fs.exists(f"{STAGING}/n1.0123456789ab")
    assert fs.exists(f"/{longer_prefix}/_alive") and fs.exists(f"{STAGING}/n1.b.lock")
    shorter.close()
    longer.close()
    assert not fs.exists(f"{STAGING}/n1.b.lock") and not fs.exists(f"{STAGING}/n1.lock")
