"""Reading the dataset back: Polars lazy frames over exactly the files committed runs list.

Part files left by a run that was killed, or still being moved by a run that is committing,
are never opened: a file counts only when a `runs` row names it.

`read_table` lists the files when it is called and reads them when the frame is collected. A run
replaced (same `--run-id`) or deleted in between is detected at collection, from its `runs` file,
and raises `DatasetChanged`; a file that is missing or cannot be read raises `DatasetError` naming
it. Local paths are made absolute (so Polars never takes `a:b` for a URI scheme); a dataset on
an object store (`s3://bucket/audit`) is listed, checked and read through fsspec, with the same
rules.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from polars.io.plugins import register_io_source

from frayproof_audit.corpus import location
from frayproof_audit.corpus.store import (
    RUNS_FOLDER,
    STAGING,
    StoreError,
    committed_runs,
    output_location,
    read_handle,
    runs_name,
)
from frayproof_audit.corpus.tables import SCHEMAS, TABLES
from frayproof_audit.errors import InputError


class DatasetError(InputError):
    """OUT is not an audit dataset, the table name is unknown, or a file of it is damaged (exit 2)."""


class DatasetChanged(DatasetError):
    """A run was replaced or deleted between `read_table` and collecting its frame."""


def _check(out: str | os.PathLike[str], table: str) -> Path | str:
    if table not in TABLES:
        raise DatasetError(f"unknown table {table!r} (tables: {', '.join(TABLES)})")
    try:
        found = output_location(out)
    except StoreError as exc:
        raise DatasetError(str(exc)) from None
    if isinstance(found, str):
        fs, root = location.filesystem(found)
        fs.invalidate_cache()
        if not fs.isdir(f"{root}/{RUNS_FOLDER}") and not fs.isdir(f"{root}/{STAGING}"):
            raise DatasetError(f"'{out}' is not an audit dataset (no {RUNS_FOLDER}/ folder)")
        return found
    folder = Path(os.path.abspath(found))
    if not folder.is_dir():
        raise DatasetError(f"'{out}' is not a folder")
    if not (folder / RUNS_FOLDER).is_dir() and not (folder / STAGING).is_dir():
        raise DatasetError(f"'{out}' is not an audit dataset (no {RUNS_FOLDER}/ folder)")
    return folder


def committed_files(out: str | os.PathLike[str], table: str, runs: list[str] | None = None) -> list[str]:
    """Absolute paths of `table`'s files of committed runs (or of `runs`, if given), sorted."""
    return [path for path, _ in _committed(_check(out, table), table, runs).files]


_Identity = tuple[int | str, int | str, int]
"""(inode, mtime_ns, size) of a `runs` file (on an object store: ETag, modification time, size):
a replaced run has a new one."""


@dataclass(frozen=True, slots=True)
class _Listing:
    """`table`'s files as the `runs` rows listed them, and the `runs` files they came from."""

    files: list[tuple[str, int]]
    """(absolute path, tables schema version of the run that wrote it), sorted."""
    owners: dict[str, str]
    """path → run id."""
    runs: dict[str, tuple[str, _Identity]]
    """run id → its `runs` file and that file's identity when it was read."""
    remote: str | None = None
    """The dataset's URI when it is on an object store (paths are then inside its filesystem)."""


def _identity(path: str, remote: str | None = None) -> _Identity | None:
    if remote is not None:
        fs = location.filesystem(remote)[0]
        try:
            info = fs.info(path)
        except FileNotFoundError:
            return None
        return str(info.get("ETag", "")), str(info.get("LastModified", info.get("mtime", ""))), info["size"]
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _open(path: str, remote: str | None) -> Any:
    if remote is None:
        return open(path, "rb")
    return location.filesystem(remote)[0].open(path, "rb")


def _runs_of(folder: Path | str) -> list[str]:
    if isinstance(folder, Path):
        return committed_runs(folder)
    fs, root = location.filesystem(folder)
    names = [path.rsplit("/", 1)[-1] for path in fs.glob(f"{root}/{RUNS_FOLDER}/part-*.parquet")]
    return sorted(name[len("part-") : -len(".parquet")] for name in names)


def _committed(folder: Path | str, table: str, runs: list[str] | None) -> _Listing:
    found: list[tuple[str, int]] = []
    owners: dict[str, str] = {}
    seen: dict[str, tuple[str, _Identity]] = {}
    prefix = f"{table}/"
    remote = folder if isinstance(folder, str) else None
    base = location.filesystem(folder)[1] if isinstance(folder, str) else str(folder)
    for run_id in _runs_of(folder) if runs is None else runs:
        path = f"{base}/{RUNS_FOLDER}/{runs_name(run_id)}"
        identity = _identity(path, remote)
        try:
            with _open(path, remote) as handle:
                row = read_handle(handle, ["files", "schema_version"]).to_pylist()[0]
        except FileNotFoundError:
            continue  # replaced by a concurrent commit between listing and reading
        except (OSError, pa.ArrowException, IndexError) as exc:
            raise DatasetError(f"damaged dataset: cannot read '{path}': {_reason(exc)}") from None
        if identity is not None:
            seen[run_id] = (path, identity)
        version = row["schema_version"]
        names = [path] if table == "runs" else [
            f"{base}/{name}" for name in row["files"] if name.startswith(prefix)
        ]
        for name in names:
            found.append((name, version))
            owners[name] = run_id
    return _Listing(sorted(found), owners, seen, remote)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, IndexError):
        return "the file has no row"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text


def _changed(listing: _Listing) -> DatasetChanged | None:
    """A `DatasetChanged` naming the first run whose `runs` file is no longer the one listed."""
    for run_id, (path, identity) in sorted(listing.runs.items()):
        if _identity(path, listing.remote) != identity:
            return DatasetChanged(
                f"run '{run_id}' was replaced or deleted after read_table() listed its files:"
                " call read_table() again for the current data"
            )
    return None


def _damage(listing: _Listing) -> DatasetError | None:
    """What is wrong with the listed files, if anything: a run changed, a file missing or unreadable."""
    changed = _changed(listing)
    if changed is not None:
        return changed
    for path, _ in listing.files:
        run_id = listing.owners[path]
        try:
            with _open(path, listing.remote) as handle:
                pq.read_metadata(handle)
        except FileNotFoundError:
            return DatasetError(f"damaged dataset: run '{run_id}' lists '{path}', which is missing")
        except (OSError, pa.ArrowException) as exc:
            return DatasetError(
                f"damaged dataset: cannot read '{path}' (run '{run_id}'): {_reason(exc)}"
            )
    return None


def _current(table: str) -> dict[str, pl.DataType]:
    """The columns and dtypes `read_table` returns for `table`: today's schema, `log_date` last."""
    frame = pl.from_arrow(SCHEMAS[table].empty_table())
    assert isinstance(frame, pl.DataFrame)
    schema = dict(frame.schema)
    if table != "runs":
        schema["log_date"] = pl.Date()
    return schema


def empty_frame(table: str) -> pl.LazyFrame:
    return pl.DataFrame(schema=_current(table)).lazy()


def read_table(out: str | os.PathLike[str], table: str) -> pl.LazyFrame:
    """A lazy frame over `table` of every committed run, `log_date` (a Date) included.

    Runs written with older tables schemas read as today's: a column added since (such as
    `findings.code`, schema 2) is null in their rows. Files are scanned in path order, one scan
    per stretch of files of one schema version, so mixing versions never reorders rows.
    """
    listing = _committed(_check(out, table), table, None)
    if not listing.files:
        return empty_frame(table)
    current = _current(table)
    with _diagnosed(listing):  # reading each version's schema opens a file
        frames = [
            _as_current(_scan(table, [path for path, _ in group], listing.remote), current)
            for _, group in groupby(listing.files, key=lambda item: item[1])
        ]
    scan = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
    return _checked_source(scan, listing, current)


@contextmanager
def _diagnosed(listing: _Listing) -> Iterator[None]:
    """Turn a failure to read the listed files into the `DatasetError` that says which and why."""
    try:
        yield
    except (OSError, pl.exceptions.PolarsError, pa.ArrowException) as exc:
        # pa.ArrowException: a remote dataset is read by pyarrow's scanner, whose error for a
        # damaged file (ArrowInvalid, a ValueError) is neither of the others
        damage = _damage(listing)
        if damage is not None:
            raise damage from exc
        raise


def _checked_source(
    scan: pl.LazyFrame, listing: _Listing, schema: dict[str, pl.DataType]
) -> pl.LazyFrame:
    """`scan` as a lazy frame that, when collected, first makes sure no listed run has changed,
    and turns a missing or damaged file into an error naming it. Projections, filters and row
    limits are still pushed down into the Parquet scans."""

    def source(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        changed = _changed(listing)
        if changed is not None:
            raise changed
        frame = scan
        if predicate is not None:
            frame = frame.filter(predicate)
        if with_columns is not None:
            frame = frame.select(with_columns)
        if n_rows is not None:
            frame = frame.head(n_rows)
        with _diagnosed(listing):
            result = frame.collect()
        changed = _changed(listing)  # replaced while being read: never a mix of old and new
        if changed is not None:
            raise changed
        yield result

    return register_io_source(source, schema=schema)


def _scan(table: str, files: list[str], remote: str | None = None) -> pl.LazyFrame:
    if remote is not None:
        return _scan_remote(table, files, remote)
    if table == "runs":
        return pl.scan_parquet(files, glob=False)
    return pl.scan_parquet(
        files, glob=False, hive_partitioning=True, hive_schema={"log_date": pl.Date}
    )


def _as_current(frame: pl.LazyFrame, current: dict[str, pl.DataType]) -> pl.LazyFrame:
    """Today's columns in today's order and dtypes; columns the files lack are null."""
    present = set(frame.collect_schema().names())
    return frame.select(
        (pl.col(name) if name in present else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in current.items()
    )


def _scan_remote(table: str, files: list[str], remote: str) -> pl.LazyFrame:
    """Files on an object store, through pyarrow's dataset over the fsspec filesystem (so the
    credentials are the filesystem's own), with `log_date` from the Hive folder names."""
    import pyarrow.dataset as ds
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    fs, root = location.filesystem(remote)
    arrow_fs = PyFileSystem(FSSpecHandler(fs))
    if table == "runs":
        return pl.scan_pyarrow_dataset(ds.dataset(files, filesystem=arrow_fs, format="parquet"))
    partitioning = ds.partitioning(pa.schema([("log_date", pa.string())]), flavor="hive")
    dataset = ds.dataset(files, filesystem=arrow_fs, format="parquet", partitioning=partitioning,
                         partition_base_dir=f"{root}/{table}")
    return pl.scan_pyarrow_dataset(dataset).with_columns(pl.col("log_date").str.to_date())
