"""A pair view as terminal text: the findings, then before and after aligned down the page (one
line per message, `=` kept, `-` dropped, `~` changed, `+` added, `S` the summary), each finding
marked under the message and part it names, calls and results with their counterparts.

Colour is ANSI escapes, only when asked for (`color=True`; the command asks when stdout is a
terminal). Text from the logs is shown with its control characters made visible, so a record
cannot move the cursor or recolour the screen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from frayproof_audit.pairview.align import Row
from frayproof_audit.pairview.plan import Gap, row_label, shown_rows, span
from frayproof_audit.pairview.stored import ShownPair, StoredPair
from frayproof_audit.pairview.view import Mark, PairView
from frayproof_audit.pairview.wire import Part, WireMessage

SIGNS = {"kept": "=", "dropped": "-", "changed": "~", "added": "+", "summary": "S"}
_COLOURS = {"kept": "2", "dropped": "31", "changed": "33", "added": "32", "summary": "36",
            "error": "1;31", "warning": "1;33", "related": "35", "survivor": "1;35", "head": "1",
            "muted": "2"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class TextOptions:
    color: bool = False
    full: bool = False
    """Every message and every character (no folding, no cut texts)."""
    chars: int = 240
    """Characters of a text shown before it is cut (unless `full`)."""
    lines: int = 6
    keep: int = 2
    """Messages kept at each end of a folded stretch."""


class _Out:
    def __init__(self, options: TextOptions) -> None:
        self.options = options
        self.lines: list[str] = []

    def paint(self, text: str, style: str) -> str:
        if not self.options.color or not text:
            return text
        return f"\x1b[{_COLOURS[style]}m{text}\x1b[0m"

    def add(self, text: str = "") -> None:
        self.lines.append(text)


def visible(text: str) -> str:
    """`text` with control characters (escapes, carriage returns, NULs) shown as `\\xNN`, tabs
    as spaces: nothing from a log reaches the terminal as a control sequence."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\t", "    "))


def _cut(text: str, options: TextOptions) -> list[str]:
    """A text as display lines, cut at `chars` characters or `lines` lines with what is left."""
    if options.full:
        return [visible(line) for line in text.split("\n")] or [""]
    shown = text[: options.chars]
    lines = shown.split("\n")
    cut_lines = lines[: options.lines]
    rest = len(text) - len("\n".join(cut_lines))
    out = [visible(line) for line in cut_lines]
    if rest > 0:
        out[-1] += f" … ({rest:,} more characters; --full shows all)"
    return out


def header(pair: StoredPair) -> list[str]:
    """The pair's own lines: what it is, its verdict, where it came from."""
    counts = "" if pair.errors is None else f": {pair.errors} error(s), {pair.warnings or 0} warning(s)"
    survived = f", {pair.survived} surviving mutant(s)" if pair.survived else ""
    lines = [f"pair {visible(pair.pair_id)} (run {pair.run_id})",
             f"  {pair.status}{counts}{survived} · compactor {visible(pair.compactor or '(none)')} · night "
             f"{pair.log_date.isoformat()} · format {pair.format or '?'}",
             f"  {visible(pair.place)}"
             + (f" · session {visible(pair.session_id)}" if pair.session_id else "")]
    if pair.provenance:
        lines.append("  from an agent log: " + " · ".join(f"{name} {visible(str(value))}"
                                                         for name, value in pair.provenance))
    return lines


def render_shown(shown: ShownPair, options: TextOptions = TextOptions()) -> str:
    """A stored pair: its header, then its view, or why its messages cannot be shown."""
    out = _Out(options)
    for number, line in enumerate(header(shown.pair)):
        out.add(out.paint(line, "head") if number == 0 else line)
    if shown.state != "found":
        out.add()
        out.add(out.paint("messages not shown: ", "warning") + visible(shown.notice))
    _body(out, shown.view)
    return "\n".join(out.lines) + "\n"


def render_view(view: PairView, title: Sequence[str], options: TextOptions = TextOptions()) -> str:
    """A pair judged on the spot (`show --before B --after A`): `title` lines, then the view."""
    out = _Out(options)
    for number, line in enumerate(title):
        out.add(out.paint(line, "head") if number == 0 else line)
    _body(out, view)
    return "\n".join(out.lines) + "\n"


def _body(out: _Out, view: PairView) -> None:
    if view.findings:
        out.add()
        out.add(out.paint("findings", "head"))
        for shown in view.findings:
            finding = shown.finding
            where = shown.anchor.label if shown.anchor is not None and shown.anchor.position is not None \
                else finding.where
            code = f" {finding.code}" if finding.code else ""
            origin = f" ({finding.origin})" if finding.origin else ""
            out.add(f"  {shown.ref} " + out.paint(f"{finding.severity.upper()}{code}", finding.severity)
                    + f" {finding.check} at {visible(where)}{origin}")
            out.add(f"     {visible(finding.message)}")
            for text in shown.provider:
                out.add(f"     provider: {visible(text)}")
            if shown.related:
                out.add("     also marked: " + ", ".join(visible(a.label) for a in shown.related))
    if view.survivors:
        out.add()
        out.add(out.paint("surviving mutants (corruptions the contract accepted)", "head"))
        for kept in view.survivors:
            survivor = kept.survivor
            sites = ", ".join(visible(site) for site in survivor.sites) or "(no site)"
            out.add(f"  {kept.ref} " + out.paint(survivor.operator, "survivor") + f" at {sites}: "
                    f"{visible(survivor.description)}")
            if survivor.rule:
                out.add(f"     the contract rule that would catch it: {visible(survivor.rule)}")
    marks = view.marks_at("before", None) + view.marks_at("after", None)
    if not view.has_messages:
        return
    counts = view.counts()
    summary = ", ".join(f"{count:,} {kind}" for kind, count in counts.items() if count)
    out.add()
    out.add(out.paint(f"messages: {summary}", "head") + out.paint(
        "  (= kept, - dropped, ~ changed, + added, S summary)", "muted"))
    for mark in marks:
        out.add("  " + _mark(out, mark) + " (about the snapshot as a whole)")
    keep = None if out.options.full else out.options.keep
    for item in shown_rows(view, keep):
        if isinstance(item, Gap):
            out.add(out.paint(f"  {SIGNS[item.kind]} … {item.label} …", item.kind))
        else:
            _row(out, view, item)


def _mark(out: _Out, mark: Mark) -> str:
    """`>> F1 ERROR TP-ORPHAN tool_pair_integrity: ...`, `>> F1 TP-ORPHAN points here (named by
    F1, at after[2])`, `>> S1 survived drop_tool_result: ...`."""
    if mark.kind in ("error", "warning"):
        badge = out.paint(f">> {mark.ref} {mark.kind.upper()} {mark.code}", mark.kind)
        return f"{badge} {visible(mark.note)}"
    if mark.kind == "survivor":
        return out.paint(f">> {mark.ref} survived {mark.code}", "survivor") + f": {visible(mark.note)}"
    return out.paint(f">> {mark.ref} {mark.code} points here", "related") + f" ({visible(mark.note)})"


def _row(out: _Out, view: PairView, row: Row) -> None:
    sign = SIGNS[row.kind]
    label = row_label(view, row)
    message = view.after[row.after] if row.after is not None else view.before[row.before or 0]
    note = ""
    if row.kind == "summary" and row.replaces is not None:
        first, last = row.replaces
        note = f" (summary, in place of {span(view.before[first:last])})"
    out.add(out.paint(f"  {sign} {label}", row.kind) + f"  {visible(message.role)}{note}")
    places = [(s, p) for s, p in (("after", row.after), ("before", row.before)) if p is not None]
    for mark in view.merged(places, None):
        out.add("      " + _mark(out, mark))
    if row.kind == "changed" and row.before is not None and row.after is not None:
        _parts(out, view, view.before[row.before], "before: ")
        _parts(out, view, view.after[row.after], "after:  ")
        return
    _parts(out, view, message, "", extra=[(s, p) for s, p in places if s != message.snapshot])


def _parts(out: _Out, view: PairView, message: WireMessage, prefix: str,
           extra: Sequence[tuple[str, int]] = ()) -> None:
    for number, part in enumerate(message.parts):
        lines = _part_lines(part, out.options)
        out.add(f"      {prefix}{lines[0]}")
        out.lines.extend(f"      {' ' * len(prefix)}  {line}" for line in lines[1:])
        for mark in view.merged([(message.snapshot, message.position), *extra], number):
            out.add("        " + _mark(out, mark))
        link = view.links.get((message.snapshot, message.position, number))
        if link is not None and (link.targets or part.kind == "result"):
            out.add("        " + out.paint(f"-> {link.note}", "muted"))


def _part_lines(part: Part, options: TextOptions) -> list[str]:
    if part.kind == "call":
        lines = _cut(part.text, options)
        return [f"call {visible(part.name or '?')} [{visible(part.call_id or '')}] {lines[0]}", *lines[1:]]
    if part.kind == "result":
        lines = _cut(part.text, options)
        return [f"result [{visible(part.call_id or '')}] {lines[0]}", *lines[1:]]
    if part.kind == "empty":
        return ["(no content)"]
    if part.kind == "block":
        lines = _cut(part.text, options)
        return [f"{visible(part.name or 'block')} {lines[0]}", *lines[1:]]
    if part.kind == "refusal":
        lines = _cut(part.text, options)
        return [f"refusal {lines[0]}", *lines[1:]]
    return _cut(part.text, options)
