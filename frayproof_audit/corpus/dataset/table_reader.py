"""Reading the dataset back: Polars lazy frames over exactly the files committed runs list.

Part files left by a run that was killed, or still being moved by a run that is committing,
are never opened: a file counts only when a `runs` row names it.

`read_table` lists the files when it is called and reads them when the frame is collected. A run
replaced (same `--run-id`) or deleted in between is detected at collection, from its `runs` file,
and raises `DatasetChanged`; a file that is missing or cannot be read raises `DatasetError` naming
it. Local paths are made absolute (so Polars never takes `a:b` for a URI scheme); a dataset on
an object store (`s3://bucket/audit`) is listed, checked and read through fsspec, with the same
rules.

Every dataset file is opened here, and none is trusted: a FIFO, device or folder where a file
should be is refused by name before anything could block on it; a `runs` file must be one row of
the `runs` schema of its version, naming its own run and listing only part files of that run;
a part file must hold exactly the columns and types of its run's schema version. The `runs`
files are checked whole when listed (they are read then anyway); part files are checked by the
scan itself, which is given each version's schema, so a healthy dataset costs no extra read,
and a scan that fails is diagnosed file by file to name the damaged one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from pathlib import Path
from typing import IO

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from polars.io.plugins import register_io_source

from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.inputs.expansion import file_type
from frayproof_audit.corpus.store.arrow_tables import (
    PARTITIONED_TABLES,
    SCHEMAS,
    TABLES,
    TABLES_SCHEMA_VERSION,
    schema_of,
)
from frayproof_audit.corpus.store.layout import (
    RUNS_FOLDER,
    STAGING,
    StoreError,
    committed_runs,
    output_location,
    run_of_part,
    runs_name,
)
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
        try:
            dataset = fs.isdir(f"{root}/{RUNS_FOLDER}") or fs.isdir(f"{root}/{STAGING}")
        except OSError as exc:
            raise DatasetError(f"cannot read dataset '{out}': {_reason(exc)}") from None
        if not dataset:
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

    table: str
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
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def _open(path: str, remote: str | None, run_id: str | None = None) -> IO[bytes]:
    """The one way a dataset file is opened. A local one is opened without blocking and refused
    unless it is a regular file: opening a FIFO for reading waits for a writer, forever."""
    if remote is not None:
        handle: IO[bytes] = location.filesystem(remote)[0].open(path, "rb")
        return handle
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode, run_id)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _damaged(path: str, reason: str, run_id: str | None = None) -> DatasetError:
    run = f" (run '{run_id}')" if run_id is not None else ""
    return DatasetError(f"damaged dataset: cannot read '{path}'{run}: {reason}")


def _not_regular(path: str, mode: int, run_id: str | None) -> DatasetError:
    return _damaged(path, f"it is {file_type(mode)}, not a regular file", run_id)


def _check_regular(path: str, run_id: str) -> None:
    """Refuse a listed part file that is not a regular file (the scan would open it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: the scan fails and `_damage` says which and why
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, run_id)


def _runs_of(folder: Path | str) -> list[str]:
    if isinstance(folder, Path):
        try:
            return committed_runs(folder)
        except OSError as exc:
            raise DatasetError(f"cannot list '{folder / RUNS_FOLDER}': {exc.strerror or exc}") from None
    fs, root = location.filesystem(folder)
    try:
        paths = fs.glob(f"{root}/{RUNS_FOLDER}/part-*.parquet")
    except OSError as exc:
        raise DatasetError(f"cannot list '{folder}/{RUNS_FOLDER}': {_reason(exc)}") from None
    names = [path.rsplit("/", 1)[-1] for path in paths]
    return sorted(name[len("part-") : -len(".parquet")] for name in names)


_LISTED = re.compile(rf"({'|'.join(PARTITIONED_TABLES)})/log_date=\d{{4}}-\d{{2}}-\d{{2}}/(part-[^/]+)")
"""A name a `runs` row may list: a part file of a table, in a `log_date` folder."""


def _read_runs_file(path: str, run_id: str, remote: str | None) -> tuple[int, list[str]] | None:
    """(tables schema version, files listed) of the `runs` file of `run_id`, after checking it
    is one: None when it vanished (replaced by a concurrent commit between listing and reading)."""
    try:
        with _open(path, remote) as handle:
            parquet = pq.ParquetFile(handle, pre_buffer=False)  # no Arrow thread outlives the read
            schema = parquet.schema_arrow
            if _dtypes(schema.remove_metadata()).get("schema_version") != pl.Int32():
                raise _damaged(path, "not a runs file: no int32 column 'schema_version'")
            present = [name for name in ("run_id", "files", "schema_version") if name in schema.names]
            rows = parquet.read(columns=present, use_threads=False).to_pylist()
    except FileNotFoundError:
        return None
    except (OSError, pa.ArrowException) as exc:
        raise _damaged(path, _reason(exc)) from None
    if len(rows) != 1:
        raise _damaged(path, "the file has no row" if not rows
                       else f"it holds {len(rows)} rows, and a runs file holds one")
    version = rows[0]["schema_version"]
    if version is None:
        raise _damaged(path, "no value in column 'schema_version'")
    if version > TABLES_SCHEMA_VERSION:
        raise DatasetError(
            f"cannot read '{path}': run '{run_id}' was written with tables schema {version}, and"
            f" this frayproof-audit reads schemas 1 to {TABLES_SCHEMA_VERSION}: upgrade it")
    if version < 1:
        raise _damaged(path, f"schema_version {version} is not a tables schema version")
    problem = _schema_problem(schema, "runs", version)
    if problem is not None:
        raise _damaged(path, problem)
    empty = [name for name in ("run_id", "files") if rows[0][name] is None]
    if empty:
        raise _damaged(path, f"no value in column {_names(empty)}")
    if rows[0]["run_id"] != run_id:
        raise _damaged(path, f"it is the runs row of run '{rows[0]['run_id']}', not of run '{run_id}'")
    files: list[str] = rows[0]["files"]
    for name in files:
        match = _LISTED.fullmatch(name) if isinstance(name, str) else None
        if match is None or run_of_part(match.group(2)) != run_id:
            raise _damaged(path, f"it lists '{name}', which is not a part file of run '{run_id}'")
    return version, files


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
        row = _read_runs_file(path, run_id, remote)
        if row is None:
            continue
        if identity is not None:
            seen[run_id] = (path, identity)
        version, files = row
        names = [path] if table == "runs" else [
            f"{base}/{name}" for name in files if name.startswith(prefix)
        ]
        for name in names:
            if remote is None and table != "runs":
                _check_regular(name, run_id)
            found.append((name, version))
            owners[name] = run_id
    return _Listing(table, sorted(found), owners, seen, remote)


@lru_cache(maxsize=64)
def _dtypes(schema: pa.Schema) -> dict[str, pl.DataType]:
    """Column → Polars dtype, as a scan reads it (`string` and `large_string` alike); an empty
    dict when Polars cannot read the columns at all. `schema` without metadata (cache key)."""
    try:
        frame = pl.from_arrow(schema.empty_table())
    except (pl.exceptions.PolarsError, pa.ArrowException, TypeError, ValueError):
        return {}
    assert isinstance(frame, pl.DataFrame)
    return dict(frame.schema)


def _expected(table: str, version: int) -> dict[str, pl.DataType]:
    return _dtypes(schema_of(table, version))


def _names(names: Sequence[str], cap: int = 3) -> str:
    shown = ", ".join(f"'{name}'" for name in names[:cap])
    return shown + (f" and {len(names) - cap} more" if len(names) > cap else "")


def _schema_problem(actual: pa.Schema, table: str, version: int) -> str | None:
    """What keeps a file of `table` from being one of tables schema `version`, or None."""
    expected = _expected(table, version)
    found = _dtypes(actual.remove_metadata())
    missing = [name for name in expected if name not in found]
    unknown = [name for name in found if name not in expected]
    if not found and actual.names:
        unknown = list(actual.names)
    parts = []
    if missing:
        parts.append(f"no column {_names(missing)}")
    if unknown:
        parts.append(f"unknown column {_names(unknown)}")
    parts += [f"column '{name}' is {found[name]}, not {kind}"
              for name, kind in expected.items() if name in found and found[name] != kind][:3]
    if not parts:
        return None
    return f"not a {table} file of tables schema {version} ({'; '.join(parts)})"


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
    """What is wrong with the listed files, if anything: a run changed, or a file missing,
    unreadable, not a regular file, or not of its run's schema."""
    changed = _changed(listing)
    if changed is not None:
        return changed
    for path, version in listing.files:
        run_id = listing.owners[path]
        try:
            with _open(path, listing.remote, run_id) as handle:
                schema = pq.read_metadata(handle).schema.to_arrow_schema()
        except FileNotFoundError:
            return DatasetError(f"damaged dataset: run '{run_id}' lists '{path}', which is missing")
        except DatasetError as exc:
            return exc
        except (OSError, pa.ArrowException) as exc:
            return _damaged(path, _reason(exc), run_id)
        problem = _schema_problem(schema, listing.table, version)
        if problem is not None:
            return _damaged(path, problem, run_id)
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
    with _diagnosed(listing):  # a remote scan checks each file's schema when it is made
        frames = [
            _as_current(_scan(listing, [path for path, _ in group], version), table, version, current)
            for version, group in groupby(listing.files, key=lambda item: item[1])
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


def _scan(listing: _Listing, files: list[str], version: int) -> pl.LazyFrame:
    """The files of one schema version, scanned with that version's exact schema: a file with
    a column more, one fewer (among those read) or of another type fails the scan."""
    table = listing.table
    if listing.remote is not None:
        return _scan_remote(listing, files, version)
    schema = _expected(table, version)
    if table == "runs":
        return pl.scan_parquet(files, glob=False, hive_partitioning=False, schema=schema,
                               missing_columns="raise", extra_columns="raise")
    return pl.scan_parquet(
        files, glob=False, hive_partitioning=True, hive_schema={"log_date": pl.Date}, schema=schema,
        missing_columns="raise", extra_columns="raise",
    )


def _as_current(
    frame: pl.LazyFrame, table: str, version: int, current: dict[str, pl.DataType]
) -> pl.LazyFrame:
    """Today's columns in today's order and dtypes; columns added since `version` are null."""
    present = set(schema_of(table, version).names) | {"log_date"}
    return frame.select(
        (pl.col(name) if name in present else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in current.items()
    )


def _scan_remote(listing: _Listing, files: list[str], version: int) -> pl.LazyFrame:
    """Files on an object store, through pyarrow's dataset over the fsspec filesystem (so the
    credentials are the filesystem's own), with `log_date` from the Hive folder names.

    pyarrow fills a missing column with nulls and drops an unknown one, so each file's schema
    is checked here; the footer it reads is kept by the fragment and reused by the scan."""
    import pyarrow.dataset as ds
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    table = listing.table
    fs, root = location.filesystem(listing.remote or "")
    arrow_fs = PyFileSystem(FSSpecHandler(fs))
    schema = schema_of(table, version)
    if table == "runs":
        dataset = ds.dataset(files, schema=schema, filesystem=arrow_fs, format="parquet")
    else:
        partitioning = ds.partitioning(pa.schema([("log_date", pa.string())]), flavor="hive")
        dataset = ds.dataset(files, schema=schema.append(pa.field("log_date", pa.string())),
                             filesystem=arrow_fs, format="parquet", partitioning=partitioning,
                             partition_base_dir=f"{root}/{table}")
    for fragment in dataset.get_fragments():
        problem = _schema_problem(fragment.physical_schema, table, version)
        if problem is not None:
            raise _damaged(fragment.path, problem, listing.owners.get(fragment.path))
    frame = pl.scan_pyarrow_dataset(dataset)
    return frame if table == "runs" else frame.with_columns(pl.col("log_date").str.to_date())


def read_run_files(
    out: str | os.PathLike[str], table: str, run_id: str, columns: list[str]
) -> list[tuple[str, pa.Table]]:
    """Each file of `table` that committed run `run_id` lists, in path order, read whole: its
    `columns` in today's types (null where the run's schema version lacks them). Raises
    `DatasetError` naming a file that is missing, not regular, damaged or of another schema."""
    listing = _committed(_check(out, table), table, [run_id])
    today = SCHEMAS[table]
    found = []
    for path, version in listing.files:
        try:
            with _open(path, listing.remote, run_id) as handle:
                parquet = pq.ParquetFile(handle, pre_buffer=False)
                problem = _schema_problem(parquet.schema_arrow, table, version)
                if problem is not None:
                    raise _damaged(path, problem, run_id)
                present = [name for name in columns if name in parquet.schema_arrow.names]
                data = parquet.read(columns=present, use_threads=False)
        except FileNotFoundError:
            raise DatasetError(f"damaged dataset: run '{run_id}' lists '{path}', which is missing") from None
        except (OSError, pa.ArrowException) as exc:
            raise _damaged(path, _reason(exc), run_id) from None
        arrays = [data[name] if name in present else pa.nulls(data.num_rows, today.field(name).type)
                  for name in columns]
        schema = pa.schema([today.field(name) for name in columns])
        found.append((path, pa.Table.from_arrays(arrays, schema=schema)))
    return found
