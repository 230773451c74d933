"""Model calls of a request log → conversations, their transitions, and one row per event.

Shared by every request-log source (`otel`, `langfuse`, `langsmith`): a source turns its
records into `Call`s (the request and response messages in a registered input format, the
conversation key it found, the start time, tokens, what it could not read); `pair_calls` does
the rest, purely:

1. calls are grouped by conversation key and ordered by start time (then end time, then row:
   an OTLP file is unordered, and equal times keep the file's order);
2. calls whose content is missing or cut short are `incomplete` (never a base, never read as a
   compaction); a call whose output reappears in a later request in another role (a summary
   sent back as a user or system message), or that its producer names a summarizer, is the
   `summarizer`; a request identical to the previous one is a `retry` (the base becomes the
   retry, whose response the conversation went on with);
3. every other call is classified against the previous call of its lineage
   (`diffing.classify`); a call that relates to none of the open lineages (`unrelated`: another
   agent sharing the conversation id, a title or guardrail call) is set apart as a `side` call
   and starts a lineage of its own (`<conversation>#2`, ...), diffed in turn; a call classified
   `rewind` or `truncate` whose lineage goes on from the previous call instead (a later call
   appends to it) is a side call too (a fork);
4. a stateful request (a delta on a server-side history) is `stateful`, never diffed; the
   request after a stateful one has nothing to diff against;
5. every `summarize`, `truncate`, `clear` and `rewind` transition is one `Compaction` with
   `fidelity: diffed`: before = the previous request and its response, after = the request
   minus its new tail, `session_id` the lineage, `source_row` the later call's row, the
   `Diff` its evidence (and the summarizer's call and output when found).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from frayproof_audit.errors import InputError
from frayproof_audit.formats import get_format
from frayproof_audit.loaded import Loaded
from frayproof_audit.sources.base import (
    CLASSIFICATIONS,
    CallRole,
    Classification,
    Compaction,
    Diff,
    Event,
    Lineage,
    Transition,
)
from frayproof_audit.sources.diffing import (
    Item,
    Verdict,
    asks_for_summary,
    carried,
    classify,
    items,
    reused,
    summarizer_output,
)

EVENT_CLASSES = frozenset({"summarize", "truncate", "clear", "rewind"})
LOOKAHEAD = 12
"""How many later calls of a conversation are searched for a summary's reuse or a fork's
continuation."""
STATEFUL_NOTE = ("stateful requests carry only a delta on a server-side history "
                 "(previous_response_id, a conversation or thread id): they are not diffed")


@dataclass(frozen=True, slots=True)
class Call:
    """One logged model call, as a source read it."""

    row: int
    """Its line or row (1-based)."""
    conversation: str
    grouped_by: str
    format: str
    """The registered input format of `request` and `response`."""
    request: list[Any] | None
    """The messages sent, as wire messages of `format` (None: not logged)."""
    response: list[Any] | None = None
    start: int | None = None
    """Start time, in nanoseconds since the epoch."""
    end: int | None = None
    logged_at: str | None = None
    name: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    stateful: str | None = None
    """Why the request carries only a delta (`previous_response_id is set`), if it does."""
    incomplete: str | None = None
    """Why its content cannot be diffed (not logged, cut short), if so."""
    summarizer: str | None = None
    """Why the producer names it the summarizer's call, if it does."""
    tiebreak: str = ""
    """Orders calls that start at the same time (LangSmith's `dotted_order`)."""
    marked: frozenset[int] = frozenset()
    """Wire messages of the request a producer tagged as a summary."""
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Read:
    call: Call
    request: list[Item] = field(default_factory=list)
    response: list[Item] = field(default_factory=list)
    calls: frozenset[str] = frozenset()
    incomplete: str | None = None
    role: CallRole = "main"
    output: str | None = None


@dataclass(slots=True)
class _Thread:
    session_id: str
    grouped_by: str
    base: _Read | None = None
    stateful: bool = False
    transitions: list[Transition] = field(default_factory=list)
    ordinal: int = 0
    notes: list[str] = field(default_factory=list)


def _load(call: Call, value: list[Any] | None, side: str) -> Loaded | None:
    if value is None:
        return None
    return get_format(call.format).load_copy(value)


def _read(call: Call) -> _Read:
    read = _Read(call, incomplete=call.incomplete)
    if read.incomplete is not None:
        return read
    if call.request is None:
        read.incomplete = "its request messages were not logged"
        return read
    try:
        request = _load(call, call.request, "request")
        response = _load(call, call.response, "response")
    except InputError as exc:
        read.incomplete = f"its messages cannot be read as {call.format}: {exc}"
        return read
    assert request is not None
    read.request = items(request, call.marked)
    if response is not None:
        offset = len(call.request)
        read.response = [replace(item, wire=item.wire + offset) for item in items(response)]
    read.calls = frozenset(i for item in read.response for i in item.call_ids)
    read.output = summarizer_output(read.request, read.response)
    return read


def _order(call: Call) -> tuple[bool, int, str, bool, int, int]:
    return (call.start is None, call.start or 0, call.tiebreak, call.end is None, call.end or 0,
            call.row)


def pair_calls(source: str, calls: Iterable[Call]) -> tuple[list[Compaction], list[Lineage]]:
    """The rows and lineages of a request log's calls (see the module docstring)."""
    groups: dict[str, list[Call]] = {}
    for call in calls:
        groups.setdefault(call.conversation, []).append(call)
    rows: list[Compaction] = []
    lineages: list[Lineage] = []
    for conversation, members in groups.items():
        found, threads = _conversation(source, conversation, sorted(members, key=_order))
        rows.extend(found)
        lineages.extend(_lineage(thread) for thread in threads)
    rows.sort(key=lambda row: (row.source_row, row.session_id, row.ordinal))
    return rows, lineages


def _lineage(thread: _Thread) -> Lineage:
    counted = {kind: 0 for kind in CLASSIFICATIONS}
    for transition in thread.transitions:
        if transition.classification is not None:
            counted[transition.classification] += 1
    return Lineage(thread.session_id, thread.grouped_by, tuple(thread.transitions),
                   tuple(counted.items()), tuple(dict.fromkeys(thread.notes)))


def _conversation(source: str, conversation: str,
                  calls: list[Call]) -> tuple[list[Compaction], list[_Thread]]:
    reads = [_read(call) for call in calls]
    _summarizers(reads)
    threads = [_Thread(conversation, calls[0].grouped_by)]
    rows: list[Compaction] = []
    pending: list[_Read] = []
    """Summarizer calls whose summary has not reappeared yet."""
    for position, read in enumerate(reads):
        call = read.call
        main = threads[0]
        if read.incomplete is not None:
            main.transitions.append(Transition(call.row, "incomplete", None, None, read.incomplete))
            main.notes.append(f"row {call.row}: {read.incomplete}; not diffed")
            continue
        if read.role == "summarizer":
            main.transitions.append(Transition(
                call.row, "summarizer", None, None,
                call.summarizer or "its output reappears in a later request as a summary"))
            pending.append(read)
            continue
        if call.stateful is not None:
            thread = next((t for t in threads if t.base is not None), main)
            previous = thread.base.call.row if thread.base is not None else None
            thread.transitions.append(Transition(call.row, "main", "stateful" if previous else None,
                                                 previous, call.stateful))
            thread.notes.append(STATEFUL_NOTE)
            thread.base, thread.stateful = read, True
            continue
        chosen = _relate(threads, read, pending)
        if chosen is None:  # the first call of the conversation, or one nothing relates to
            thread = main if main.base is None else _new_thread(threads, conversation, call)
            if thread is not main:
                last = _last_base(threads)
                main.transitions.append(Transition(
                    call.row, "side", "unrelated", last, "nothing of the previous requests is "
                    f"sent: another agent's call (lineage {thread.session_id})"))
            thread.transitions.append(Transition(call.row, "main", None, None,
                                                 "the lineage's first call"))
            thread.base = read
            continue
        thread, verdict = chosen
        base = thread.base
        assert base is not None
        if thread.stateful:
            thread.transitions.append(Transition(
                call.row, "main", None, base.call.row,
                "the previous request was stateful (a delta): nothing to diff against"))
            thread.base, thread.stateful = read, False
            continue
        if [i.key for i in read.request] == [i.key for i in base.request]:
            thread.transitions.append(Transition(call.row, "retry", None, base.call.row,
                                                 "the same request as the previous call"))
            thread.base = read
            continue
        if verdict.classification in ("rewind", "truncate") and _forked(reads, position, base, read):
            fork = _new_thread(threads, conversation, call)
            thread.transitions.append(Transition(
                call.row, "side", None, base.call.row, f"the conversation goes on from row "
                f"{base.call.row}, not from this call: a side call (lineage {fork.session_id})"))
            fork.transitions.append(Transition(call.row, "main", None, None, "the lineage's first call"))
            fork.base = read
            continue
        transition = Transition(call.row, "main", verdict.classification, base.call.row,
                                verdict.reasons[-1])
        if verdict.classification in EVENT_CLASSES:
            thread.ordinal += 1
            transition = replace(transition, ordinal=thread.ordinal)
            rows.append(_row(source, thread, base, read, verdict, pending))
        thread.transitions.append(transition)
        thread.base = read
    return rows, [thread for thread in threads if thread.transitions]


def _new_thread(threads: list[_Thread], conversation: str, call: Call) -> _Thread:
    thread = _Thread(f"{conversation}#{len(threads) + 1}", call.grouped_by)
    threads.append(thread)
    return thread


def _last_base(threads: Sequence[_Thread]) -> int | None:
    rows = [thread.base.call.row for thread in threads if thread.base is not None]
    return rows[-1] if rows else None


def _expected(read: _Read) -> list[Item]:
    return [*read.request, *read.response]


def _relate(threads: list[_Thread], read: _Read,
            pending: list[_Read]) -> tuple[_Thread, Verdict] | None:
    """The lineage the call goes on (an append first, most recent first), and its verdict."""
    summaries = tuple(p.output for p in pending if p.output is not None)
    related: list[tuple[_Thread, Verdict]] = []
    for thread in reversed(threads):
        if thread.base is None:
            continue
        if thread.stateful:
            return thread, Verdict("stateful", (), None, None, None, len(read.request))
        verdict = classify(_expected(thread.base), read.request, thread.base.calls, summaries)
        if verdict.classification == "append":
            return thread, verdict
        if verdict.classification != "unrelated":
            related.append((thread, verdict))
    if not related:
        return None
    # The lineage the request shares most with (then the same system prompt, then the latest).
    return max(enumerate(related), key=lambda pair: (pair[1][1].kept, pair[1][1].same_system,
                                                     -pair[0]))[1]


def _summarizers(reads: list[_Read]) -> None:
    """Mark the summarizer's calls: named so by their producer, or whose output reappears in a
    later request of the conversation in a message that is not the assistant's (a summary sent
    back as a user or system message), never as the assistant's own turn, and whose request
    asks for a summary or whose output reappears next to a known summary marker."""
    for position, read in enumerate(reads):
        if read.incomplete is not None:
            continue
        if read.call.summarizer is not None:
            read.role = "summarizer"
            continue
        output = read.output
        if output is None:
            continue
        later = [other for other in reads[position + 1:position + 1 + LOOKAHEAD]
                 if other.incomplete is None]
        if any(carried(output, other.request) for other in later):
            continue
        holders = [item for other in later for item in other.request
                   if item.role != "assistant" and reused(output, [item])]
        if holders and (asks_for_summary(read.request)
                        or any(item.marker is not None for item in holders)):
            read.role = "summarizer"


def _forked(reads: list[_Read], position: int, base: _Read, read: _Read) -> bool:
    """Whether a later call goes on from `base` rather than from `read` (`read` was a side
    call that happened to share the history: a title, a guardrail, a branch)."""
    expected = _expected(base)
    for later in reads[position + 1:position + 1 + LOOKAHEAD]:
        if later.incomplete is not None or later.role != "main" or later.call.stateful:
            continue
        if classify(expected, later.request, base.calls).classification == "append":
            return classify(_expected(read), later.request, read.calls).classification != "append"
    return False


def _wire(read: _Read, side: str) -> list[Any]:
    value = read.call.request if side == "request" else read.call.response
    loaded = _load(read.call, value, side)
    if loaded is None:
        return []
    if isinstance(value, list):
        return list(value)
    return list(loaded.wire)


def _row(source: str, thread: _Thread, base: _Read, read: _Read, verdict: Verdict,
         pending: list[_Read]) -> Compaction:
    notes: list[str] = [*base.call.notes, *read.call.notes]
    same = base.call.format == read.call.format and isinstance(base.call.request, list) \
        and isinstance(read.call.request, list)
    if same:
        fmt = read.call.format
        before = [*_wire(base, "request"), *_wire(base, "response")]
        request_wire = _wire(read, "request")
    else:
        fmt = "openai"
        before = [*_neutral(base.call, "request"), *_neutral(base.call, "response")]
        request_wire = _neutral(read.call, "request")
        notes.append(f"the two calls were logged in different formats ({base.call.format}, "
                     f"{read.call.format}): before and after are their neutral (openai) reading")
    cut = _cut(read.request, verdict.after_items, len(request_wire))
    after = request_wire[:cut]
    if cut < len(request_wire):
        notes.append(f"the after is the request without its new tail (the last "
                     f"{len(request_wire) - cut} message(s), appended since the previous call)")
    if base.call.response is None:
        notes.append(f"the response of row {base.call.row} was not logged: before is its request only")
    summarizer = _summarizer(pending, read)
    diverged = (_expected(base)[verdict.diverged_at].wire if verdict.diverged_at is not None
                and verdict.diverged_at < len(_expected(base)) else None)
    reasons = list(verdict.reasons)
    tokens_before = base.call.tokens_in
    if tokens_before is not None and base.call.tokens_out is not None:
        tokens_before += base.call.tokens_out
    if tokens_before is not None and read.call.tokens_in is not None:
        reasons.append(f"tokens: {tokens_before} before (input and output of row {base.call.row}), "
                       f"{read.call.tokens_in} input tokens in row {read.call.row}")
    name = summarizer.call.name if summarizer is not None and summarizer.call.name else None
    return Compaction(
        source_row=read.call.row, ordinal=thread.ordinal, session_id=thread.session_id,
        logged_at=read.call.logged_at, compactor=f"{source}/{name or 'unknown'}", format=fmt,
        event=_event(verdict.classification), fidelity="diffed", before=before, after=after,
        tokens_before=tokens_before, tokens_after=read.call.tokens_in,
        notes=tuple(dict.fromkeys(notes)),
        diff=Diff(verdict.classification, base.call.row, diverged, verdict.before_item,
                  verdict.after_item, tuple(reasons),
                  summarizer.call.row if summarizer is not None else None,
                  summarizer.output if summarizer is not None else None))


def _event(classification: Classification) -> Event:
    if classification not in EVENT_CLASSES:
        raise AssertionError(f"{classification} is no event")  # pragma: no cover
    return cast(Event, classification)


def _neutral(call: Call, side: str) -> list[Any]:
    loaded = _load(call, call.request if side == "request" else call.response, side)
    return [] if loaded is None else list(loaded.wire)


def _cut(request: list[Item], after_items: int, size: int) -> int:
    """The wire length of the after: up to the wire message of the first tail item (kept whole
    when it also holds an after item)."""
    if after_items >= len(request):
        return size
    cut = request[after_items].wire
    if after_items and request[after_items - 1].wire == cut:
        cut += 1
    return max(0, min(cut, size))


def _summarizer(pending: list[_Read], read: _Read) -> _Read | None:
    """The latest summarizer call before this one whose output this request holds."""
    for candidate in reversed(pending):
        if candidate.output is not None and reused(candidate.output, read.request):
            pending.remove(candidate)
            return candidate
    return None
