"""The one way a committed dataset's files are found, opened and checked (Arrow only, no Polars).

Part files left by a run that was killed, or still being moved by a run that is committing,
are never opened: a file counts only when a `runs` row names it. Local paths are made absolute
(so nothing takes `a:b` for a URI scheme); a dataset on an object store (`s3://bucket/audit`) is
listed, checked and read through fsspec, with the same rules.

Every dataset file is opened here (`open_file`), and none is trusted: a FIFO, device or folder
where a file should be is refused by name before anything could block on it; a `runs` file must
be one row of the `runs` schema of its version, naming its own run and listing only part files
of that run; a part file must hold exactly the columns and types of its run's schema version.
Whatever is wrong is a `DatasetError` naming the file: `read_table` and the statistics
(`table_reader.py`), one run's details for the CI outputs (`read_run_files`) and an incremental
audit's plan (`committed_runs_rows`) all read through here, so each says the same thing about
the same damage. The comparison of a file's columns with its schema is Arrow's; Polars (how a
scan would read them, `polars_types.py`) is imported only for a file that is not exactly its
schema, so an audit run never pays for it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

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


def dataset_folder(out: str | os.PathLike[str], table: str) -> Path | str:
    """Where the dataset `out` is (an absolute local folder, or its URI), after checking it is one
    and that `table` is one of its tables."""
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
    return [path for path, _ in committed_listing(dataset_folder(out, table), table, runs).files]


_Identity = tuple[int | str, int | str, int]
"""(inode, mtime_ns, size) of a `runs` file (on an object store: ETag, modification time, size):
a replaced run has a new one."""


@dataclass(frozen=True, slots=True)
class Listing:
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


@dataclass(frozen=True, slots=True)
class RunsFile:
    """A checked `runs` file: its tables schema version, the part files it lists, and the values
    of the other columns asked for that its version has."""

    version: int
    files: list[str]
    values: dict[str, Any] = field(default_factory=dict)


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


def open_file(path: str, remote: str | None, run_id: str | None = None) -> IO[bytes]:
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


def damaged(path: str, reason: str, run_id: str | None = None) -> DatasetError:
    """The error for a dataset file that cannot be what it should: `damaged dataset: …`."""
    run = f" (run '{run_id}')" if run_id is not None else ""
    return DatasetError(f"damaged dataset: cannot read '{path}'{run}: {reason}")


def _not_regular(path: str, mode: int, run_id: str | None) -> DatasetError:
    return damaged(path, f"it is {file_type(mode)}, not a regular file", run_id)


def _check_regular(path: str, run_id: str) -> None:
    """Refuse a listed part file that is not a regular file (the scan would open it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: the scan fails and `diagnose` says which and why
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
_RUNS_COLUMNS = ("run_id", "files", "schema_version")


def read_runs_file(path: str, run_id: str, remote: str | None,
                   columns: Sequence[str] = ()) -> RunsFile | None:
    """The `runs` file of `run_id`, after checking it is one, with the values of `columns` its
    version has: None when it vanished (replaced by a concurrent commit between listing and
    reading)."""
    try:
        with open_file(path, remote, run_id) as handle:
            parquet = pq.ParquetFile(handle, pre_buffer=False)  # no Arrow thread outlives the read
            schema = parquet.schema_arrow
            if not _has_version_column(schema):
                raise damaged(path, "not a runs file: no int32 column 'schema_version'", run_id)
            wanted = [*_RUNS_COLUMNS, *(name for name in columns if name not in _RUNS_COLUMNS)]
            present = [name for name in wanted if name in schema.names]
            rows = parquet.read(columns=present, use_threads=False).to_pylist()
    except FileNotFoundError:
        return None
    except (OSError, pa.ArrowException) as exc:
        raise damaged(path, _reason(exc), run_id) from None
    if len(rows) != 1:
        raise damaged(path, "the file has no row" if not rows
                      else f"it holds {len(rows)} rows, and a runs file holds one", run_id)
    version = rows[0]["schema_version"]
    if version is None:
        raise damaged(path, "no value in column 'schema_version'", run_id)
    if version > TABLES_SCHEMA_VERSION:
        raise DatasetError(
            f"cannot read '{path}': run '{run_id}' was written with tables schema {version}, and"
            f" this frayproof-audit reads schemas 1 to {TABLES_SCHEMA_VERSION}: upgrade it")
    if version < 1:
        raise damaged(path, f"schema_version {version} is not a tables schema version", run_id)
    problem = schema_problem(schema, "runs", version)
    if problem is not None:
        raise damaged(path, problem, run_id)
    empty = [name for name in ("run_id", "files") if rows[0][name] is None]
    if empty:
        raise damaged(path, f"no value in column {_names(empty)}", run_id)
    if rows[0]["run_id"] != run_id:
        raise damaged(path, f"it is the runs row of run '{rows[0]['run_id']}', not of run '{run_id}'",
                      run_id)
    files: list[str] = rows[0]["files"]
    for name in files:
        match = _LISTED.fullmatch(name) if isinstance(name, str) else None
        if match is None or run_of_part(match.group(2)) != run_id:
            raise damaged(path, f"it lists '{name}', which is not a part file of run '{run_id}'", run_id)
    return RunsFile(version, files, {name: rows[0][name] for name in columns if name in rows[0]})


def committed_listing(folder: Path | str, table: str, runs: list[str] | None) -> Listing:
    """`table`'s files of every committed run of the dataset at `folder` (`dataset_folder`), or of
    `runs`, each `runs` file checked."""
    found: list[tuple[str, int]] = []
    owners: dict[str, str] = {}
    seen: dict[str, tuple[str, _Identity]] = {}
    prefix = f"{table}/"
    remote = folder if isinstance(folder, str) else None
    base = location.filesystem(folder)[1] if isinstance(folder, str) else str(folder)
    for run_id in _runs_of(folder) if runs is None else runs:
        path = f"{base}/{RUNS_FOLDER}/{runs_name(run_id)}"
        identity = _identity(path, remote)
        row = read_runs_file(path, run_id, remote)
        if row is None:
            continue
        if identity is not None:
            seen[run_id] = (path, identity)
        names = [path] if table == "runs" else [
            f"{base}/{name}" for name in row.files if name.startswith(prefix)
        ]
        for name in names:
            if remote is None and table != "runs":
                _check_regular(name, run_id)
            found.append((name, row.version))
            owners[name] = run_id
    return Listing(table, sorted(found), owners, seen, remote)


def committed_runs_rows(out: str | os.PathLike[str],
                        columns: Sequence[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(run id, its `runs` file, the values of `columns` it has) of every committed run of the
    dataset `out`, each `runs` file checked; none when `out` holds no dataset yet (an audit's
    first run into it)."""
    try:
        found = output_location(out)
    except StoreError as exc:
        raise DatasetError(str(exc)) from None
    remote = found if isinstance(found, str) else None
    if remote is not None:
        fs, base = location.filesystem(remote)
        fs.invalidate_cache()
        folder: Path | str = remote
    else:
        folder = Path(os.path.abspath(found))
        base = str(folder)
    rows = []
    for run_id in _runs_of(folder):
        path = f"{base}/{RUNS_FOLDER}/{runs_name(run_id)}"
        row = read_runs_file(path, run_id, remote, columns)
        if row is not None:
            rows.append((run_id, path, row.values))
    return rows


def _has_version_column(schema: pa.Schema) -> bool:
    """Whether a scan reads the file's `schema_version` as an Int32. A file whose columns are
    exactly a `runs` schema's (of any version) has it; any other is decided by Polars, imported
    only then."""
    columns = _columns(schema)
    if any(columns == _columns(schema_of("runs", version))
           for version in range(1, TABLES_SCHEMA_VERSION + 1)):
        return True
    from frayproof_audit.corpus.dataset import polars_types  # not on a healthy file's path

    return polars_types.is_int32(schema.remove_metadata(), "schema_version")


def _columns(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    return [(column.name, column.type) for column in schema]


def _names(names: Sequence[str], cap: int = 3) -> str:
    shown = ", ".join(f"'{name}'" for name in names[:cap])
    return shown + (f" and {len(names) - cap} more" if len(names) > cap else "")


def schema_problem(actual: pa.Schema, table: str, version: int) -> str | None:
    """What keeps a file of `table` from being one of tables schema `version` as a scan reads it,
    or None. A file whose columns are exactly the schema's (names, order and Arrow types) is one;
    any other is compared as Polars reads it (`large_string` is a `string`, say), Polars being
    imported only then (an audit never reads a file that is not exactly its schema's)."""
    expected = schema_of(table, version)
    if _columns(actual) == _columns(expected):
        return None
    from frayproof_audit.corpus.dataset import polars_types  # not on a healthy file's path

    missing, unknown, retyped = polars_types.column_problems(actual, expected)
    parts = []
    if missing:
        parts.append(f"no column {_names(missing)}")
    if unknown:
        parts.append(f"unknown column {_names(unknown)}")
    parts += retyped
    if not parts:
        return None
    return f"not a {table} file of tables schema {version} ({'; '.join(parts)})"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, IndexError):
        return "the file has no row"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text


def changed(listing: Listing) -> DatasetChanged | None:
    """A `DatasetChanged` naming the first run whose `runs` file is no longer the one listed."""
    for run_id, (path, identity) in sorted(listing.runs.items()):
        if _identity(path, listing.remote) != identity:
            return DatasetChanged(
                f"run '{run_id}' was replaced or deleted after read_table() listed its files:"
                " call read_table() again for the current data"
            )
    return None


def diagnose(listing: Listing) -> DatasetError | None:
    """What is wrong with the listed files, if anything: a run changed, or a file missing,
    unreadable, not a regular file, or not of its run's schema."""
    found = changed(listing)
    if found is not None:
        return found
    for path, version in listing.files:
        run_id = listing.owners[path]
        try:
            with open_file(path, listing.remote, run_id) as handle:
                schema = pq.read_metadata(handle).schema.to_arrow_schema()
        except FileNotFoundError:
            return DatasetError(f"damaged dataset: run '{run_id}' lists '{path}', which is missing")
        except DatasetError as exc:
            return exc
        except (OSError, pa.ArrowException) as exc:
            return damaged(path, _reason(exc), run_id)
        problem = schema_problem(schema, listing.table, version)
        if problem is not None:
            return damaged(path, problem, run_id)
    return None


def read_run_files(
    out: str | os.PathLike[str], table: str, run_id: str, columns: list[str]
) -> list[tuple[str, pa.Table]]:
    """Each file of `table` that committed run `run_id` lists, in path order, read whole: its
    `columns` in today's types (null where the run's schema version lacks them). Raises
    `DatasetError` naming a file that is missing, not regular, damaged or of another schema."""
    found_files = committed_listing(dataset_folder(out, table), table, [run_id])
    today = SCHEMAS[table]
    found = []
    for path, version in found_files.files:
        try:
            with open_file(path, found_files.remote, run_id) as handle:
                parquet = pq.ParquetFile(handle, pre_buffer=False)
                problem = schema_problem(parquet.schema_arrow, table, version)
                if problem is not None:
                    raise damaged(path, problem, run_id)
                present = [name for name in columns if name in parquet.schema_arrow.names]
                data = parquet.read(columns=present, use_threads=False)
        except FileNotFoundError:
            raise DatasetError(f"damaged dataset: run '{run_id}' lists '{path}', which is missing") from None
        except (OSError, pa.ArrowException) as exc:
            raise damaged(path, _reason(exc), run_id) from None
        arrays = [data[name] if name in present else pa.nulls(data.num_rows, today.field(name).type)
                  for name in columns]
        schema = pa.schema([today.field(name) for name in columns])
        found.append((path, pa.Table.from_arrays(arrays, schema=schema)))
    return found
