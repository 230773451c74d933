"""`repair`: make a transcript valid by the smallest edits, and account for every one.

* A dangling call is answered with a new result saying the call did not complete, placed in
  the call's batch; the call itself is never touched. Which results are new is said in the
  `RepairResult` (`synthesized`), never in a field of the wire data a provider could reject.
* An orphaned result is dropped; so is a duplicate result (a second answer to one call).
* A result before its call, or cut off from it by other turns, is **moved** into the call's
  batch: the real output is kept, never replaced by a placeholder.
* A new or moved result joins the results message right before it in the call's batch (the
  change names it, `Change.into`), else it is a message of its own. No other message is
  touched: two valid results messages are never merged, and a block keeps its place.
* An empty assistant turn is dropped (and an empty user or instruction turn, unless
  `drop_wasteful=False`).
* Duplicate or missing call ids, and calls on non-assistant messages, cannot be paired by
  anyone: `IrreparableError`, and nothing is returned.

Every change names the defect it fixes and its place in the *input* (`Change.site`). Repair
is computed once over the input (no passes, so no recursion), never mutates or aliases its
input, returns the transcript in its own wire format, and is idempotent: its output inspects
free of FATAL defects, so a second repair changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format, rewritable, writer_of
from frayproof_audit.formats.writer import Piece, Writer
from frayproof_audit.loaded import Loaded
from frayproof_audit.transcript.defects import (
    DANGLING_CALL,
    DUPLICATE_RESULT,
    EMPTY_ASSISTANT_TURN,
    Defect,
    empties,
    pair,
)
from frayproof_audit.transcript.inspection import Inspection, inspect_transcript
from frayproof_audit.transcript.loading import DEFAULT_FORMAT, SITE_LABEL, Transcript, read_transcript

INTERRUPTED = (
    "This tool call did not complete: the conversation was interrupted before its result was "
    "recorded. No side effects should be assumed either way; call the tool again if the result "
    "is still needed."
)
"""The default text of a synthesized result: it claims neither success nor failure."""


class IrreparableError(Exception):
    """The transcript has defects no repair can fix (calls that cannot be paired)."""

    def __init__(self, defects: tuple[Defect, ...]) -> None:
        lines = "\n".join(f"  {d.to_text()}" for d in defects)
        super().__init__(f"cannot repair: {len(defects)} defect(s) cannot be fixed by editing "
                         f"the transcript (calls that cannot be paired with results):\n{lines}")
        self.defects = defects


class UnsupportedFormat(InputError):
    """A registered format that transcript tools cannot write back (its `writer` is None)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One edit, placed in the input's wire coordinates."""

    action: str
    """`drop`, `move` or `synthesize`."""
    defect: str
    site: str
    message_index: int | None
    detail: str
    call_id: str | None = None
    into: int | None = None
    """`move`, `synthesize`: the input wire message the result was added to (its blocks
    otherwise in place), when it joined one; None when it is a message of its own."""

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "defect": self.defect, "site": self.site,
                "message_index": self.message_index, "call_id": self.call_id,
                "into": self.into, "detail": self.detail}

    def to_text(self) -> str:
        call = f" id={self.call_id}" if self.call_id else ""
        return f"{self.action} {self.site}{call} ({self.defect}): {self.detail}"


@dataclass(frozen=True, slots=True)
class Synthesized:
    """A result repair made up, and where it sits in the output (sidecar metadata)."""

    call_id: str
    site: str


@dataclass(frozen=True, slots=True)
class RepairResult:
    """The repaired transcript (in the input's wire format), what changed, and both verdicts."""

    transcript: Any
    """In the shape the input came in: a list, a request object, or a JSON string."""
    changes: tuple[Change, ...]
    before: Inspection
    after: Inspection
    synthesized: tuple[Synthesized, ...] = ()
    output: Loaded | None = field(default=None, repr=False, compare=False)
    """The repaired transcript's neutral reading, the one `after` judged (None when nothing
    changed: then it is the input's)."""

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    @property
    def exit_code(self) -> int:
        return self.after.exit_code

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.before.format, "changed": self.changed, "valid": self.after.valid,
                "changes": [c.to_dict() for c in self.changes],
                "synthesized": [{"call_id": s.call_id, "site": s.site} for s in self.synthesized],
                "before": self.before.to_dict(), "after": self.after.to_dict()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        lines = [f"{len(self.changes)} change(s), {self.before.format}: "
                 f"{'valid' if self.after.valid else 'STILL INVALID'}"]
        lines += [f"  {change.to_text()}" for change in self.changes]
        return "\n".join(lines)


def writer_for(transcript: Transcript) -> Writer:
    """The writer of the transcript's format; `UnsupportedFormat` for a format without one."""
    found = writer_of(transcript.format)
    if found is None:
        raise UnsupportedFormat(f"transcripts in format {transcript.format.name!r} cannot be "
                                f"rewritten (supported: {', '.join(rewritable())})")
    return found


def repair(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT, *,
           placeholder: str = INTERRUPTED, drop_wasteful: bool = True,
           profile: str | None = None) -> RepairResult:
    """Repair `snapshot` (format `fmt`, default `auto`; judged by the provider `profile`,
    default the format's); see the module docstring."""
    return repair_transcript(read_transcript(snapshot, fmt), placeholder=placeholder,
                             drop_wasteful=drop_wasteful, profile=profile)


def repair_transcript(transcript: Transcript, *, placeholder: str = INTERRUPTED,
                      drop_wasteful: bool = True, profile: str | None = None,
                      detach: bool = True) -> RepairResult:
    """`repair` of an already read transcript. With `detach=False` the output is read as
    assembled, sharing the input's message objects instead of a JSON copy of them: for a
    caller that owns the transcript and only reads the result (the corpus audit, which repairs
    every repairable failing pair)."""
    writer = writer_for(transcript)
    before = inspect_transcript(transcript, profile)
    fixed_never = tuple(d for d in before.defects if not d.repairable)
    if fixed_never:
        raise IrreparableError(fixed_never)
    loaded = transcript.loaded
    views = loaded.views
    dropped = {index: name for index, name in empties(loaded, range(len(views))).items()
               if drop_wasteful or name == EMPTY_ASSISTANT_TURN}
    order = [index for index in range(len(views)) if index not in dropped]
    pairing = pair(views, order)
    extra = {index: name for index, name in pairing.extra.items()
             if drop_wasteful or name != DUPLICATE_RESULT}
    pieces = writer.pieces(transcript)
    changes: list[tuple[int, Change]] = []

    def site(index: int, call: int | None = None) -> str:
        return loaded.site(SITE_LABEL, index, call)

    for index, name in {**dropped, **extra}.items():
        call_id = views[index].tool_call_id or None
        changes.append((index, Change("drop", name, site(index), loaded.wire_index(index),
                                      "dropped", call_id)))
    additions: dict[int, list[Piece]] = {}
    added: list[tuple[int, Piece, Change]] = []  # each new or moved piece and its change
    for call_id, (made, position) in pairing.calls.items():
        keeper = pairing.keepers.get(call_id)
        if keeper is not None and keeper in pairing.misplaced:
            moved = pieces[keeper]
            assert moved is not None
            moved = replace(moved, moved=True)
            additions.setdefault(made, []).append(moved)
            added.append((keeper, moved, Change(
                "move", pairing.misplaced[keeper], site(keeper), loaded.wire_index(keeper),
                f"moved into the batch after its call at {site(made, position)}", call_id)))
        elif keeper is None:
            new = writer.result(call_id, placeholder)
            additions.setdefault(made, []).append(new)
            added.append((made, new, Change(
                "synthesize", DANGLING_CALL, site(made, position), loaded.wire_index(made),
                "answered with a placeholder result (the call did not complete)", call_id)))
    for batch in additions.values():  # moved results keep their order of the input
        slots = [slot for slot, added_piece in enumerate(batch) if added_piece.moved]
        ordered = sorted((batch[slot] for slot in slots),
                         key=lambda moved_piece: (moved_piece.source or 0, moved_piece.positions))
        for slot, moved_piece in zip(slots, ordered, strict=True):
            batch[slot] = moved_piece
    if not changes and not added:
        if before.fatal:  # a provider rule the repair rules have no edit for
            raise IrreparableError(before.fatal)
        return RepairResult(transcript.shaped(transcript.wire), (), before, before)
    skip = set(extra) | set(pairing.misplaced)
    plan: list[Piece] = []
    pending: list[Piece] = []
    batch_open = False
    for index in order:
        view = views[index]
        if not (batch_open and view.role == "tool"):
            plan.extend(pending)
            pending, batch_open = [], False
        piece = pieces[index]
        if index in skip or piece is None:
            continue
        plan.append(piece)
        if view.role == "assistant" and view.calls:
            batch_open, pending = True, additions.get(index, [])
    plan.extend(pending)
    hosts = {id(piece): host for piece, host in zip(plan, writer.hosts(transcript, plan),
                                                    strict=True)}
    for index, piece, change in added:
        host = hosts[id(piece)]
        if host is not None:
            change = replace(change, into=host,
                             detail=f"{change.detail}, added to {SITE_LABEL}[{host}]")
        changes.append((index, change))
    assembled = writer.assemble(transcript, plan)
    output = (read_transcript(assembled, transcript.format) if detach else
              Transcript(assembled, transcript.format, transcript.format.load(assembled)))
    after = inspect_transcript(output, profile)
    if after.fatal:  # a bug: repair must never hand back an invalid transcript
        raise IrreparableError(after.fatal)
    changes.sort(key=lambda item: item[0])
    return RepairResult(transcript.shaped(output.wire), tuple(change for _, change in changes), before, after,
                        _synthesized(output.loaded, pairing.dangling), output.loaded)


def _synthesized(loaded: Loaded, dangling: tuple[str, ...]) -> tuple[Synthesized, ...]:
    if not dangling:
        return ()
    found: dict[str, str] = {}
    wanted = frozenset(dangling)  # a tuple's `in` made this quadratic in the unanswered calls
    for index, view in enumerate(loaded.views):
        if view.role == "tool" and view.tool_call_id in wanted:
            found.setdefault(view.tool_call_id, loaded.site(SITE_LABEL, index))
    return tuple(Synthesized(call_id, found[call_id]) for call_id in dangling)
