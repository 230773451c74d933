"""A pair derived from an agent's log (a Codex rollout, a Claude Code transcript, a request
log), read back by deriving its file again with the same source.

Such a pair's record is no line of the file: its before and after are rebuilt from the whole
session (`sources`). So it is read back the way it was made, by the source named in its
`source_kind`, and only handed over when it is the compaction audited: the same pair id at the
same line, and before and after of the same size as compact JSON as the `pairs` row says
(`bytes_before`, `bytes_after`). A file derived once serves every pair wanted from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from frayproof_audit.corpus.dataset.record_readback import State
from frayproof_audit.database_uri import is_database_uri
from frayproof_audit.jsonio import compact
from frayproof_audit.sources import SOURCES, Compaction, derive, file_siblings, read_source


@dataclass(frozen=True, slots=True)
class DerivedRef:
    """A derived pair as the `pairs` table names it."""

    source_kind: str
    source: str
    source_row: int
    pair_id: str
    bytes_before: int | None
    bytes_after: int | None


@dataclass(frozen=True, slots=True)
class DerivedBack:
    """The pair derived again: `before` and `after` in `format` when `state` is `found`."""

    ref: DerivedRef
    state: State
    before: Any = None
    after: Any = None
    format: str | None = None
    reason: str = ""
    notes: tuple[str, ...] = ()


def is_derived(source_kind: str | None) -> bool:
    """Whether a `pairs.source_kind` names a registered log source (not the audit's own records)."""
    return source_kind is not None and source_kind in SOURCES


def read_derived(refs: Iterable[DerivedRef], root: str | None = None) -> dict[DerivedRef, DerivedBack]:
    """Every derived pair of `refs`, derived again from its file and checked, by reference."""
    return {back.ref: back for back in iter_derived(refs, root)}


def iter_derived(refs: Iterable[DerivedRef], root: str | None = None) -> Iterator[DerivedBack]:
    """`read_derived` as a stream, file by file (each file derived once)."""
    by_file: dict[tuple[str, str], list[DerivedRef]] = {}
    for ref in refs:
        by_file.setdefault((ref.source_kind, ref.source), []).append(ref)
    for (kind, source), wanted in sorted(by_file.items()):
        # a database is read again by its stored name, whose redacted password (`***`) means
        # the one libpq finds itself (PGPASSWORD, ~/.pgpass)
        database = is_database_uri(source)
        path = source if database or root is None or os.path.isabs(source) else os.path.join(root, source)
        if not database and not os.path.isfile(path):
            yield from (DerivedBack(ref, "gone", reason=f"'{source}' no longer exists") for ref in wanted)
            continue
        try:
            derived = derive(kind, source, read_source(kind, path),
                             None if database else file_siblings(path))
        except (OSError, ValueError) as exc:
            yield from (DerivedBack(ref, "unreadable", reason=f"cannot derive '{source}' again: {exc}")
                        for ref in wanted)
            continue
        rows = {(row.source_row, row.pair_id): row for row in derived.rows if isinstance(row, Compaction)}
        for ref in wanted:
            yield _checked(ref, rows.get((ref.source_row, ref.pair_id)))


def _checked(ref: DerivedRef, row: Compaction | None) -> DerivedBack:
    place = f"{ref.source} line {ref.source_row}"
    if row is None:
        return DerivedBack(ref, "changed", reason=f"{place} no longer holds compaction {ref.pair_id} "
                           "(the log changed since the audit)")
    if row.problem is not None or row.before is None or row.after is None:
        return DerivedBack(ref, "unreadable", reason=f"{place}: {row.problem or 'no before or after'}")
    sizes = (len(compact(row.before)), len(compact(row.after)))
    if (ref.bytes_before, ref.bytes_after) != sizes and None not in (ref.bytes_before, ref.bytes_after):
        return DerivedBack(ref, "changed", reason=f"{place} derives another pair than the one audited "
                           f"({sizes[0]:,} and {sizes[1]:,} bytes, not {ref.bytes_before:,} and "
                           f"{ref.bytes_after:,}): the log changed since the audit")
    return DerivedBack(ref, "found", row.before, row.after, row.format, notes=row.notes)
