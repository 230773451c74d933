"""The `--carry` fields of `pairs` (its `carried` column) as columns a reader can group on.

`pairs.carried` is a list of {name, value} entries (tables schema 6; null when a run carried
nothing), one per carried field the record had: a fixed schema however many fields each run
carries, where columns named after them would change the table's schema from run to run.
`stats --by NAME` groups on a carried field through `carried_value`; findings and mutants get
it from their pair (`with_carried`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

PAIR_KEY = ("run_id", "pair_id")


def carried_value(name: str) -> pl.Expr:
    """The value of the carried field `name` of each pair (null when the record lacked it)."""
    entry = pl.element()
    return (pl.col("carried").list.eval(entry.filter(entry.struct.field("name") == name)
                                        .struct.field("value"))
            .list.first().alias(name))


def carried_names(pairs: pl.LazyFrame) -> list[str]:
    """The names the selected pairs carry, sorted."""
    names = (pairs.select(pl.col("carried").explode().struct.field("name")).drop_nulls()
             .unique().collect())
    return sorted(names.to_series().to_list())


def with_carried(frames: Sequence[pl.LazyFrame], pairs: pl.LazyFrame,
                 names: Sequence[str]) -> list[pl.LazyFrame]:
    """`frames` (findings, mutants: keyed by run and pair id) with the carried fields `names`
    of their pair as columns."""
    values = pairs.select(*PAIR_KEY, *names).unique(subset=list(PAIR_KEY), keep="first")
    return [frame.join(values, on=list(PAIR_KEY), how="left") for frame in frames]
