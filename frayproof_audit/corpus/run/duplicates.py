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
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from frayproof_audit.corpus.run.baseline_file import Accepted
from frayproof_audit.corpus.run.tally import Tally
from frayproof_audit.corpus.store.arrow_tables import PARTITIONED_TABLES
from frayproof_audit.corpus.store.failure_rule import Blame, counts_as_failure, counts_finding


class StagedFiles(Protocol):
    """What a stage (local or on an object store) offers the post-pass."""

    staged: list[str]

    def read_staged_file(self, relative: str, columns: list[str] | None = None) -> pa.Table: ...

    def replace_staged(self, relative: str, table: pa.Table, metadata: dict[str, str]) -> None: ...


def shard_of(relative: str) -> int:
    """The shard ordinal in a staged file's name (`.../part-<run_id>-<nnnnn>.parquet`)."""
    return int(relative.rsplit("-", 1)[1].split(".", 1)[0])


def mark_duplicates(stage: StagedFiles, meta: Callable[[str], dict[str, str]], tally: Tally,
                    accepted: Accepted = frozenset()) -> int:
    """Flag the records repeated across shards (see the module docstring) and take back what
    their shards' workers counted of them, exactly as a worker leaves a repeat of its own shard
    out (`accepted`: the known-issue baseline the workers judged the gates by). Returns how
    many records were flagged here."""
    pairs = sorted(name for name in stage.staged if name.startswith("pairs/"))
    parts = [stage.read_staged_file(relative, list(_PAIR_COLUMNS)) for relative in pairs]
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
    ids, shards_of = later["pair_id"].to_pylist(), later["shard"].to_pylist()
    by_shard: dict[int, set[str]] = {}
    for pair_id, shard in zip(ids, shards_of, strict=True):
        by_shard.setdefault(shard, set()).add(pair_id)
    errors: dict[tuple[int, str], _PairErrors] = {}
    for relative in sorted(stage.staged):  # every table's files before the take-backs below
        table_name = relative.split("/", 1)[0]
        shard = shard_of(relative) if table_name in PARTITIONED_TABLES else -1
        flagged_ids = by_shard.get(shard)
        if flagged_ids:
            for pair_id, counts in _flag(stage, relative, table_name, flagged_ids, meta, tally,
                                         accepted).items():
                errors[(shard, pair_id)] = counts
    for pair_id, shard, status, introduced, compactor in zip(
            ids, shards_of, later["status"].to_pylist(), later["introduced_errors"].to_pylist(),
            later["compactor"].to_pylist(), strict=True):
        found = errors.get((shard, pair_id), _PairErrors())
        gated_introduced = (counts_as_failure(status, introduced, Blame.INTRODUCED)
                            and found.introduced > found.accepted_introduced)
        tally.uncount_repeat(status, compactor, introduced, found.errors > found.accepted,
                             gated_introduced)
    return int(later.num_rows)


_PAIR_COLUMNS = ("pair_id", "duplicate", "status", "introduced_errors", "compactor")


@dataclass(slots=True)
class _PairErrors:
    """A repeated record's findings (of one check, or all of them), as its worker counted them
    for the gates: all findings, the errors, the compactor's errors (`--blame introduced`), and
    of each of those the baseline accepts."""

    findings: int = 0
    errors: int = 0
    introduced: int = 0
    accepted: int = 0
    accepted_introduced: int = 0

    def add_error(self, introduced: bool, accepted: bool) -> None:
        self.errors += 1
        self.introduced += introduced
        self.accepted += accepted
        self.accepted_introduced += introduced and accepted


def _flag(stage: StagedFiles, relative: str, table_name: str, ids: set[str],
          meta: Callable[[str], dict[str, str]], tally: Tally,
          accepted: Accepted) -> dict[str, _PairErrors]:
    """Rewrite one staged file with the rows of `ids` flagged, and take the newly flagged
    findings and mutants out of the run's totals (the worker counted them); for a `findings`
    file, each newly flagged pair's error findings."""
    table = stage.read_staged_file(relative)
    before = pc.fill_null(table["duplicate"], False)
    hit = pc.is_in(table["pair_id"], value_set=pa.array(sorted(ids), pa.string()))
    if not pc.any(hit).as_py():
        return {}
    new = table.filter(pc.and_(hit, pc.invert(before)))
    pair_errors: dict[str, _PairErrors] = {}
    if table_name == "mutants":
        from frayproof_audit.mutate.budget import budget_not_judged  # a run that mutates has it

        not_judged: dict[str, int] = {}
        for pair_id, operator, status, reason in zip(
                new["pair_id"].to_pylist(), new["operator"].to_pylist(), new["status"].to_pylist(),
                new["reason"].to_pylist(), strict=True):
            tally.uncount_mutant(operator, status)
            left = budget_not_judged(reason)
            if left:
                not_judged[pair_id] = not_judged.get(pair_id, 0) + left
        for left in not_judged.values():
            tally.uncount_budget(left)
    elif table_name == "findings":
        per_check: dict[tuple[str, str], _PairErrors] = {}
        for pair_id, check, code, severity, origin in zip(
                new["pair_id"].to_pylist(), new["check"].to_pylist(), new["code"].to_pylist(),
                new["severity"].to_pylist(), new["origin"].to_pylist(), strict=True):
            # as `worker._Auditor._checked` counted them
            counts = per_check.setdefault((pair_id, check), _PairErrors())
            counts.findings += 1
            if severity == "error":
                mine, known = counts_finding(origin, Blame.INTRODUCED), (pair_id, code) in accepted
                counts.add_error(mine, known)
                pair_errors.setdefault(pair_id, _PairErrors()).add_error(mine, known)
        for (_, check), counts in per_check.items():
            tally.uncount_check(check, counts.findings, counts.errors, counts.introduced,
                                counts.accepted, counts.accepted_introduced)
    index = table.schema.get_field_index("duplicate")
    flagged = pc.or_(before, hit)
    table = table.set_column(index, table.schema.field(index), flagged)
    stage.replace_staged(relative, table.replace_schema_metadata(None), meta(table_name))
    return pair_errors
