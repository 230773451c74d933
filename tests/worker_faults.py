"""Every worker of a run lost at once, injected from the test side (production code has no hook).

Workers get `Logged` in place of `audit_shard` (a test patches
`frayproof_audit.corpus.run.audit_run.audit_shard`): it writes `<ordinal>.<pid>` into `record_dir` before
the shard, then takes `delay_s` longer than the shard would, so that when the first shard is done
the others are surely still in flight. The test kills the workers from its own side
(`kill_all`), from the run's progress callback or from a thread that watches the staging folder.
Loky and Dask pickle the instance with its fields and import this module in every worker, so
the fault travels with each task.

Run as a script, this module does the same to a real CLI process (the workers are a Dask
cluster's, found by connecting to its scheduler):

    python -m tests.worker_faults SCHEDULER RECORD_DIR [--worker-wait S] audit INPUTS ... \
        --backend dask --scheduler SCHEDULER

runs every shard through `Logged(RECORD_DIR)`, kills every worker of SCHEDULER with SIGKILL as
soon as the run's first shard is staged, and prints `KILLED_LINE` with their pids on stderr.
`--worker-wait S` sets how long the run waits for a worker when the cluster has none
(`executor.WORKER_WAIT_S`).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from frayproof_audit.corpus.run import audit_run as run
from frayproof_audit.corpus.run import worker
from frayproof_audit.corpus.run.worker import ShardResult, ShardTask
from frayproof_audit.corpus.store import local_stage as store

KILLED_LINE = "worker_faults: killed "


@dataclass(frozen=True, slots=True)
class Logged:
    """`audit_shard`, logged (`<ordinal>.<pid>` in `record_dir`) and `delay_s` slower."""

    record_dir: str
    delay_s: float = 0.25

    def __call__(self, task: ShardTask) -> ShardResult:
        Path(self.record_dir, f"{task.shard.ordinal}.{os.getpid()}").touch()
        time.sleep(self.delay_s)
        return worker.audit_shard(task)


def attempts(record_dir: Path) -> dict[int, set[int]]:
    """ordinal → pids of the workers that started it."""
    found: dict[int, set[int]] = {}
    for entry in record_dir.iterdir():
        ordinal, pid = entry.name.split(".")
        found.setdefault(int(ordinal), set()).add(int(pid))
    return found


def kill_all(pids: Iterable[int]) -> list[int]:
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.append(pid)
    return killed


def dask_worker_pids(address: str) -> list[int]:
    from dask.distributed import Client

    with Client(address, timeout=30, set_as_default=False) as client:
        return sorted(client.run(os.getpid).values())


def child_pids(parent: int, *markers: bytes) -> list[int]:
    """The children of `parent` whose command line holds one of `markers` (any state of their
    start-up), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and any(marker in command for marker in markers):
            found.append(int(entry.name))
    return sorted(found)


def loky_worker_pids() -> list[int]:
    """The loky worker processes that are children of this process."""
    return child_pids(os.getpid(), b"popen_loky_posix")


def kill_dask_workers_after_first_shard(address: str) -> None:
    accept = store.Stage.accept
    done: list[int] = []

    def accept_then_kill(self: store.Stage, files: tuple[str, ...]) -> None:
        accept(self, files)
        if not done:
            done.extend(kill_all(dask_worker_pids(address)))
            sys.stderr.write(f"{KILLED_LINE}{' '.join(map(str, done))}\n")
            sys.stderr.flush()

    store.Stage.accept = accept_then_kill  # type: ignore[method-assign]


def main(argv: list[str]) -> None:
    address, record_dir, *args = argv
    if args[:1] == ["--worker-wait"]:
        from frayproof_audit.corpus.run import executor

        executor.WORKER_WAIT_S = float(args[1])
        args = args[2:]
    kill_dask_workers_after_first_shard(address)
    setattr(run, "audit_shard", Logged(record_dir))  # noqa: B010 - the name is not exported
    from frayproof_audit.cli import main as cli

    cli.main(args=args, prog_name="frayproof-audit")


if __name__ == "__main__":
    main(sys.argv[1:])
