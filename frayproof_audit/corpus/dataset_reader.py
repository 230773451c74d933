"""Reading the dataset back: Polars lazy frames over exactly the files committed runs list.

Part files left by a run that was killed, or still being moved by a run that is committing,
are never opened: a file counts only when a `runs` row names it.
"""

from __future__ import annotations

import os
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
    folder = _check(out, table)
    chosen = committed_runs(folder) if runs is None else runs
    if table == "runs":
        return [str(folder / RUNS_FOLDER / runs_name(run_id)) for run_id in chosen]
    found: list[str] = []
    prefix = f"{table}/"
    for run_id in chosen:
        path = folder / RUNS_FOLDER / runs_name(run_id)
        try:
            listed = pq.read_table(path, columns=["files"]).column("files")[0].as_py()
        except FileNotFoundError:
            continue  # replaced by a concurrent commit between listing and reading
        found.extend(str(folder / name) for name in listed if name.startswith(prefix))
    return sorted(found)


def empty_frame(table: str) -> pl.LazyFrame:
    frame = pl.from_arrow(SCHEMAS[table].empty_table())
    assert isinstance(frame, pl.DataFrame)
    if table != "runs":
        frame = frame.with_columns(pl.lit(None, dtype=pl.Date).alias("log_date"))
    return frame.lazy()


def read_table(out: str | os.PathLike[str], table: str) -> pl.LazyFrame:
    """A lazy frame over `table` of every committed run, `log_date` (a Date) included."""
    files = committed_files(out, table)
    if not files:
        return empty_frame(table)
    if table == "runs":
        return pl.scan_parquet(files, glob=False)
    return pl.scan_parquet(
        files, glob=False, hive_partitioning=True, hive_schema={"log_date": pl.Date}
    )
