"""The dataset on disk: staging, run-unique part files, an atomic commit, and cleanup.

Layout (docs/tables.md): `OUT/<table>/log_date=YYYY-MM-DD/part-<run_id>-<n>.parquet` for `pairs`,
`findings`, `mutants`, and `OUT/runs/part-<run_id>.parquet`. A run writes every part file into
`OUT/_staging/` first. Commit, under one lock for the whole dataset: remove the old `runs` row of
the same run id (the old run is no longer counted), delete its part files, move the new ones in
with `os.replace`, and write the new `runs` row last, under a temporary name then `os.replace`.
Readers count a part file only when a `runs` row lists it, so a run killed at any moment is
either wholly there or not there at all, and the next run deletes what it left behind.

Every staging folder is held by an `flock` for the life of its run, so cleanup can tell a
folder of a dead run (lock free) from one of a run still going. Locks vanish with the process,
SIGKILL included.

OUT is a local folder, or a URI of an object store (`s3://bucket/audit`), whose dataset is kept
by `corpus/store/object_stage.py` with the same layout and the same rule (a run exists once its `runs`
row is written). A local OUT is written and read through Python file objects, so a path with a
colon (`audit:2025-06-02`) is never taken for a URI; `file:///path` is the local path.
A disk that fills up (or any other OSError) while
staging or committing is a `StoreError`: the run stops, nothing partial is visible.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES, empty
from frayproof_audit.errors import InputError

if TYPE_CHECKING:
    from frayproof_audit.corpus.store.object_stage import ObjectStage

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


def open_stage(out: str | os.PathLike[str], run_id: str) -> Stage | ObjectStage:
    """The staging area of a run into `out`, local or on an object store."""
    found = output_location(out)
    if isinstance(found, Path):
        return Stage(found, run_id)
    from frayproof_audit.corpus.store.object_stage import ObjectStage

    return ObjectStage(found, run_id)


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


def write_parquet(table: pa.Table, path: Path, metadata: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:  # a file object: pyarrow never parses the path as a URI
        pq.write_table(table.replace_schema_metadata(metadata), handle, compression="zstd")


def read_parquet(path: str | os.PathLike[str], columns: list[str] | None = None) -> pa.Table:
    """A local Parquet file, read through a file object (never a URI)."""
    with open(path, "rb") as handle:
        return read_handle(handle, columns)


def read_handle(handle: IO[bytes], columns: list[str] | None = None) -> pa.Table:
    """A whole Parquet file from a Python file object, every read done before this returns.

    `pq.read_table` scans through Arrow's dataset reader, whose read-ahead on Arrow's own threads
    can still hold buffers of the Python file after the call returns. When such a buffer is
    released while the interpreter is shutting down (an error exit right after the read), that
    thread cannot take the GIL and the process aborts ("terminate called without an active
    exception"). Read without pre-buffering or threads, nothing outlives the call.
    """
    parquet = pq.ParquetFile(handle, pre_buffer=False)
    return parquet.read(columns=columns, use_threads=False)


def stage_shard(
    folder: str | os.PathLike[str],
    run_id: str,
    ordinal: int,
    tables: dict[str, dict[str, pa.Table]],
    metadata: Callable[[str], dict[str, str]],
) -> tuple[str, ...]:
    """Write one shard's rows into a staging folder: one part file per table and log_date.

    Called by workers, so Parquet encoding runs in parallel and tables never travel back to the
    parent. Each file is written under a temporary name and renamed, so a worker that dies
    mid-write never leaves a truncated file under a real name; names depend only on the shard,
    so a retry overwrites the same files. Returns the paths relative to the folder. A folder
    that is a URI is written through fsspec: an object appears whole or not at all.
    """
    if isinstance(folder, str) and location.is_uri(folder):
        from frayproof_audit.corpus.store.object_stage import stage_objects

        return stage_objects(folder, run_id, ordinal, tables, metadata)
    written = []
    for table, by_date in sorted(tables.items()):
        for log_date, rows in sorted(by_date.items()):
            relative = f"{table}/log_date={log_date}/{part_name(run_id, ordinal)}"
            target = Path(folder) / relative
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            write_parquet(rows, temporary, metadata(table))
            os.replace(temporary, target)
            written.append(relative)
    return tuple(written)


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class _Lock:
    """An exclusive `flock` on a file, held until `release`."""

    def __init__(self, path: Path, blocking: bool = True) -> None:
        self.handle: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - held while locked
        flags = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(self.handle.fileno(), flags)
        except OSError:
            self.handle.close()
            self.handle = None
            raise

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class Stage:
    """The staging area of one run and the commit that publishes it."""

    def __init__(self, out: str | os.PathLike[str], run_id: str) -> None:
        self.out = local_folder(out)
        self.run_id = run_id
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / STAGING).mkdir(exist_ok=True)
            with self._dataset_lock():
                self._cleanup()
            token = f"{run_id}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
            self._own_lock = _Lock(self.out / STAGING / f"{token}.lock")
            self.folder = self.out / STAGING / token
            self.folder.mkdir()
        except OSError as exc:
            raise StoreError(f"cannot use '{self.out}' as the output folder: {exc}") from None
        self.staged: list[str] = []

    @property
    def worker_folder(self) -> str:
        """The staging folder as workers are told it: absolute, whatever their working folder."""
        return os.path.abspath(self.folder)

    def _dataset_lock(self) -> _Held:
        return _Held(_Lock(self.out / LOCK))

    def _cleanup(self) -> None:
        """Delete staging folders of dead runs and part files no `runs` row lists."""
        staging = self.out / STAGING
        for lock_path in sorted(staging.glob("*.lock")):
            try:
                stale = _Lock(lock_path, blocking=False)
            except OSError:
                continue  # a live run holds it
            shutil.rmtree(staging / lock_path.name[: -len(".lock")], ignore_errors=True)
            lock_path.unlink(missing_ok=True)
            stale.release()
        for entry in staging.iterdir():
            if entry.is_dir() and not (staging / f"{entry.name}.lock").exists():
                shutil.rmtree(entry, ignore_errors=True)
        committed = set(committed_runs(self.out))
        for table in PARTITIONED_TABLES:
            for path in (self.out / table).glob("log_date=*/part-*.parquet"):
                if run_of_part(path.name) not in committed:
                    path.unlink(missing_ok=True)
        for leftover in (self.out / RUNS_FOLDER).glob(".*.tmp"):
            leftover.unlink(missing_ok=True)

    def accept(self, files: tuple[str, ...]) -> None:
        """Record the files a worker staged for a finished shard."""
        self.staged.extend(files)

    def discard(self, ordinal: int) -> None:
        """Delete whatever a shard that was given up may have staged: it is not in this run."""
        for path in self.folder.glob(f"*/log_date=*/{part_name(self.run_id, ordinal)}"):
            path.unlink(missing_ok=True)

    def fill_empty_tables(self, run_date: str, meta: Callable[[str], dict[str, str]]) -> None:
        """A table with no rows still gets one empty file, so every table has a schema to read."""
        present = {relative.split("/", 1)[0] for relative in self.staged}
        for table in PARTITIONED_TABLES:
            if table not in present:
                try:
                    files = stage_shard(self.folder, self.run_id, 0, {table: {run_date: empty(table)}}, meta)
                except OSError as exc:
                    raise self._fault("stage", exc) from None
                self.accept(files)

    def _fault(self, doing: str, exc: OSError) -> StoreError:
        return StoreError(f"cannot {doing} the run in '{self.out}': {exc.strerror or exc}"
                          f"{f' ({exc.filename})' if exc.filename else ''}; nothing was committed")

    def commit(self, runs_row: pa.Table, meta: dict[str, str]) -> None:
        """Publish the staged files and then the `runs` row, replacing any run of the same id.

        An OSError on the way (a full disk) is a `StoreError`: the run is not committed, and the
        part files already moved are removed again (no `runs` row lists them either way)."""
        moved: list[Path] = []
        runs_folder = self.out / RUNS_FOLDER
        temporary = runs_folder / f".{runs_name(self.run_id)}.tmp"
        with self._dataset_lock():
            try:
                runs_folder.mkdir(exist_ok=True)
                (runs_folder / runs_name(self.run_id)).unlink(missing_ok=True)
                _fsync(runs_folder)
                for table in PARTITIONED_TABLES:
                    for path in (self.out / table).glob("log_date=*/part-*.parquet"):
                        if run_of_part(path.name) == self.run_id:
                            path.unlink()
                for relative in sorted(self.staged):
                    source, target = self.folder / relative, self.out / relative
                    _fsync(source)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(source, target)
                    moved.append(target)
                write_parquet(runs_row, temporary, meta)
                _fsync(temporary)
                os.replace(temporary, runs_folder / runs_name(self.run_id))
            except OSError as exc:
                for path in [*moved, temporary]:
                    with contextlib.suppress(OSError):
                        path.unlink(missing_ok=True)
                raise self._fault("commit", exc) from None
            try:
                _fsync(runs_folder)
            except OSError as exc:
                raise StoreError(f"run committed in '{self.out}', but syncing its folder failed:"
                                 f" {exc.strerror or exc}") from None
        self.close()

    def close(self) -> None:
        """Drop the staging folder (after a commit, or when the run gives up)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # never hide the error that ended the run
            (self.out / STAGING / f"{self.folder.name}.lock").unlink(missing_ok=True)
        self._own_lock.release()


class _Held:
    """Context manager releasing a `_Lock`."""

    def __init__(self, lock: _Lock) -> None:
        self.lock = lock

    def __enter__(self) -> _Lock:
        return self.lock

    def __exit__(self, *_: object) -> None:
        self.lock.release()
