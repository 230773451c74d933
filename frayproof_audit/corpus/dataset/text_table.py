"""Plain-text tables of Polars frames for the terminal (`stats`, `trend`): rates as
percentages, integers with thousands separators, null as `-`, numbers right-aligned."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import polars as pl


def cell(value: Any, percent: bool = False) -> str:
    if value is None:
        return "-"
    if percent and isinstance(value, float):
        return f"{value:.1%}"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def text_table(frame: pl.DataFrame, percent: Collection[str] = (), indent: str = "  ") -> str:
    """`frame` as aligned text; the columns in `percent` are shown as percentages."""
    if frame.height == 0:
        return f"{indent}(none)"
    rows = [[cell(v, c in percent) for c, v in zip(frame.columns, row, strict=True)]
            for row in frame.iter_rows()]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(frame.columns)]
    numeric = [frame[c].dtype.is_numeric() for c in frame.columns]

    def line(cells: list[str]) -> str:
        return indent + "  ".join(
            text.rjust(w) if num else text.ljust(w)
            for text, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    return "\n".join([line(list(frame.columns)), line(["-" * w for w in widths]), *map(line, rows)])
