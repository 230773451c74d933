"""A local dataset's staging, run-unique part files, its atomic commit, and cleanup.

A run writes every part file into `OUT/_staging/` first (`layout.py` names the files). Commit,
under one lock for the whole dataset: remove the old `runs` row of the same run id (the old run
is no longer counted), delete its part files, move the new ones in with `os.replace`, and write
the new `runs` row last, under a temporary name then `os.replace`. Readers count a part file
only when a `runs` row lists it, so a run killed at any moment is either wholly there or not
there at all, and the next run deletes what it left behind.

Every staging folder is held by an `flock` for the life of its run, so cleanup can tell a
folder of a dead run (lock free) from one of a run still going. Locks vanish with the process,
SIGKILL included. A dataset on an object store is `object_stage.py`'s, with the same layout and
the same rule (a run exists once its `runs` row is written).
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
from typing import IO

import pyarrow as pa

from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES, empty
from frayproof_audit.corpus.store.layout import (
    LOCK,
    RUNS_FOLDER,
    STAGING,
    StoreError,
    committed_runs,
    local_folder,
    part_name,
    run_of_part,
    runs_name,
)
from frayproof_audit.corpus.store.parquet_files import read_handle, write_parquet


def stage_files(
    folder: str | os.PathLike[str],
    run_id: str,
    ordinal: int,
    tables: dict[str, dict[str, pa.Table]],
    metadata: Callable[[str], dict[str, str]],
) -> tuple[str, ...]:
    """Write one shard's rows into a local staging folder: one part file per table and log_date.

    Each file is written under a temporary name and renamed, so a worker that dies mid-write
    never leaves a truncated file under a real name; names depend only on the shard, so a retry
    overwrites the same files. Returns the paths relative to the folder.
    """
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

    def read_staged(self, table: str, columns: list[str]) -> pa.Table:
        """`columns` of every staged part file of `table`, in file order (before the commit)."""
        parts = []
        for relative in sorted(name for name in self.staged if name.startswith(f"{table}/")):
            with open(self.folder / relative, "rb") as handle:
                parts.append(read_handle(handle, columns))
        return pa.concat_tables(parts) if parts else empty(table).select(columns)

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
                    files = stage_files(self.folder, self.run_id, 0, {table: {run_date: empty(table)}}, meta)
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
                    staged, target = self.folder / relative, self.out / relative
                    _fsync(staged)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(staged, target)
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

    def delete(self) -> int:
        """Delete the committed run of this run id, with the commit's discipline: under the
        dataset's lock, its `runs` row first (from then on it does not count), then its part
        files. Returns how many part files went; the staging folder is dropped after."""
        runs_file = self.out / RUNS_FOLDER / runs_name(self.run_id)
        removed = 0
        try:
            with self._dataset_lock():
                runs_file.unlink()
                _fsync(runs_file.parent)
                for table in PARTITIONED_TABLES:
                    for path in (self.out / table).glob("log_date=*/part-*.parquet"):
                        if run_of_part(path.name) == self.run_id:
                            path.unlink()
                            removed += 1
        except FileNotFoundError:
            raise StoreError(f"no committed run {self.run_id!r} in '{self.out}'") from None
        except OSError as exc:
            raise StoreError(f"cannot delete run {self.run_id!r} in '{self.out}':"
                             f" {exc.strerror or exc}") from None
        finally:
            self.close()
        return removed

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
