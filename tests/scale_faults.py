"""A fault for tests/test_scale.py: a CLI process that dies (SIGKILL) in the middle of an
object-store commit. Production code has no hook for it. Run as a script, this module patches
the process and hands the rest of its arguments to the real CLI:

    python -m tests.scale_faults kill-at-commit audit INPUTS ... --out s3://...

`kill-at-commit` kills the process with SIGKILL just before the `runs` row is written: the old
run of that id is already deleted and the new part files are copied into place.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from frayproof_audit.corpus import object_store
from frayproof_audit.corpus.store import RUNS_FOLDER


def kill_at_commit() -> None:
    write = object_store.write_object

    def write_or_die(fs: Any, path: str, table: Any, metadata: dict[str, str]) -> None:
        if f"/{RUNS_FOLDER}/" in path:
            os.kill(os.getpid(), signal.SIGKILL)
        write(fs, path, table, metadata)

    object_store.write_object = write_or_die


def main(argv: list[str]) -> None:
    fault, *args = argv
    if fault != "kill-at-commit":
        raise SystemExit("usage: python -m tests.scale_faults kill-at-commit COMMAND ...")
    kill_at_commit()
    from frayproof_audit.cli import main as cli_main

    cli_main(args, prog_name="frayproof-audit")


if __name__ == "__main__":
    main(sys.argv[1:])
