"""The dataset on an object store (`s3://`, `gs://`, `abfs://`): no rename, no flock, same promise.

The layout is the local one (`OUT/<table>/log_date=D/part-<run_id>-<n>.parquet`, `OUT/runs/`),
so DuckDB, Polars and `read_table` read it the same way, and so is the rule that makes a commit
atomic: a part file counts only when a `runs` row lists it, and the `runs` row is written last,
as one object (a PUT is all or nothing). Workers write their part files under the run's own
staging prefix `OUT/_staging/<run_id>.<token>/`, whose name no other run uses. The client alone
commits:

1. delete the `runs` row of the same run id, if any (from here the old run is not counted);
2. delete that run's part files;
3. copy the staged part files into place (a server-side copy on S3);
4. write the `runs` row;
5. delete the staging prefix.

A run killed anywhere leaves only files no `runs` row lists; the next run with the same run id
deletes them (its staging prefixes and any unlisted part files of that id) before it starts.
Object stores have no locks, so before any of this a run takes the run id's lock object
(`corpus/store/run_lock.py`: created only if absent, replaced when its holder is dead): a second audit
with the same run id stops with an error instead of deleting the first one's files, and a run
checks it still holds the lock right before it commits. Runs with different ids never touch
each other's files.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES, empty
from frayproof_audit.corpus.store.layout import (
    RUNS_FOLDER,
    STAGING,
    StoreError,
    part_name,
    run_of_part,
    runs_name,
)
from frayproof_audit.corpus.store.parquet_files import read_handle
from frayproof_audit.corpus.store.run_lock import RunLock


def write_object(fs: Any, path: str, table: pa.Table, metadata: dict[str, str]) -> None:
    """One Parquet object, written whole (it appears only when complete)."""
    with fs.open(path, "wb") as handle:
        pq.write_table(table.replace_schema_metadata(metadata), handle, compression="zstd")


def stage_objects(
    folder: str,
    run_id: str,
    ordinal: int,
    tables: dict[str, dict[str, pa.Table]],
    metadata: Callable[[str], dict[str, str]],
) -> tuple[str, ...]:
    """`staging.stage_shard` for a staging prefix on an object store (runs in the worker)."""
    fs, root = location.filesystem(folder)
    written = []
    for table, by_date in sorted(tables.items()):
        for log_date, rows in sorted(by_date.items()):
            relative = f"{table}/log_date={log_date}/{part_name(run_id, ordinal)}"
            write_object(fs, f"{root}/{relative}", rows, metadata(table))
            written.append(relative)
    return tuple(written)


def committed_run_files(fs: Any, root: str, run_id: str) -> set[str] | None:
    """The files the `runs` row of `run_id` lists (relative to the dataset), None if uncommitted."""
    path = f"{root}/{RUNS_FOLDER}/{runs_name(run_id)}"
    try:
        with fs.open(path, "rb") as handle:
            row = read_handle(handle, ["files"]).to_pylist()
    except FileNotFoundError:
        return None
    return set(row[0]["files"]) if row else set()


TOKEN_LENGTH = 12
"""Hex digits of the random token that makes a run's staging prefix its own."""
_TOKEN = re.compile(rf"[0-9a-f]{{{TOKEN_LENGTH}}}")


def _staging_of(name: str, run_id: str) -> bool:
    """Whether `name` (in `_staging/`) is a staging prefix of `run_id`: `<run_id>.<token>`.
    Run ids may hold dots, so `n1.*` also matches run `n1.b`'s `n1.b.<token>` and its lock."""
    return name.startswith(f"{run_id}.") and _TOKEN.fullmatch(name[len(run_id) + 1 :]) is not None


class ObjectStage:
    """The staging prefix of one run on an object store, and the commit that publishes it."""

    def __init__(self, out: str, run_id: str) -> None:
        self.out = out
        self.run_id = run_id
        self.fs, self.root = location.filesystem(out)
        token = uuid.uuid4().hex[:TOKEN_LENGTH]
        self.folder = location.join(out, STAGING, f"{run_id}.{token}")
        self.staged: list[str] = []
        self.lock = RunLock(self.fs, f"{self.root}/{STAGING}", run_id, token, out)
        try:
            self.lock.acquire()
            self._cleanup()
        except StoreError:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise StoreError(f"cannot use '{out}' as the output folder: {exc}") from None

    @property
    def worker_folder(self) -> str:
        return self.folder

    def _part_files(self) -> list[str]:
        """Part files of this run id in the tables (paths inside the filesystem)."""
        found = []
        for table in PARTITIONED_TABLES:
            for path in self.fs.glob(f"{self.root}/{table}/log_date=*/part-{self.run_id}-*.parquet"):
                if run_of_part(path.rsplit("/", 1)[-1]) == self.run_id:
                    found.append(path)
        return found

    def _cleanup(self) -> None:
        """Delete what an interrupted run of this id left: its staging prefixes and part files no
        `runs` row lists."""
        self.fs.invalidate_cache()
        staging = f"{self.root}/{STAGING}"
        _, own = location.filesystem(self.folder)
        for path in self.fs.glob(f"{staging}/{self.run_id}.*"):
            if path != own and _staging_of(path.rsplit("/", 1)[-1], self.run_id):
                self.fs.rm(path, recursive=True)
        listed = committed_run_files(self.fs, self.root, self.run_id) or set()
        stale = [path for path in self._part_files()
                 if path[len(self.root) + 1 :] not in listed]
        if stale:
            self.fs.rm(stale)
        self.fs.invalidate_cache()

    def accept(self, files: tuple[str, ...]) -> None:
        self.staged.extend(files)

    def read_staged(self, table: str, columns: list[str]) -> pa.Table:
        """`columns` of every staged part file of `table`, in file order (before the commit)."""
        _, staging = location.filesystem(self.folder)
        parts = []
        for relative in sorted(name for name in self.staged if name.startswith(f"{table}/")):
            with self.fs.open(f"{staging}/{relative}", "rb") as handle:
                parts.append(read_handle(handle, columns))
        return pa.concat_tables(parts) if parts else empty(table).select(columns)

    def discard(self, ordinal: int) -> None:
        """Delete whatever a shard that was given up may have staged."""
        _, staging = location.filesystem(self.folder)
        self.fs.invalidate_cache()
        paths = self.fs.glob(f"{staging}/*/log_date=*/{part_name(self.run_id, ordinal)}")
        if paths:
            self.fs.rm(paths)

    def fill_empty_tables(self, run_date: str, meta: Callable[[str], dict[str, str]]) -> None:
        present = {relative.split("/", 1)[0] for relative in self.staged}
        for table in PARTITIONED_TABLES:
            if table not in present:
                try:
                    files = stage_objects(self.folder, self.run_id, 0,
                                          {table: {run_date: empty(table)}}, meta)
                except OSError as exc:
                    raise self._fault("stage", exc) from None
                self.accept(files)

    def _fault(self, doing: str, exc: OSError) -> StoreError:
        return StoreError(f"cannot {doing} the run in '{self.out}': {exc}; nothing was committed")

    def commit(self, runs_row: pa.Table, meta: dict[str, str]) -> None:
        """Publish the staged part files, then the `runs` row (one object: the commit itself)."""
        _, staging = location.filesystem(self.folder)
        runs_path = f"{self.root}/{RUNS_FOLDER}/{runs_name(self.run_id)}"
        copied: list[str] = []
        self.lock.verify()  # a run whose lock was taken over must not publish anything
        try:
            self.fs.invalidate_cache()
            if self.fs.exists(runs_path):
                self.fs.rm(runs_path)
            old = self._part_files()
            if old:
                self.fs.rm(old)
            for relative in sorted(self.staged):
                target = f"{self.root}/{relative}"
                self.fs.copy(f"{staging}/{relative}", target)
                copied.append(target)
            write_object(self.fs, runs_path, runs_row, meta)
        except OSError as exc:
            for path in copied:
                with contextlib.suppress(OSError):
                    self.fs.rm(path)
            raise self._fault("commit", exc) from None
        self.close()

    def delete(self) -> int:
        """Delete the committed run of this run id, holding its lock (no audit of that id can
        commit meanwhile): its `runs` object first (from then on it does not count), then its
        part files. Returns how many part files went."""
        runs_path = f"{self.root}/{RUNS_FOLDER}/{runs_name(self.run_id)}"
        old: list[str] = []
        try:
            self.lock.verify()
            self.fs.invalidate_cache()
            if not self.fs.exists(runs_path):
                raise StoreError(f"no committed run {self.run_id!r} in '{self.out}'")
            self.fs.rm(runs_path)
            old = self._part_files()
            if old:
                self.fs.rm(old)
        except OSError as exc:
            raise StoreError(f"cannot delete run {self.run_id!r} in '{self.out}': {exc}") from None
        finally:
            self.close()
        return len(old)

    def close(self) -> None:
        """Delete the staging prefix (after a commit, or when the run gives up)."""
        _, staging = location.filesystem(self.folder)
        with contextlib.suppress(OSError, FileNotFoundError):
            self.fs.rm(staging, recursive=True)
        self.fs.invalidate_cache()
        self.lock.release()
