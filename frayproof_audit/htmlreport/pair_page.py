"""One pair's page: its findings, its surviving mutants, and before and after side by side.

Every row of the aligned view is a table row (kept messages once, across both columns; dropped
on the left; added and the summary on the right; changed ones side by side with what changed);
each message and part has an anchor (`<key>-b4`, `<key>-a2-0`), every finding links to its
place and every mark back to its finding, and a call links to its result (or says that it is
gone, and where it was). Long texts fold (`<details>`, their size in the summary), and a page
holds at most `PAGE_CHARS` characters of message text, given first to the marked messages,
then to what changed, then to what was dropped or kept: the file grows with the pairs shown,
never with the size of one session (at most `MAX_ROWS` rows are drawn, and a fold keeps only
the anchors something links to). Everything from the logs is escaped; nothing here writes a style
attribute or a script (the page's policy forbids both).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from html import escape

from frayproof_audit.pairview.align import Row
from frayproof_audit.pairview.plan import Gap, shown_rows, span
from frayproof_audit.pairview.stored import ShownPair
from frayproof_audit.pairview.view import Anchor, Mark, PairView
from frayproof_audit.pairview.wire import Part, WireMessage

FOLD_CHARS = 480
FOLD_LINES = 8
"""Texts longer than this many characters or lines are folded (opened where marked)."""
PART_CHARS = 6000
"""Characters of one text a page shows at most."""
PREVIEW_CHARS = 160
PAGE_CHARS = 40_000
"""Characters of message text one pair page holds at most."""
MAX_ROWS = 120
"""Rows of the aligned view one page draws at most (the marked ones first)."""
MAX_FINDINGS = 50
"""Findings (and survivors) a page lists and marks; the rest are counted, `show` lists them."""
MAX_RELATED = 12
"""Places one finding is marked at besides its own (the rest are counted)."""
KEEP = 2
"""Messages shown at each end of a folded stretch of unmarked kept or dropped messages."""
SIDE = {"before": "b", "after": "a"}
KIND_WORDS = {"kept": "kept", "dropped": "dropped", "changed": "changed", "added": "added",
              "summary": "summary"}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _t(text: str) -> str:
    """Text between tags: `&`, `<` and `>` escaped (quotes need not be, outside attributes)."""
    return escape(text, quote=False)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def anchor_id(key: str, anchor: Anchor) -> str:
    if anchor.position is None:
        return f"{key}-{anchor.snapshot}"
    base = f"{key}-{SIDE[anchor.snapshot]}{anchor.position}"
    return base if anchor.part is None else f"{base}-{anchor.part}"


class _Budget:
    """Which parts get their text in full: marked first, then what changed, then the rest, until
    `PAGE_CHARS` is spent; the others show a preview."""

    def __init__(self, view: PairView, items: Sequence[Row | Gap]) -> None:
        order: list[tuple[int, str, int, int, int]] = []
        rank = {"changed": 1, "summary": 1, "added": 1, "dropped": 2, "kept": 3}
        for item in items:
            if isinstance(item, Gap):
                continue
            for snapshot, position in (("before", item.before), ("after", item.after)):
                if position is None or (item.kind == "kept" and snapshot == "before"):
                    continue
                message = view.messages(snapshot)[position]
                marked = view.marked(snapshot, position) or (
                    item.kind == "kept" and item.before is not None and view.marked("before", item.before))
                for number, part in enumerate(message.parts):
                    order.append((0 if marked else rank[item.kind], snapshot, position, number,
                                  min(len(part.text), PART_CHARS)))
        left = PAGE_CHARS
        self.full: set[tuple[str, int, int]] = set()
        for _, snapshot, position, number, size in sorted(order):
            if size <= left:
                self.full.add((snapshot, position, number))
                left -= size
        self.spent = PAGE_CHARS - left


def pair_section(shown: ShownPair, key: str, out: str, *, folder: bool) -> str:
    """The pair's page as one `<section class="view">` (inside the single file, or alone)."""
    index = "../index.html" if folder else ""
    pair = shown.pair
    counts = "" if pair.errors is None else f" · {pair.errors} error(s), {pair.warnings or 0} warning(s)"
    survived = f" · {pair.survived} surviving mutant(s)" if pair.survived else ""
    command = (f"frayproof-audit show {shlex.quote(out)} {shlex.quote(pair.pair_id)} "
               f"--run {shlex.quote(pair.run_id)}")
    parts = [
        f'<section class="view pairpage" id="{key}" data-pair="{_e(pair.pair_id)}" '
        f'data-run="{_e(pair.run_id)}" '
        f'data-state="{_e(shown.state)}">',
        f'<p class="crumbs"><a href="{index}#summary">Report</a> › <a href="{index}#pairs">Pairs</a></p>',
        f'<h2>Pair <code>{_e(pair.pair_id)}</code></h2>',
        f'<p class="meta"><b class="st-{_e(pair.status)}">{_e(pair.status)}</b>{_e(counts + survived)} · '
        f"compactor <code>{_e(pair.compactor if pair.compactor is not None else '(none)')}</code> · night "
        f"{_e(pair.log_date.isoformat())} · format {_e(pair.format or '?')} · run "
        f"<code>{_e(pair.run_id)}</code>"
        + (f" · session <code>{_e(pair.session_id)}</code>" if pair.session_id else "") + "</p>",
        f'<p class="meta">From <code>{_e(pair.source)}</code> {"row" if pair.parquet else "line"} '
        f"{pair.source_row} · in a terminal: <code>{_e(command)}</code> (with <code>--full</code>, every "
        f"message and character: this page shows at most {PAGE_CHARS:,} characters of messages)</p>",
    ]
    if pair.provenance:
        items = " · ".join(f"{_e(name)} <code>{_e(value)}</code>" for name, value in pair.provenance)
        parts.append(f'<p class="meta prov">Derived from an agent log: {items}</p>')
    if shown.state != "found":
        parts.append(f'<p class="notice" data-notice="{_e(shown.state)}">Messages not shown: '
                     f"{_e(shown.notice)}. "
                     "The findings below are those the audit recorded.</p>")
    view = trimmed(shown.view)
    parts.append(_findings(view, shown.view, key, command))
    parts.append(_survivors(view, key))
    if view.has_messages:
        parts.append(_messages(view, key, command))
    parts.append("</section>")
    return "".join(parts)


def trimmed(view: PairView) -> PairView:
    """The view a page draws: its first `MAX_FINDINGS` findings and survivors, each marked at its
    own place and at no more than `MAX_RELATED` of the places it points at (a retention finding
    can name a stretch of thousands), so the marks that decide which rows are drawn stay few."""
    if (len(view.findings) <= MAX_FINDINGS and len(view.survivors) <= MAX_FINDINGS
            and all(len(item.related) <= MAX_RELATED for item in view.findings)):
        return view
    findings = tuple(replace(item, related=item.related[:MAX_RELATED])
                     for item in view.findings[:MAX_FINDINGS])
    survivors = view.survivors[:MAX_FINDINGS]
    own = {item.ref for item in findings} | {item.ref for item in survivors}
    pointed = {(item.ref, (a.snapshot, a.position, a.part)) for item in findings for a in item.related}
    marks = {}
    for place, found in view.marks.items():
        kept = tuple(mark for mark in found if mark.ref in own
                     and (mark.kind != "related" or (mark.ref, place) in pointed))
        if kept:
            marks[place] = kept
    return replace(view, findings=findings, survivors=survivors, marks=marks)


def _findings(view: PairView, whole: PairView, key: str, command: str) -> str:
    if not view.findings:
        return ""
    items = []
    for item in view.findings:
        finding = item.finding
        where = (f'<a href="#{anchor_id(key, item.anchor)}">{_e(item.anchor.label)}</a>'
                 if item.anchor is not None and item.anchor.position is not None else _e(finding.where))
        extra = []
        for text in item.provider:
            extra.append(f'<div class="provider">provider: <q>{_e(text)}</q></div>')
        if item.related:
            links = ", ".join(f'<a href="#{anchor_id(key, a)}">{_e(a.label)}</a>' for a in item.related)
            more = len(_related(whole, item.ref)) - len(item.related)
            links += f" and {more:,} more" if more > 0 else ""
            extra.append(f'<div class="also">also marked: {links}</div>')
        tags = [tag for tag in (finding.origin, "repairable" if finding.repairable else None) if tag]
        tag_html = "".join(f' <span class="tag">{_e(tag)}</span>' for tag in tags)
        items.append(
            f'<li id="{key}-{item.ref}" class="f f-{_e(finding.severity)}" '
            f'data-code="{_e(finding.code or "")}"><span class="ref">{item.ref}</span> '
            f'<b class="sev-{_e(finding.severity)}">{_e(finding.severity)}</b> '
            f'<code>{_e(finding.code or "–")}</code> {_e(finding.check)} at {where}{tag_html}: '
            f'{_e(finding.message)}{"".join(extra)}</li>')
    more = len(whole.findings) - len(view.findings)
    note = (f'<p class="cut">… and {more:,} more findings, not listed or marked on this page: '
            f"<code>{_e(command)}</code> lists them all.</p>" if more > 0 else "")
    return f'<h3>Findings</h3><ol class="findings">{"".join(items)}</ol>{note}'


def _related(view: PairView, ref: str) -> tuple[Anchor, ...]:
    return next((item.related for item in view.findings if item.ref == ref), ())


def _survivors(view: PairView, key: str) -> str:
    if not view.survivors:
        return ""
    rows = []
    for item in view.survivors:
        survivor = item.survivor
        places = [a for a in item.anchors if a.position is not None]
        sites = ", ".join(_e(site) for site in survivor.sites) or "–"
        if places:
            sites += " (" + ", ".join(f'<a href="#{anchor_id(key, a)}">{_e(a.label)}</a>'
                                      for a in places) + ")"
        rows.append(f'<tr id="{key}-{item.ref}"><td>{item.ref}</td>'
                    f"<td><code>{_e(survivor.operator)}</code></td>"
                    f"<td>{sites}</td><td>{_e(survivor.description)}</td><td>{_e(survivor.rule)}</td></tr>")
    return ('<h3>Surviving mutants</h3><p class="muted">Corruptions of this compaction the contract '
            "accepted: each is a gap in the contract, with the rule that would catch it.</p>"
            '<table class="data survivors"><thead><tr><th>#</th><th>operator</th><th>site</th>'
            f'<th>the edit</th><th>contract rule that would catch it</th></tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>")


def _messages(view: PairView, key: str, command: str) -> str:
    items = _capped(view, shown_rows(view, KEEP), command)
    budget = _Budget(view, items)
    drawn = [item for item in items if not isinstance(item, Gap)]
    wanted = _referenced(view, key, drawn)
    counts = ", ".join(f"{count:,} {kind}" for kind, count in view.counts().items() if count)
    body = []
    for item in items:
        if isinstance(item, Gap):
            body.append(_gap(view, key, item, wanted))
        else:
            body.append(_row(view, key, item, budget, command))
    return (f'<h3>Messages</h3><p class="muted">{_e(counts)}. Kept messages span both columns; marks '
            "link to their finding, calls to their results.</p>"
            f'<table class="diff"><thead><tr><th id="{key}-before">before</th><th id="{key}-after">after</th>'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _capped(view: PairView, items: list[Row | Gap], command: str) -> list[Row | Gap]:
    """At most `MAX_ROWS` rows drawn: summaries and the rows a finding or survivor is marked at
    first, then those a finding points at, then the rows nearest the start and the end; the rest
    (a compaction that dropped every other message of a long session leaves no stretch long
    enough to fold) is one line per run saying how many and how to see them."""
    rows = [item for item in items if not isinstance(item, Gap)]
    if len(rows) <= MAX_ROWS:
        return items

    def rank(number: int, row: Row) -> tuple[int, int]:
        marks = [mark for snapshot, position in (("before", row.before), ("after", row.after))
                 if position is not None
                 for part in (None, *range(len(view.messages(snapshot)[position].parts)))
                 for mark in view.marks_at(snapshot, position, part)]
        edge = min(number, len(rows) - 1 - number)
        if row.kind == "summary" or any(mark.kind != "related" for mark in marks):
            return (0, edge)
        return (1, edge) if marks else (2, edge)

    ranked = sorted(range(len(rows)), key=lambda number: (rank(number, rows[number]), number))
    chosen = {id(rows[number]) for number in ranked[:MAX_ROWS]}
    out: list[Row | Gap] = []
    hidden: list[Row] = []

    def flush() -> None:
        if hidden:
            noun = "message" if len(hidden) == 1 else "messages"
            out.append(Gap("more", tuple(hidden), f"{len(hidden):,} more {noun}, not drawn on this page "
                           f"(it draws at most {MAX_ROWS:,} rows, the marked ones first): {command} --full"))
            hidden.clear()

    for item in items:
        if not isinstance(item, Gap) and id(item) in chosen:
            flush()
            out.append(item)
        else:
            hidden.extend(item.rows if isinstance(item, Gap) else (item,))
    flush()
    return out


def _referenced(view: PairView, key: str, drawn: Sequence[Row]) -> set[str]:
    """The anchor ids the page links to: the findings' and survivors' places, the call or result
    of every drawn part, the first message a drawn summary replaces. A folded message keeps
    its anchor only when one of them names it, so a fold costs a line, not a line per message."""
    anchors: list[Anchor] = [a for item in view.findings for a in (item.anchor, *item.related)
                             if a is not None]
    anchors += [a for item in view.survivors for a in item.anchors]
    wanted = {anchor_id(key, a) for a in anchors}
    for row in drawn:
        for snapshot, position in (("before", row.before), ("after", row.after)):
            if position is None:
                continue
            for number in range(len(view.messages(snapshot)[position].parts)):
                link = view.links.get((snapshot, position, number))
                if link is not None:
                    wanted.update(anchor_id(key, a) for a in link.targets)
        if row.kind == "summary" and row.replaces is not None:
            wanted.add(f"{key}-b{row.replaces[0]}")
    return wanted


def _gap(view: PairView, key: str, gap: Gap, wanted: set[str]) -> str:
    anchors: list[str] = []
    for row in gap.rows:
        for snapshot, position in (("before", row.before), ("after", row.after)):
            if position is not None:
                message = view.messages(snapshot)[position]
                ids = [f"{key}-{SIDE[snapshot]}{position}",
                       *(f"{key}-{SIDE[snapshot]}{position}-{n}" for n in range(len(message.parts)))]
                anchors.extend(f'<span id="{name}"></span>' for name in ids if name in wanted)
    note = "" if gap.kind == "more" else " (unmarked, folded)"
    return (f'<tr class="gap r-{gap.kind}"><td colspan="2">{"".join(anchors)}… {_e(gap.label)}{note} '
            "…</td></tr>")


def _row(view: PairView, key: str, row: Row, budget: _Budget, command: str) -> str:
    kind = row.kind
    if kind == "kept" and row.before is not None and row.after is not None:
        cell = _message(view, key, view.after[row.after], budget, command, kind,
                        also=view.before[row.before])
        return f'<tr class="r-kept"><td colspan="2">{cell}</td></tr>'
    left = ("" if row.before is None else
            _message(view, key, view.before[row.before], budget, command, kind))
    right = ("" if row.after is None else
             _message(view, key, view.after[row.after], budget, command, kind))
    if kind == "summary" and row.replaces is not None:
        first, last = row.replaces
        left = (f'<p class="muted">in place of <a href="#{key}-b{first}">{_e(span(view.before[first:last]))}'
                "</a></p>")
    html = f'<tr class="r-{kind}"><td>{left}</td><td>{right}</td></tr>'
    if kind == "changed" and row.before is not None and row.after is not None:
        notes = _changes(view.before[row.before], view.after[row.after])
        if notes:
            html += f'<tr class="r-change-note"><td colspan="2">{"; ".join(_e(n) for n in notes)}</td></tr>'
    return html


def _changes(old: WireMessage, new: WireMessage) -> list[str]:
    """What changed between two versions of a message, part by part, in words."""
    notes = []
    for number, (a, b) in enumerate(zip(old.parts, new.parts, strict=False)):
        if a.text == b.text:
            continue
        same = 0
        limit = min(len(a.text), len(b.text))
        while same < limit and a.text[same] == b.text[same]:
            same += 1
        change = len(b.text) - len(a.text)
        size = (f"{abs(change):,} characters {'longer' if change > 0 else 'shorter'}" if change
                else "the same length")
        notes.append(f"part {number} ({b.site}): the first {same:,} characters are the same, then it "
                     f"differs; {size}")
    if len(old.parts) != len(new.parts):
        notes.append(f"{len(old.parts)} part(s) before, {len(new.parts)} after")
    if not notes and old.key != new.key:
        notes.append("the same texts; other fields of the message differ")
    return notes


def _marks(marks: Sequence[Mark], key: str) -> str:
    """Badges linking to their finding (or survivor); a pointer (`↗`) is named in the finding's
    own "also marked" list, so it needs no tooltip of its own."""
    out = []
    for mark in marks:
        if mark.kind == "related":
            out.append(f'<a class="mark m-related" href="#{key}-{mark.ref}">{mark.ref} {_e(mark.code)} ↗</a>')
            continue
        title = mark.note if mark.kind != "survivor" else f"survived: {mark.note}"
        out.append(f'<a class="mark m-{_e(mark.kind)}" href="#{key}-{mark.ref}" title="{_e(title)}">'
                   f"{mark.ref} {_e(mark.code)}</a>")
    return "".join(out)


def _message(view: PairView, key: str, message: WireMessage, budget: _Budget, command: str, kind: str,
             also: WireMessage | None = None) -> str:
    side = SIDE[message.snapshot]
    places = [(message.snapshot, message.position)] + ([(also.snapshot, also.position)] if also else [])
    labels = f"{also.label} = {message.label}" if also is not None else message.label
    extra_anchor = ("" if also is None else
                    f'<span id="{key}-{SIDE[also.snapshot]}{also.position}"></span>')
    badge = f' <span class="kind k-{kind}">{KIND_WORDS[kind]}</span>' if kind != "kept" else ""
    head = (f'<div class="mh">{extra_anchor}<span class="lbl">{_e(labels)}</span> <span class="role">'
            f'{_e(message.role)}</span>{badge} <span class="sz">{_size(message.size)}</span>'
            f"{_marks(view.merged(places, None), key)}</div>")
    parts = []
    for number, part in enumerate(message.parts):
        ids = ("" if also is None else
               f'<span id="{key}-{SIDE[also.snapshot]}{also.position}-{number}"></span>')
        marks = view.merged(places, number)
        link = view.links.get((message.snapshot, message.position, number))
        link_html = ""
        if link is not None:
            targets = ", ".join(f'<a class="link" href="#{anchor_id(key, a)}">{_e(a.label)}</a>'
                                + (f" ({_e(fate)})" if fate else "")
                                for a, fate in zip(link.targets, link.fates, strict=True))
            link_html = f'<div class="lk">→ {_e(link.heading)}{": " + targets if targets else ""}</div>'
        full = (message.snapshot, message.position, number) in budget.full
        cls = " marked" if marks else ""
        parts.append(f'<div class="part p-{part.kind}{cls}" id="{key}-{side}{message.position}-{number}">'
                     f"{ids}"
                     f"{_part_head(part, message.label)}{_marks(marks, key)}{link_html}"
                     f"{_text(part, full, bool(marks), command)}</div>")
    return f'<div class="msg" id="{key}-{side}{message.position}">{head}{"".join(parts)}</div>'


def _part_head(part: Part, label: str) -> str:
    """A part's kind, its call id and tool name, and its own site when it is not the message's."""
    site = f' <span class="site">{_t(part.site)}</span>' if part.site != label else ""
    if part.kind == "call":
        return (f'<span class="pk">call</span> <code>{_t(part.name or "?")}</code> '
                f'<code class="cid">{_t(part.call_id or "")}</code>{site}')
    if part.kind == "result":
        return f'<span class="pk">result</span> <code class="cid">{_t(part.call_id or "")}</code>{site}'
    if part.kind == "block":
        return f'<span class="pk">{_t(part.name or "block")}</span>{site}'
    if part.kind == "refusal":
        return '<span class="pk">refusal</span>'
    return ""


def _text(part: Part, full: bool, opened: bool, command: str) -> str:
    text = part.text
    if part.kind == "empty":
        return '<p class="muted">(no content)</p>'
    if not full:
        rest = len(text) - PREVIEW_CHARS
        shown = f'<pre class="t">{_t(text[:PREVIEW_CHARS])}</pre>'
        if rest > 0:
            shown += f'<p class="cut">… {rest:,} more characters (<code>--full</code>)</p>'
        return shown
    lines = text.count("\n") + 1
    body = f'<pre class="t">{_t(text[:PART_CHARS])}</pre>'
    if len(text) > PART_CHARS:
        body += f'<p class="cut">… {len(text) - PART_CHARS:,} more characters (<code>--full</code>)</p>'
    if len(text) <= FOLD_CHARS and lines <= FOLD_LINES:
        return body
    summary = f"{len(text):,} characters" + (f", {lines:,} lines" if lines > 1 else "")
    return f'<details class="fold"{" open" if opened else ""}><summary>{summary}</summary>{body}</details>'
