"""Parquet files written and read through Python file objects, never through a path string.

Arrow readers and writers given a string infer a URI from it (`in:1/x.parquet` is "filesystem
`in`"), so a local file is always opened here and the open file handed to Arrow.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq


def write_parquet(table: pa.Table, path: Path, metadata: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:  # a file object: pyarrow never parses the path as a URI
        pq.write_table(table.replace_schema_metadata(metadata), handle, compression="zstd")


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
