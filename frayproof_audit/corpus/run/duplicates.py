"""Repeated pair ids across the shards of a run: the `duplicate` flag no worker alone can set.

A worker flags a record whose pair id an earlier record of its own shard had (`pairs`,
`findings` and `mutants` rows alike). A record repeated in another shard (a log delivered
twice, two files) is found here, in the parent, once every shard is staged and before the
commit: the pair ids of the staged `pairs` files are read (one column), and when one is the
first record of its id in more than one shard, the shards after the first have their staged
files of all three tables rewritten with those ids flagged. The first record of an id, in
input order (shard order, then record order), is the one counted; the others are kept, every
record being one `pairs` row, and flagged, so every rate counts the pair once.

A run without repeated ids pays for reading the `pair_id` column back, nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from frayproof_audit.corpus.run.tally import Tally
from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES
from frayproof_audit.corpus.store.failure_rule import Blame, counts_finding
from frayproof_audit.corpus.store.pair_status import PairStatus


class StagedFiles(Protocol):
    """What a stage (local or on an object store) offers the post-pass."""

    staged: list[str]

    def read_staged_file(self, relative: str, columns: list[str] | None = None) -> pa.Table: ...

    def replace_staged(self, relative: str, table: pa.Table, metadata: dict[str, str]) -> None: ...


def shard_of(relative: str) -> int:
    """The shard ordinal in a staged file's name (`.../part-<run_id>-<nnnnn>.parquet`)."""
    return int(relative.rsplit("-", 1)[1].split(".", 1)[0])


def mark_duplicates(stage: StagedFiles, meta: Callable[[str], dict[str, str]], tally: Tally) -> int:
    """Flag the records repeated across shards (see the module docstring); count them into
    `tally.duplicates` by status. Returns how many records were flagged here."""
    pairs = sorted(name for name in stage.staged if name.startswith("pairs/"))
    parts = [stage.read_staged_file(relative, ["pair_id", "duplicate", "status", "introduced_errors"])
             for relative in pairs]
    if not parts:
        return 0
    every = pa.concat_tables(parts)
    firsts_mask = pc.invert(pc.fill_null(every["duplicate"], False))
    if pc.count_distinct(every["pair_id"].filter(firsts_mask)).as_py() == (pc.sum(firsts_mask).as_py() or 0):
        return 0  # the common case: no id is the first of its shard in two shards
    shards = pa.chunked_array([pa.array([shard_of(relative)] * part.num_rows, pa.int64())
                               for relative, part in zip(pairs, parts, strict=True)])
    firsts = every.append_column("shard", shards).filter(firsts_mask)
    counted = firsts.group_by("pair_id").aggregate([("shard", "min"), ("shard", "count")])
    repeated = counted.filter(pc.greater(counted["shard_count"], 1))
    joined = firsts.join(repeated.select(["pair_id", "shard_min"]), "pair_id")
    later = joined.filter(pc.greater(joined["shard"], joined["shard_min"]))
    by_shard: dict[int, set[str]] = {}
    for pair_id, shard, status, introduced in zip(
            later["pair_id"].to_pylist(), later["shard"].to_pylist(), later["status"].to_pylist(),
            later["introduced_errors"].to_pylist(), strict=True):
        by_shard.setdefault(shard, set()).add(pair_id)
        tally.count_duplicate(status)
        if status == PairStatus.FAIL:  # its shard counted it as a failure of blame's and the gates'
            tally.uncount_failure(introduced is None or introduced > 0)
    for relative in sorted(stage.staged):
        table_name = relative.split("/", 1)[0]
        ids = by_shard.get(shard_of(relative)) if table_name in PARTITIONED_TABLES else None
        if ids:
            _flag(stage, relative, table_name, ids, meta, tally)
    return int(later.num_rows)


def _flag(stage: StagedFiles, relative: str, table_name: str, ids: set[str],
          meta: Callable[[str], dict[str, str]], tally: Tally) -> None:
    """Rewrite one staged file with the rows of `ids` flagged, and take the newly flagged
    findings and mutants out of the run's totals (the worker counted them)."""
    table = stage.read_staged_file(relative)
    before = pc.fill_null(table["duplicate"], False)
    hit = pc.is_in(table["pair_id"], value_set=pa.array(sorted(ids), pa.string()))
    if not pc.any(hit).as_py():
        return
    new = table.filter(pc.and_(hit, pc.invert(before)))
    if table_name == "mutants":
        for operator, status in zip(new["operator"].to_pylist(), new["status"].to_pylist(),
                                    strict=True):
            tally.uncount_mutant(operator, status)
    elif table_name == "findings":
        per_pair: dict[tuple[str, str], list[int]] = {}
        for pair_id, check, severity, origin in zip(
                new["pair_id"].to_pylist(), new["check"].to_pylist(), new["severity"].to_pylist(),
                new["origin"].to_pylist(), strict=True):
            counts = per_pair.setdefault((pair_id, check), [0, 0, 0])
            counts[0] += 1
            counts[1] += severity == "error"
            counts[2] += severity == "error" and counts_finding(origin, Blame.INTRODUCED)
        for (_, check), (found, errors, introduced) in per_pair.items():
            tally.uncount_check(check, found, errors, introduced)
    index = table.schema.get_field_index("duplicate")
    flagged = pc.or_(before, hit)
    table = table.set_column(index, table.schema.field(index), flagged)
    stage.replace_staged(relative, table.replace_schema_metadata(None), meta(table_name))
