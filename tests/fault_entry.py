"""Faults injected from the test side: a worker that dies, a parent that stops where a test kills it.

Production code has no hooks for this. Workers get `CrashOn` in place of `audit_shard` (the
test patches `frayproof_audit.corpus.run.audit_run.audit_shard`); loky pickles the instance with its
fields and imports this module in every worker, so the fault travels with each task and never
depends on a worker's environment. Run as a script, this module patches the parent and then
hands its arguments to the real CLI:

    python -m tests.fault_entry shards|commit audit INPUTS ... --jobs 1

`shards` stops once the first shard is staged; `commit` stops inside the commit, after the part
files are moved into the dataset and before the `runs` row is written. Both print
`PAUSE_LINE` + the stage on stderr and sleep until killed.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.corpus.run import worker
from frayproof_audit.corpus.run.worker import ShardResult, ShardTask
from frayproof_audit.corpus.store import local_stage as store

PAUSE_LINE = "fault_entry: paused at "
STAGES = ("shards", "commit")
DIED = 86
"""Exit status of a worker `CrashOn` killed."""


@dataclass(frozen=True, slots=True)
class CrashOn:
    """`audit_shard`, except that the worker process exits outright on every shard whose source
    path contains `needle` (with `once`, only on a shard's first attempt). Before dying it
    leaves `<ordinal>.<attempt>` in `record_dir`, so a test can tell the fault happened."""

    needle: str
    record_dir: str
    once: bool = False

    def __call__(self, task: ShardTask) -> ShardResult:
        if self.needle in task.shard.file.path and (not self.once or task.attempt == 1):
            Path(self.record_dir, f"{task.shard.ordinal}.{task.attempt}").touch()
            os._exit(DIED)
        return worker.audit_shard(task)


def _pause(stage: str) -> None:
    sys.stderr.write(f"{PAUSE_LINE}{stage}\n")
    sys.stderr.flush()
    time.sleep(600)


def pause_after_first_shard() -> None:
    """Stop the parent right after it records the files of its first finished shard."""
    accept = store.Stage.accept

    def accept_then_pause(self: store.Stage, files: tuple[str, ...]) -> None:
        accept(self, files)
        _pause("shards")

    store.Stage.accept = accept_then_pause  # type: ignore[method-assign]


def pause_before_runs_row() -> None:
    """Stop the commit just before it writes the `runs` row (every part file already moved)."""
    write = store.write_parquet

    def pause_then_write(table: Any, path: Path, metadata: dict[str, str]) -> None:
        if path.parent.name == store.RUNS_FOLDER:
            _pause("commit")
        write(table, path, metadata)

    store.write_parquet = pause_then_write


def main(argv: list[str]) -> None:
    stage, *args = argv
    if stage not in STAGES:
        raise SystemExit(f"usage: python -m tests.fault_entry {'|'.join(STAGES)} COMMAND ...")
    (pause_after_first_shard if stage == "shards" else pause_before_runs_row)()
    from frayproof_audit.cli import main as cli

    cli.main(args=args, prog_name="frayproof-audit")


if __name__ == "__main__":
    main(sys.argv[1:])
