"""Reading the dataset back: Polars lazy frames over exactly the files committed runs list.

`read_table` lists the files when it is called (`checked_files.listing`: only what a `runs` row
names, each `runs` file checked) and reads them when the frame is collected. A run replaced
(same `--run-id`) or deleted in between is detected at collection, from its `runs` file, and
raises `DatasetChanged`; a file that is missing or cannot be read raises `DatasetError` naming
it. Part files are checked by the scan itself, which is given each version's schema, so a
healthy dataset costs no extra read, and a scan that fails is diagnosed file by file
(`checked_files.diagnose`) to name the damaged one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import groupby

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from frayproof_audit.corpus.dataset.checked_files import (
    Listing,
    changed,
    committed_listing,
    damaged,
    dataset_folder,
    diagnose,
    schema_problem,
)
from frayproof_audit.corpus.dataset.polars_types import scan_dtypes
from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.store.arrow_tables import SCHEMAS, schema_of


def _expected(table: str, version: int) -> dict[str, pl.DataType]:
    return scan_dtypes(schema_of(table, version))


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
    found = committed_listing(dataset_folder(out, table), table, None)
    if not found.files:
        return empty_frame(table)
    current = _current(table)
    with _diagnosed(found):  # a remote scan checks each file's schema when it is made
        frames = [
            _as_current(_scan(found, [path for path, _ in group], version), table, version, current)
            for version, group in groupby(found.files, key=lambda item: item[1])
        ]
    scan = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
    return _checked_source(scan, found, current)


@contextmanager
def _diagnosed(listing: Listing) -> Iterator[None]:
    """Turn a failure to read the listed files into the `DatasetError` that says which and why."""
    try:
        yield
    except (OSError, pl.exceptions.PolarsError, pa.ArrowException) as exc:
        # pa.ArrowException: a remote dataset is read by pyarrow's scanner, whose error for a
        # damaged file (ArrowInvalid, a ValueError) is neither of the others
        damage = diagnose(listing)
        if damage is not None:
            raise damage from exc
        raise


def _checked_source(
    scan: pl.LazyFrame, listing: Listing, schema: dict[str, pl.DataType]
) -> pl.LazyFrame:
    """`scan` as a lazy frame that, when collected, first makes sure no listed run has changed,
    and turns a missing or damaged file into an error naming it. Projections, filters and row
    limits are still pushed down into the Parquet scans."""

    def source(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        gone = changed(listing)
        if gone is not None:
            raise gone
        frame = scan
        if predicate is not None:
            frame = frame.filter(predicate)
        if with_columns is not None:
            frame = frame.select(with_columns)
        if n_rows is not None:
            frame = frame.head(n_rows)
        with _diagnosed(listing):
            result = frame.collect()
        gone = changed(listing)  # replaced while being read: never a mix of old and new
        if gone is not None:
            raise gone
        yield result

    return register_io_source(source, schema=schema)


def _scan(listing: Listing, files: list[str], version: int) -> pl.LazyFrame:
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


def _scan_remote(listing: Listing, files: list[str], version: int) -> pl.LazyFrame:
    """Files on an object store, through pyarrow's dataset over the fsspec filesystem (so the
    credentials are the filesystem's own), with `log_date` from the Hive folder names.

    pyarrow fills a missing column with nulls and drops an unknown one, so each file's schema
    is checked here; the footer it reads is kept by the fragment and reused by the scan."""
    import pyarrow.dataset as ds  # only for a dataset on an object store
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
        problem = schema_problem(fragment.physical_schema, table, version)
        if problem is not None:
            raise damaged(fragment.path, problem, listing.owners.get(fragment.path))
    frame = pl.scan_pyarrow_dataset(dataset)
    return frame if table == "runs" else frame.with_columns(pl.col("log_date").str.to_date())
