"""Arrow columns as Polars reads them: the dtypes a scan compares a file's columns with.

Polars reads `string` and `large_string` alike (and so on), so two Arrow schemas that differ
can be the same table to a scan. Only the readers that build Polars frames, and the check of a
file whose columns are not exactly its schema's (`checked_files.schema_problem`), import this.
"""

from __future__ import annotations

from functools import lru_cache

import polars as pl
import pyarrow as pa


@lru_cache(maxsize=64)
def scan_dtypes(schema: pa.Schema) -> dict[str, pl.DataType]:
    """Column → Polars dtype, as a scan reads it (`string` and `large_string` alike); an empty
    dict when Polars cannot read the columns at all. `schema` without metadata (cache key)."""
    try:
        frame = pl.from_arrow(schema.empty_table())
    except (pl.exceptions.PolarsError, pa.ArrowException, TypeError, ValueError):
        return {}
    assert isinstance(frame, pl.DataFrame)
    return dict(frame.schema)


def is_int32(schema: pa.Schema, name: str) -> bool:
    """Whether a scan reads column `name` of `schema` (without metadata) as an Int32."""
    return scan_dtypes(schema).get(name) == pl.Int32()


def column_problems(actual: pa.Schema, expected: pa.Schema) -> tuple[list[str], list[str], list[str]]:
    """(missing, unknown, retyped) columns of `actual` against `expected`, as a scan sees them;
    a retyped one as "column 'x' is String, not Int64" (at most three)."""
    wanted = scan_dtypes(expected)
    found = scan_dtypes(actual.remove_metadata())
    missing = [name for name in wanted if name not in found]
    unknown = [name for name in found if name not in wanted]
    if not found and actual.names:
        unknown = list(actual.names)
    retyped = [f"column '{name}' is {found[name]}, not {kind}"
               for name, kind in wanted.items() if name in found and found[name] != kind][:3]
    return missing, unknown, retyped
