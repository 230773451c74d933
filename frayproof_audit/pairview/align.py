"""Before and after aligned, message by message: what the compaction kept, dropped, changed,
added, and which new message is its summary.

Messages are compared by their canonical JSON (the same message, exactly: key order aside), and
aligned as the longest run of kept messages in order (`difflib`, without its junk heuristic,
which would skip a system prompt repeated often). Where a stretch of before was replaced by a
stretch of after, a new message pairs with an old one as *changed* when it is still the same
message in substance (the same role and tool call ids; for plain texts, mostly the same text),
and a new text-only message standing where old messages were dropped is the *summary* of those
messages. Frame entries (a request's top-level `system`) align by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Literal

from frayproof_audit.pairview.wire import WireMessage

RowKind = Literal["kept", "dropped", "changed", "added", "summary"]
ROW_KINDS: tuple[RowKind, ...] = ("kept", "dropped", "changed", "added", "summary")
SIMILAR = 0.5
"""Text messages of one role at least this similar (`SequenceMatcher.ratio` of their first
`COMPARED_CHARS` characters) are one message changed, not one dropped and another added."""
COMPARED_CHARS = 160
WINDOW = 24
"""Old messages a new one of a replaced stretch is compared with, from the last one paired:
a stretch of thousands is paired in linear time, and a changed message is rarely far from
where it was."""


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the aligned view: positions into the before and after message lists."""

    kind: RowKind
    before: int | None
    after: int | None
    replaces: tuple[int, int] | None = None
    """A summary's dropped stretch of before, as positions [start, stop)."""


def align(before: Sequence[WireMessage], after: Sequence[WireMessage]) -> list[Row]:
    """Every message of both snapshots exactly once, in an order that reads down both."""
    rows = _frames([m for m in before if m.index is None], [m for m in after if m.index is None])
    old = [m for m in before if m.index is not None]
    new = [m for m in after if m.index is not None]
    matcher = SequenceMatcher(None, [m.key for m in old], [m.key for m in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row("kept", old[i].position, new[j].position)
                        for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "delete":
            rows.extend(Row("dropped", old[i].position, None) for i in range(i1, i2))
        elif tag == "insert":
            rows.extend(Row("added", None, new[j].position) for j in range(j1, j2))
        else:
            rows.extend(_replaced(old[i1:i2], new[j1:j2]))
    return _lone_summary(rows, after)


def _lone_summary(rows: list[Row], after: Sequence[WireMessage]) -> list[Row]:
    """A compaction that dropped messages and added one text-only message elsewhere (Codex
    appends its summary after the kept user messages): that message is the summary of the
    longest dropped stretch. With several such messages, or a summary already found, nothing
    is guessed."""
    if any(row.kind == "summary" for row in rows):
        return rows
    added = [k for k, row in enumerate(rows) if row.kind == "added" and row.after is not None
             and after[row.after].text_only and after[row.after].index is not None]
    dropped = sorted(row.before for row in rows if row.kind == "dropped" and row.before is not None)
    if len(added) != 1 or not dropped:
        return rows
    best = (dropped[0], dropped[0] + 1)
    first = dropped[0]
    for previous, position in pairwise(dropped):
        if position != previous + 1:
            first = position
        if position + 1 - first > best[1] - best[0]:
            best = (first, position + 1)
    row = rows[added[0]]
    return [*rows[:added[0]], Row("summary", None, row.after, best), *rows[added[0] + 1:]]


def _frames(before: list[WireMessage], after: list[WireMessage]) -> list[Row]:
    names = {m.label.split(".", 1)[1]: m for m in before}
    rows = []
    for message in after:
        old = names.pop(message.label.split(".", 1)[1], None)
        if old is None:
            rows.append(Row("added", None, message.position))
        else:
            rows.append(Row("kept" if old.key == message.key else "changed", old.position, message.position))
    rows.extend(Row("dropped", m.position, None) for m in names.values())
    return sorted(rows, key=lambda row: (row.before if row.before is not None else -1, row.after or 0))


def _same_message(old: WireMessage, new: WireMessage) -> bool:
    if old.role != new.role or [p.kind for p in old.parts] != [p.kind for p in new.parts]:
        return False
    if old.call_ids or new.call_ids:
        return old.call_ids == new.call_ids
    text_old = " ".join(p.text for p in old.parts)[:COMPARED_CHARS]
    text_new = " ".join(p.text for p in new.parts)[:COMPARED_CHARS]
    matcher = SequenceMatcher(None, text_old, text_new, autojunk=False)
    # the cheap upper bounds first: most pairs of unrelated texts stop there
    return (matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR
            and matcher.ratio() >= SIMILAR)


def _replaced(old: Sequence[WireMessage], new: Sequence[WireMessage]) -> list[Row]:
    """A stretch of before replaced by a stretch of after: changed pairs in order, the rest
    dropped or added; a new text-only message among dropped ones is their summary."""
    pairs: list[tuple[int, int]] = []
    start = 0
    for j, message in enumerate(new):
        for i in range(start, min(len(old), start + WINDOW)):
            if _same_message(old[i], message):
                pairs.append((i, j))
                start = i + 1
                break
    paired_old = {i for i, _ in pairs}
    paired_new = {j for _, j in pairs}
    dropped = [i for i in range(len(old)) if i not in paired_old]
    rows: list[tuple[float, Row]] = []
    for i, j in pairs:
        rows.append((i, Row("changed", old[i].position, new[j].position)))
    for i in dropped:
        rows.append((i, Row("dropped", old[i].position, None)))
    for j in range(len(new)):
        if j in paired_new:
            continue
        # placed before the next changed pair it precedes, else after everything dropped
        following = [i for i, jj in pairs if jj > j]
        at = (following[0] if following else len(old)) - 0.5
        message = new[j]
        earlier = [i for i, jj in pairs if jj < j]
        before_it = [i for i in dropped if (earlier[-1] if earlier else -1) < i < at]
        if message.text_only and before_it:
            first, last = old[before_it[0]].position, old[before_it[-1]].position + 1
            rows.append((at, Row("summary", None, message.position, (first, last))))
        else:
            rows.append((at, Row("added", None, message.position)))
    return [row for _, row in sorted(rows, key=lambda item: item[0])]
