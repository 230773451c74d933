"""What of an aligned pair is drawn in full: long unmarked stretches of kept or dropped messages
fold into one line that says what they are, so a 4,000-message session whose compaction dropped
3,900 messages reads as the few places that matter (the marked ones, the edges of each stretch).
Shared by the terminal view and the report's pair pages, so both fold the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from frayproof_audit.pairview.align import Row
from frayproof_audit.pairview.view import PairView
from frayproof_audit.pairview.wire import WireMessage

FOLDED = ("kept", "dropped")
"""Row kinds whose long unmarked stretches fold (changes, additions and summaries never do)."""


@dataclass(frozen=True, slots=True)
class Gap:
    """A folded stretch of rows of one kind."""

    kind: str
    rows: tuple[Row, ...]
    label: str
    """`37 kept messages: before[3:40] = after[1:38]`."""


def row_label(view: PairView, row: Row) -> str:
    """`before[3] = after[1]`, `before[4]`, `after[2]`."""
    parts = []
    if row.before is not None:
        parts.append(view.before[row.before].label)
    if row.after is not None:
        parts.append(view.after[row.after].label)
    return " = ".join(parts) if row.kind == "kept" else " → ".join(parts)


def span(messages: Sequence[WireMessage]) -> str:
    """The labels of consecutive messages as one span (`before[3:40]`)."""
    first, last = messages[0], messages[-1]
    if first.index is not None and last.index is not None and first is not last:
        return f"{first.snapshot}[{first.index}:{last.index + 1}]"
    return first.label if first is last else f"{first.label}..{last.label}"


def _marked(view: PairView, row: Row) -> bool:
    return ((row.before is not None and view.marked("before", row.before))
            or (row.after is not None and view.marked("after", row.after)))


def _gap(view: PairView, rows: Sequence[Row]) -> Gap:
    kind = rows[0].kind
    noun = "message" if len(rows) == 1 else "messages"
    old = [view.before[r.before] for r in rows if r.before is not None]
    new = [view.after[r.after] for r in rows if r.after is not None]
    where = " = ".join(span(messages) for messages in (old, new) if messages)
    return Gap(kind, tuple(rows), f"{len(rows):,} {kind} {noun}: {where}")


def shown_rows(view: PairView, keep: int | None) -> list[Row | Gap]:
    """The view's rows with each unmarked stretch of more than `2 * keep + 1` kept (or dropped)
    rows folded to its first and last `keep` around a `Gap`; `keep` None folds nothing."""
    if keep is None:
        return list(view.rows)
    out: list[Row | Gap] = []
    stretch: list[Row] = []

    def flush() -> None:
        if len(stretch) > 2 * keep + 1:
            out.extend(stretch[:keep])
            out.append(_gap(view, stretch[keep:len(stretch) - keep]))
            out.extend(stretch[len(stretch) - keep:])
        else:
            out.extend(stretch)
        stretch.clear()

    for row in view.rows:
        if row.kind in FOLDED and not _marked(view, row) and (not stretch or stretch[0].kind == row.kind):
            stretch.append(row)
            continue
        flush()
        if row.kind in FOLDED and not _marked(view, row):
            stretch.append(row)
        else:
            out.append(row)
    flush()
    return out
