"""Faults for tests/test_scale.py: a CLI process that dies (SIGKILL) in the middle of an
object-store commit, or that waits before committing. Production code has no hook for them.
Run as a script, this module patches the process and hands the rest of its arguments to the
real CLI:

    python -m tests.scale_faults kill-at-commit audit INPUTS ... --out s3://...

`kill-at-commit` kills the process with SIGKILL just before the `runs` row is written: the old
run of that id is already deleted and the new part files are copied into place.
`pause-at-commit` waits, before the commit begins and holding the run id's lock, until its
standard input is closed: the test closes it once a second run of the same id has been refused,
so the two surely overlap and neither waits longer than it must (a fixed sleep cost six
seconds).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from frayproof_audit.corpus.store import object_stage as object_store
from frayproof_audit.corpus.store.layout import RUNS_FOLDER


def kill_at_commit() -> None:
    write = object_store.write_object

    def write_or_die(fs: Any, path: str, table: Any, metadata: dict[str, str]) -> None:
        if f"/{RUNS_FOLDER}/" in path:
            os.kill(os.getpid(), signal.SIGKILL)
        write(fs, path, table, metadata)

    object_store.write_object = write_or_die


def pause_at_commit() -> None:
    commit = object_store.ObjectStage.commit

    def slow_commit(self: object_store.ObjectStage, *args: Any) -> None:
        sys.stdin.read()  # until the test closes the pipe
        commit(self, *args)

    object_store.ObjectStage.commit = slow_commit  # type: ignore[method-assign]


FAULTS = {"kill-at-commit": kill_at_commit, "pause-at-commit": pause_at_commit}


def main(argv: list[str]) -> None:
    fault, *args = argv
    if fault not in FAULTS:
        raise SystemExit(f"usage: python -m tests.scale_faults {'|'.join(FAULTS)} COMMAND ...")
    FAULTS[fault]()
    from frayproof_audit.cli import main as cli_main

    cli_main(args, prog_name="frayproof-audit")


if __name__ == "__main__":
    main(sys.argv[1:])
