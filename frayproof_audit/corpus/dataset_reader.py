"""Reading the dataset back: Polars lazy frames over exactly the files committed runs list.

Part files left by a run that was killed, or still being moved by a run that is committing,
are never opened: a file counts only when a `runs` row names it.
"""

from __future__ import annotations

import os
from itertools import groupby
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from frayproof_audit.corpus.store import RUNS_FOLDER, STAGING, committed_runs, runs_name
from frayproof_audit.corpus.tables import SCHEMAS, TABLES
from frayproof_audit.errors import InputError


class DatasetError(InputError):
    """OUT is not an audit dataset, or the table name is unknown (exit 2)."""


def _check(out: str | os.PathLike[str], table: str) -> Path:
    if table not in TABLES:
        raise DatasetError(f"unknown table {table!r} (tables: {', '.join(TABLES)})")
    folder = Path(out)
    if not folder.is_dir():
        raise DatasetError(f"'{out}' is not a folder")
    if not (folder / RUNS_FOLDER).is_dir() and not (folder / STAGING).is_dir():
        raise DatasetError(f"'{out}' is not an audit dataset (no {RUNS_FOLDER}/ folder)")
    return folder


def committed_files(out: str | os.PathLike[str], table: str, runs: list[str] | None = None) -> list[str]:
    """Absolute paths of `table`'s files of committed runs (or of `runs`, if given), sorted."""
    return [path for path, _ in _committed(_check(out, table), table, runs)]


def _committed(folder: Path, table: str, runs: list[str] | None) -> list[tuple[str, int]]:
    """(path, tables schema version of the run that wrote it) for `table`'s committed files."""
    found: list[tuple[str, int]] = []
    prefix = f"{table}/"
    for run_id in committed_runs(folder) if runs is None else runs:
        path = folder / RUNS_FOLDER / runs_name(run_id)
        try:
            row = pq.read_table(path, columns=["files", "schema_version"]).to_pylist()[0]
        except FileNotFoundError:
            continue  # replaced by a concurrent commit between listing and reading
        if table == "runs":
            found.append((str(path), row["schema_version"]))
            continue
        version = row["schema_version"]
        found.extend((str(folder / name), version) for name in row["files"] if name.startswith(prefix))
    return sorted(found)


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
    files = _committed(_check(out, table), table, None)
    if not files:
        return empty_frame(table)
    current = _current(table)
    frames = [
        _as_current(_scan(table, [path for path, _ in group]), current)
        for _, group in groupby(files, key=lambda item: item[1])
    ]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")


def _scan(table: str, files: list[str]) -> pl.LazyFrame:
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
