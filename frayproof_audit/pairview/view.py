"""One pair as people debug it: before and after aligned, each finding anchored at the message
and part it names, tool calls linked with their results, surviving mutants at the sites they
changed. What the report's pair pages and `frayproof-audit show` both draw (`html` is theirs,
`text` the terminal's); nothing here knows how it is drawn.

A finding names a snapshot, a wire message (`message_index`) and often a tool call id: its
anchor is that message, at the part holding that id. It is also marked wherever else it points:
the other parts carrying its call id (the call a stranded result lost, in before) and the
messages its text names (`before[3:7]`). A finding of a check that is not the provider's own is
given the provider's error text when the provider would reject the after snapshot at the same
place (`providers.provider_defects`), so a finding can be matched with the 400 someone pasted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.loaded import Loaded
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.pairview.align import ROW_KINDS, Row, RowKind, align
from frayproof_audit.pairview.wire import Part, WireMessage, read_messages
from frayproof_audit.providers import RULES, provider_defects
from frayproof_audit.report import Violation

_PLACE = re.compile(r"\b(before|after)\[(\d+)(?::(\d+))?\]")
_FRAME = re.compile(r"\b(after)\.(\w+)")


@dataclass(frozen=True, slots=True)
class Finding:
    """A finding as the `findings` table (or a `Report`) holds it."""

    check: str
    code: str | None
    severity: str
    snapshot: str
    message_index: int | None
    message: str
    tool_call_id: str | None = None
    pin: str | None = None
    rule: str | None = None
    repairable: bool | None = None
    origin: str | None = None
    """`introduced` or `inherited`, where the dataset records it."""

    @classmethod
    def of(cls, violation: Violation) -> Finding:
        return cls(violation.check, violation.code, violation.severity, violation.snapshot,
                   violation.message_index, violation.message, violation.tool_call_id,
                   violation.pin, violation.rule)

    @property
    def where(self) -> str:
        place = self.snapshot if self.message_index is None else f"{self.snapshot}[{self.message_index}]"
        extra = [f"{label} {value}" for label, value in
                 (("call", self.tool_call_id), ("pin", self.pin), ("rule", self.rule)) if value]
        return place + (f" ({', '.join(extra)})" if extra else "")


@dataclass(frozen=True, slots=True)
class Survivor:
    """A mutant the contract accepted: the edit (`description` at `sites`) and the contract rule
    that would have caught it."""

    operator: str
    description: str
    sites: tuple[str, ...]
    rule: str


def survivor_rule(operator: str, reason: str | None) -> str:
    """The contract rule that would catch a survivor: its recorded reason, else its operator's hint."""
    if reason:
        return reason
    try:
        return get_operator(operator).survivor_hint
    except KeyError:
        return ""


@dataclass(frozen=True, slots=True)
class Anchor:
    """A place in the view: a message (by its position in its snapshot's list) and optionally one
    of its parts; `position` None is the snapshot as a whole."""

    snapshot: str
    position: int | None
    part: int | None
    label: str


@dataclass(frozen=True, slots=True)
class Mark:
    """What is drawn at an anchor: `ref` names the finding (`F1`) or survivor (`S1`)."""

    ref: str
    kind: str
    """`error`, `warning` (a finding's own place), `related` (a place it points at), `survivor`."""
    code: str
    note: str
    """What follows the badge: `check: message`, `named by F1, at after[2]`, the mutant's edit."""


@dataclass(frozen=True, slots=True)
class ShownFinding:
    ref: str
    finding: Finding
    anchor: Anchor | None
    """Where it is marked (None: the messages could not be read)."""
    related: tuple[Anchor, ...]
    provider: tuple[str, ...]
    """The provider's error texts for the same place (`profile: text`)."""


@dataclass(frozen=True, slots=True)
class ShownSurvivor:
    ref: str
    survivor: Survivor
    anchors: tuple[Anchor, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """From a call to its results, or from a result to its call."""

    targets: tuple[Anchor, ...]
    note: str
    """In words, with each target's label and, when it is in the other snapshot, its fate there."""
    heading: str = ""
    """The note without its targets (`its call is not in after`)."""
    fates: tuple[str, ...] = ()
    """Each target's row kind when it is in the other snapshot (`dropped`), else ""."""


@dataclass(frozen=True)
class PairView:
    """A pair, aligned, with its findings and survivors placed. Without messages (the record
    could not be read back) `rows` is empty and every anchor None."""

    before: tuple[WireMessage, ...]
    after: tuple[WireMessage, ...]
    rows: tuple[Row, ...]
    findings: tuple[ShownFinding, ...]
    survivors: tuple[ShownSurvivor, ...]
    marks: Mapping[tuple[str, int | None, int | None], tuple[Mark, ...]] = field(default_factory=dict)
    links: Mapping[tuple[str, int, int], Link] = field(default_factory=dict)
    format: str | None = None

    @property
    def has_messages(self) -> bool:
        return bool(self.rows) or bool(self.before) or bool(self.after)

    def messages(self, snapshot: str) -> tuple[WireMessage, ...]:
        return self.before if snapshot == "before" else self.after

    def counts(self) -> dict[RowKind, int]:
        found = dict.fromkeys(ROW_KINDS, 0)
        for row in self.rows:
            found[row.kind] += 1
        return found

    def marks_at(self, snapshot: str, position: int | None, part: int | None = None) -> tuple[Mark, ...]:
        return self.marks.get((snapshot, position, part), ())

    def merged(self, places: Sequence[tuple[str, int]], part: int | None) -> list[Mark]:
        """The marks of one drawn message (a kept message is drawn once for both snapshots) or
        one of its parts: each finding once, at its own place rather than as a pointer when
        both apply, findings before survivors."""
        found: dict[str, Mark] = {}
        for snapshot, position in places:
            for mark in self.marks_at(snapshot, position, part):
                if mark.ref not in found or found[mark.ref].kind == "related":
                    found[mark.ref] = mark
        return sorted(found.values(),
                      key=lambda mark: (mark.kind == "related", mark.ref[0], int(mark.ref[1:])))

    def marked(self, snapshot: str, position: int) -> bool:
        """Whether anything is marked on the message or one of its parts."""
        if (snapshot, position, None) in self.marks:
            return True
        parts = len(self.messages(snapshot)[position].parts)
        return any((snapshot, position, k) in self.marks for k in range(parts))


def findings_only(findings: Sequence[Finding], survivors: Sequence[Survivor] = ()) -> PairView:
    """The view of a pair whose messages cannot be shown: its findings and survivors, unplaced."""
    return PairView((), (), (),
                    tuple(ShownFinding(f"F{n}", f, None, (), ()) for n, f in enumerate(findings, 1)),
                    tuple(ShownSurvivor(f"S{n}", s, ()) for n, s in enumerate(survivors, 1)))


def build_view(before: Loaded, after: Loaded, before_raw: Any, after_raw: Any,
               findings: Sequence[Finding], survivors: Sequence[Survivor] = ()) -> PairView:
    """The pair aligned, every finding and survivor placed, calls and results linked."""
    old = tuple(read_messages("before", before, before_raw))
    new = tuple(read_messages("after", after, after_raw))
    rows = tuple(align(old, new))
    places = _Places(old, new, rows)
    marks: dict[tuple[str, int | None, int | None], list[Mark]] = {}
    defects = _provider_texts(after, before)
    shown = []
    for number, finding in enumerate(findings, 1):
        ref = f"F{number}"
        anchor = places.finding_anchor(finding)
        related = places.related(finding, anchor)
        code = finding.code or finding.check
        marks.setdefault((anchor.snapshot, anchor.position, anchor.part), []).append(
            Mark(ref, finding.severity, code, f"{finding.check}: {finding.message}"))
        for place in related:
            marks.setdefault((place.snapshot, place.position, place.part), []).append(
                Mark(ref, "related", code, f"named by {ref}, at {anchor.label}"))
        provider: tuple[str, ...] = ()
        if finding.snapshot == "after" and finding.code not in RULES:
            provider = tuple(text for index, call_id, text in defects if index == finding.message_index
                             and (finding.tool_call_id is None or call_id in (None, finding.tool_call_id)))
        shown.append(ShownFinding(ref, finding, anchor, related, provider))
    kept = []
    for number, survivor in enumerate(survivors, 1):
        ref = f"S{number}"
        anchors = places.survivor_anchors(survivor)
        for place in anchors:
            marks.setdefault((place.snapshot, place.position, place.part), []).append(
                Mark(ref, "survivor", survivor.operator, survivor.description))
        kept.append(ShownSurvivor(ref, survivor, anchors))
    return PairView(old, new, rows, tuple(shown), tuple(kept),
                    {key: tuple(value) for key, value in marks.items()}, places.links(),
                    after.format.name)


def _provider_texts(after: Loaded, before: Loaded) -> list[tuple[int | None, str | None, str]]:
    return [(defect.message_index, defect.tool_call_id, f"{defect.profile}: {defect.error}")
            for defect in provider_defects(after, None, before)]


class _Places:
    """Positions of wire indices, labels and call ids in both snapshots."""

    def __init__(self, before: Sequence[WireMessage], after: Sequence[WireMessage],
                 rows: Sequence[Row]) -> None:
        self.lists = {"before": before, "after": after}
        self.by_index = {name: {m.index: m.position for m in messages if m.index is not None}
                         for name, messages in self.lists.items()}
        self.by_label = {m.label: m.position for messages in self.lists.values() for m in messages}
        self.fate: dict[tuple[str, int], RowKind] = {}
        for row in rows:
            if row.before is not None:
                self.fate[("before", row.before)] = row.kind
            if row.after is not None:
                self.fate[("after", row.after)] = row.kind
        self.parts: dict[str, list[tuple[str, int, int, Part]]] = {}
        for name, messages in self.lists.items():
            for message in messages:
                for number, part in enumerate(message.parts):
                    if part.call_id is not None:
                        self.parts.setdefault(part.call_id, []).append((name, message.position, number, part))

    def anchor(self, snapshot: str, position: int | None, part: int | None = None) -> Anchor:
        if position is None:
            return Anchor(snapshot, None, None, snapshot)
        message = self.lists[snapshot][position]
        label = message.parts[part].site if part is not None else message.label
        return Anchor(snapshot, position, part, label)

    def finding_anchor(self, finding: Finding) -> Anchor:
        snapshot = finding.snapshot if finding.snapshot in self.lists else "after"
        index = finding.message_index
        position = self.by_index[snapshot].get(index) if index is not None else None
        if position is None:
            return self.anchor(snapshot, None)
        part = None
        if finding.tool_call_id is not None:
            parts = self.lists[snapshot][position].parts
            part = next((k for k, p in enumerate(parts) if p.call_id == finding.tool_call_id), None)
        return self.anchor(snapshot, position, part)

    def related(self, finding: Finding, anchor: Anchor) -> tuple[Anchor, ...]:
        found: list[Anchor] = []
        seen = {(anchor.snapshot, anchor.position, anchor.part)}
        if anchor.part is None:
            seen.add((anchor.snapshot, anchor.position, None))
        if finding.tool_call_id is not None:
            for snapshot, position, number, _ in self.parts.get(finding.tool_call_id, ()):
                if (snapshot, position, number) not in seen:
                    seen.add((snapshot, position, number))
                    found.append(self.anchor(snapshot, position, number))
        for snapshot, first, last in _PLACE.findall(finding.message):
            start = int(first)
            for index in range(start, int(last) if last else start + 1):
                named = self.by_index[snapshot].get(index)
                if named is not None and (snapshot, named, None) not in seen:
                    seen.add((snapshot, named, None))
                    found.append(self.anchor(snapshot, named))
        return tuple(found)

    def survivor_anchors(self, survivor: Survivor) -> tuple[Anchor, ...]:
        found: list[Anchor] = []
        for site in survivor.sites:
            for _, first, last in _PLACE.findall(site):
                start = int(first)
                for index in range(start, int(last) if last else start + 1):
                    position = self.by_index["after"].get(index)
                    if position is not None:
                        found.append(self.anchor("after", position))
            for snapshot, name in _FRAME.findall(site):
                position = self.by_label.get(f"{snapshot}.{name}")
                if position is not None:
                    found.append(self.anchor(snapshot, position))
        unique = list(dict.fromkeys(found))
        return tuple(unique) or (self.anchor("after", None),)

    def links(self) -> dict[tuple[str, int, int], Link]:
        out: dict[tuple[str, int, int], Link] = {}
        for entries in self.parts.values():
            for snapshot, position, number, part in entries:
                if part.kind not in ("call", "result"):
                    continue
                wanted = "result" if part.kind == "call" else "call"
                same = [e for e in entries if e[0] == snapshot and e[3].kind == wanted]
                other = [e for e in entries if e[0] != snapshot and e[3].kind == wanted]
                targets = same or other
                anchors = tuple(self.anchor(s, p, n) for s, p, n, _ in targets)
                fates = tuple("" if same else self.fate.get((s, p), "kept") for s, p, _, _ in targets)
                heading = f"its {wanted}" if same else (f"its {wanted} is not in {snapshot}" if other
                                                        else f"no {wanted} of this id in either snapshot")
                note = self._note(part.kind, snapshot, same, other)
                out[(snapshot, position, number)] = Link(anchors, note, heading, fates)
        return out

    def _note(self, kind: str, snapshot: str, same: list[tuple[str, int, int, Part]],
              other: list[tuple[str, int, int, Part]]) -> str:
        wanted = "result" if kind == "call" else "call"
        if same:
            return f"its {wanted}: " + ", ".join(self.anchor(s, p, n).label for s, p, n, _ in same)
        if other:
            where = ", ".join(f"{self.anchor(s, p, n).label} ({self.fate.get((s, p), 'kept')})"
                              for s, p, n, _ in other)
            return f"its {wanted} is not in {snapshot}: {where}"
        return f"no {wanted} of this id in either snapshot"
