"""Faults for tests/test_hardening_run.py, injected from the test side into a real CLI process.

Production code has no hooks for them. Run as a script, this module patches the process (and,
through a picklable stand-in for `audit_shard`, every loky worker) and hands the rest of its
arguments to the real CLI:

    python -m tests.fault_run FAULT COMMAND ARGS...

FAULT is one of `FAULTS`:

* `engine-bug` — the `tool_pairs` check's `find` raises `RuntimeError` on every pair whose after
  snapshot holds `BOOM`, in the parent and in every worker;
* `enospc-runs`, `enospc-empty`, `enospc-marker` — `OSError(ENOSPC)` where the `runs` row is
  written, where an empty table's file is staged, or where a worker writes its in-flight marker;
* `crash-commit` — a `RuntimeError` while the parent builds the `runs` row (a bug in the parent);
* `crash-validate` — a `RuntimeError` inside `validate` (a bug in a command without OUT);
* `pause` — the parent stops (sleeps) once its first shard is staged, until a signal ends it;
  it prints `PAUSE_LINE` on stderr first.

`python -m tests.fault_run idle-pool` runs no command: it runs one task on a loky pool of two
workers (so one never gets a task), prints `POOL_READY` on stderr and sleeps, pool alive.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import frayproof_audit.checks as registry
from frayproof_audit.corpus.run import audit_run as run
from frayproof_audit.corpus.run import worker
from frayproof_audit.corpus.run.worker import ShardResult, ShardTask
from frayproof_audit.corpus.store import local_stage as store

PAUSE_LINE = "fault_run: paused"
POOL_READY = "fault_run: pool ready"
BOOM = "BOOM"
FAULTS = ("engine-bug", "enospc-runs", "enospc-empty", "enospc-marker", "crash-commit",
          "crash-validate", "pause")


def _enospc(path: object) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def install_engine_bug() -> None:
    """Make the first registered check raise on pairs whose after snapshot mentions BOOM."""
    if getattr(registry, "_fault_run_installed", False):
        return
    first, *rest = registry.CHECKS
    real = first.find

    def find(after: Any, contract: Any, before: Any, settings: Any) -> Any:
        if BOOM in str(after.wire):
            raise RuntimeError("injected engine bug")
        return real(after, contract, before, settings)

    registry.CHECKS = (dataclasses.replace(first, find=find), *rest)
    registry._fault_run_installed = True  # type: ignore[attr-defined]


def fail_marker() -> None:
    def mark(task: ShardTask) -> str | None:
        raise _enospc(Path(task.settings.inflight_dir or "", str(task.shard.ordinal)))

    worker._mark = mark


@dataclass(frozen=True, slots=True)
class InWorker:
    """`audit_shard` with a fault installed first in whichever process runs the task."""

    fault: str

    def __call__(self, task: ShardTask) -> ShardResult:
        (install_engine_bug if self.fault == "engine-bug" else fail_marker)()
        return worker.audit_shard(task)


def fail_runs_row() -> None:
    write = store.write_parquet

    def failing(table: Any, path: Path, metadata: dict[str, str]) -> None:
        if path.parent.name == store.RUNS_FOLDER:
            raise _enospc(path)
        write(table, path, metadata)

    store.write_parquet = failing


def fail_empty_tables() -> None:
    write = store.write_parquet

    def failing(table: Any, path: Path, metadata: dict[str, str]) -> None:
        if table.num_rows == 0:  # only fill_empty_tables stages a table without rows
            raise _enospc(path)
        write(table, path, metadata)

    store.write_parquet = failing


def crash_commit() -> None:
    def runs_row(*_: Any, **__: Any) -> Any:
        raise RuntimeError("injected bug in the parent")

    setattr(run, "runs_row", runs_row)  # noqa: B010 - the name is not exported


def crash_validate() -> None:
    import frayproof_audit.cli.single as single

    def validate(*_: Any, **__: Any) -> Any:
        raise RuntimeError("injected bug in validate")

    setattr(single, "validate", validate)  # noqa: B010


def pause_after_first_shard() -> None:
    accept = store.Stage.accept

    def accept_then_pause(self: store.Stage, files: tuple[str, ...]) -> None:
        accept(self, files)
        sys.stderr.write(f"{PAUSE_LINE}\n")
        sys.stderr.flush()
        time.sleep(600)

    store.Stage.accept = accept_then_pause  # type: ignore[method-assign]


def idle_pool() -> None:
    from frayproof_audit.corpus.run.executor import run_tasks

    list(run_tasks(abs, [-1], "loky", 2))
    sys.stderr.write(f"{POOL_READY}\n")
    sys.stderr.flush()
    time.sleep(600)


def main(argv: list[str]) -> None:
    if argv == ["idle-pool"]:
        idle_pool()
        return
    fault, *args = argv
    if fault not in FAULTS:
        raise SystemExit(f"usage: python -m tests.fault_run {'|'.join(FAULTS)} COMMAND ...")
    if fault in ("engine-bug", "enospc-marker"):
        (install_engine_bug if fault == "engine-bug" else fail_marker)()
        setattr(run, "audit_shard", InWorker(fault))  # noqa: B010
    else:
        {
            "enospc-runs": fail_runs_row,
            "enospc-empty": fail_empty_tables,
            "crash-commit": crash_commit,
            "crash-validate": crash_validate,
            "pause": pause_after_first_shard,
        }[fault]()
    from frayproof_audit.cli import main as cli

    cli.main(args=args, prog_name="frayproof-audit")


if __name__ == "__main__":
    main(sys.argv[1:])
