"""The dataset's layout: where a dataset lives, the names of its folders and files, its runs.

Layout (docs/tables.md): `OUT/<table>/log_date=YYYY-MM-DD/part-<run_id>-<n>.parquet` for `pairs`,
`findings`, `mutants`, and `OUT/runs/part-<run_id>.parquet`. A run stages every part file in
`OUT/_staging/` first and writes its `runs` row last; readers count a part file only when a
`runs` row lists it, so a run killed at any moment is either wholly there or not there at all.
Staging and commit are `local_stage.py`'s (a local OUT) and `object_stage.py`'s (an object store).

OUT is a local folder, or a URI of an object store (`s3://bucket/audit`). A local OUT is written
and read through Python file objects, so a path with a colon (`audit:2025-06-02`) is never taken
for a URI; `file:///path` is the local path. Pure names, no Arrow: whatever needs only them
(input expansion, the CLI) pays for nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

from frayproof_audit.corpus.inputs import location
from frayproof_audit.errors import InputError

STAGING = "_staging"
LOGS_FOLDER = "_logs"
"""`OUT/_logs/crash-<run_id>.log`: the traceback of a run that crashed (written by the CLI)."""
LOCK = ".frayproof-audit.lock"
RUNS_FOLDER = "runs"
_PREFIX, _SUFFIX = "part-", ".parquet"


class StoreError(InputError):
    """OUT cannot be used as a dataset folder, or could not be written during the run (exit 2)."""


def output_location(path: str | os.PathLike[str], writing: bool = False) -> Path | str:
    """Where a dataset lives: a local folder (`file://` URIs included), or an object-store URI
    whose filesystem is usable here, and can be written when `writing` (else a `StoreError`
    before anything is created)."""
    text = os.fspath(path)
    try:
        local = location.local_path(text)
        if local is not None:
            return Path(local)
        if writing:
            location.check_writable(text, "--out")
        location.filesystem(text)
    except location.LocationError as exc:
        raise StoreError(str(exc)) from None
    return text.rstrip("/")


def local_folder(path: str | os.PathLike[str]) -> Path:
    """`path` as a local folder; an object-store URI is a `StoreError` (for local-only tools)."""
    found = output_location(path)
    if not isinstance(found, Path):
        raise StoreError(f"'{found}' is a URI: this needs a local folder"
                         f" (for a local folder of that name, write ./{found})")
    return found


def part_name(run_id: str, number: int) -> str:
    return f"{_PREFIX}{run_id}-{number:05d}{_SUFFIX}"


def runs_name(run_id: str) -> str:
    return f"{_PREFIX}{run_id}{_SUFFIX}"


def run_of_part(name: str) -> str | None:
    """The run id in `part-<run_id>-<n>.parquet`, or None for any other name."""
    if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
        return None
    run_id, sep, number = name[len(_PREFIX) : -len(_SUFFIX)].rpartition("-")
    return run_id if sep and number.isdigit() else None


def committed_runs(out: str | os.PathLike[str]) -> list[str]:
    """Run ids with a `runs` row, sorted. Only these runs exist for the project's readers."""
    folder = Path(out) / RUNS_FOLDER
    if not folder.is_dir():
        return []
    return sorted(
        entry.name[len(_PREFIX) : -len(_SUFFIX)]
        for entry in folder.iterdir()
        if entry.name.startswith(_PREFIX) and entry.name.endswith(_SUFFIX)
    )
