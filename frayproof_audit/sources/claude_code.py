"""Claude Code transcripts: `~/.claude/projects/<project>/<session id>.jsonl` and its subagents.

Claude Code is closed source; what this module relies on is the transcript format as written
down from real files (jeremedia/claude-code-log-format `CLAUDE_CODE_LOG_FORMAT.md`, validated on
v2.0.x logs) and as the anthropics/claude-code issues quote it. Each line is an entry with
`type` (`user`, `assistant`, `system`, `summary`, `attachment`, `progress`,
`file-history-snapshot`, `queue-operation`, ... unknown types are skipped), `uuid` and
`parentUuid`: the conversation is a tree, and the history the model saw at an entry is the
chain from it back through `parentUuid`. Only `user` and `assistant` entries are sent (their
`message` is an Anthropic Messages message); one API response is written as several `assistant`
lines sharing `message.id` (one per content block), which are one message to the API, and
parallel tool results are written one `tool_result` per `user` line, which the API receives as
one user message. Both are merged back.

Compaction markers are `system` entries:

* `subtype: compact_boundary` (summarization, `compactMetadata.trigger` `auto` | `manual`,
  `preTokens`, `postTokens`): it has `parentUuid: null` and `logicalParentUuid` = the last
  entry before compaction, so the before is the chain ending there; the after is the
  `isCompactSummary` user entry whose `parentUuid` is the boundary, followed by the preserved
  messages (`compactMetadata.preservedMessages.uuids`, or the `preservedSegment` chain from
  `tailUuid` back to `headUuid`). Fidelity `replayed`. The chain of a later compaction ends at
  this one's summary or preserved messages, so its before is this after plus what followed.
  A summary that was never written (anthropics/claude-code#43053) is taken from the
  summarizer's own transcript, `<session>/subagents/agent-acompact-*.jsonl` (its final
  assistant text), when one of them finished before the boundary (fidelity `rebuilt`: the
  text Claude Code wraps around it is not known); otherwise the row says the summary is
  missing.
* `subtype: microcompact_boundary` (`microcompactMetadata.compactedToolIds`): old tool results
  cleared in place, an event `clear`: the after is the before with the content of those results
  replaced by Claude Code's placeholder, `[Old tool result content cleared]` (fidelity
  `rebuilt`).

`{"type": "summary", "summary", "leafUuid"}` lines are session titles, not compactions
(anthropics/claude-code#22193). A chain that names an entry the file lacks (#22526) is a
problem of the compaction whose before or after it is, never a guess. Not in the transcript:
the system prompt, the tool definitions, and attachments as Claude Code renders them into the
request (files re-read after compaction, todo lists), so before and after hold only the
conversation's messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, NamedTuple

from frayproof_audit.sources.base import (
    Compaction,
    Derived,
    FileRole,
    Line,
    LineProblem,
    Row,
    Siblings,
    Source,
    Tally,
    first_objects,
    integer_of,
    parsed,
    string_of,
)

NAME = "claude-code"
FORMAT = "anthropic"
SENT = frozenset({"user", "assistant"})
CLEARED = "[Old tool result content cleared]"
"""The text microcompaction puts in place of a cleared tool result (as public transcript
parsers quote it; Claude Code is closed source)."""
ENTRY_TYPES = frozenset({"user", "assistant", "system", "summary", "attachment", "progress",
                         "file-history-snapshot", "queue-operation", "custom-title", "ai-title",
                         "last-prompt", "mode"})
SESSION_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl")
SUMMARIZER = "summarizer transcript (agent-acompact-*): not a session; read for a summary " \
             "its session file lacks"
SUMMARIZER_NOTE = ("summary taken from the summarizer's transcript {name}: the session file "
                   "lacks it (anthropics/claude-code#43053); the text Claude Code wraps around "
                   "it is not known")
STAND_IN_NOTE = ("before continues from the compaction of line {row}, whose summary came from "
                 "the summarizer's transcript (the entries after it name the summary that was "
                 "never written)")
NO_SYSTEM_NOTE = "the system prompt and tool definitions are not in the transcript"


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        kind = value.get("type")
        if kind not in ENTRY_TYPES:
            continue
        if type(value.get("uuid")) is str and ("parentUuid" in value or "sessionId" in value):
            return f"line {row} is a Claude Code entry (type {kind!r} with uuid)"
        if kind == "summary" and "leafUuid" in value:
            return f"line {row} is a Claude Code title line (type 'summary' with leafUuid)"
        if kind == "file-history-snapshot" and "messageId" in value:
            return f"line {row} is a Claude Code file-history-snapshot"
    return None


def role(path: PurePath) -> FileRole | None:
    name = path.name
    if name.startswith("agent-acompact-") and name.endswith(".jsonl"):
        return FileRole("summarizer", SUMMARIZER)
    if name.startswith("agent-") and name.endswith(".jsonl"):
        return FileRole("session")  # a subagent's own session
    if SESSION_NAME.fullmatch(name) and "chats" not in path.parts[-3:-1]:
        return FileRole("session")
    return None


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class _Message:
    """A model-visible message being assembled: never changed once in a context list (a
    merge makes a new one), so contexts share messages safely."""

    role: str
    content: Any
    message_id: str | None = None
    results_only: bool = False

    def wire(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}


def _results_only(content: Any) -> bool:
    return (type(content) is list and bool(content)
            and all(type(block) is dict and block.get("type") == "tool_result" for block in content))


def _visible(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    return (entry.get("type") in SENT and type(message) is dict
            and type(message.get("role")) is str and "content" in message)


def append(context: list[_Message], entry: dict[str, Any]) -> None:
    """Add an entry's message as the API receives it: an assistant fragment joins the earlier
    fragments of its `message.id` (tool results written between them stay after that message),
    and a user line of tool results joins the results line before it."""
    message = entry["message"]
    content = message["content"]
    role_name = message["role"]
    if role_name == "assistant":
        message_id = string_of(message.get("id"))
        if message_id is not None:
            for position in range(len(context) - 1, -1, -1):
                found = context[position]
                if found.role == "assistant" and found.message_id == message_id:
                    context[position] = replace(found, content=[*_blocks(found.content),
                                                                *_blocks(content)])
                    return
                if not found.results_only:
                    break
        context.append(_Message(role_name, content, message_id))
        return
    if _results_only(content) and context and context[-1].results_only:
        last = context[-1]
        context[-1] = replace(last, content=[*last.content, *content])
        return
    context.append(_Message(role_name, content, results_only=_results_only(content)))


def _blocks(content: Any) -> list[Any]:
    if type(content) is list:
        return content
    if type(content) is str:
        return [{"type": "text", "text": content}]
    return []


def _cleared(context: list[_Message], ids: frozenset[str]) -> list[_Message]:
    out: list[_Message] = []
    for message in context:
        content = message.content
        if type(content) is list and any(_clears(block, ids) for block in content):
            content = [{**block, "content": CLEARED} if _clears(block, ids) else block
                       for block in content]
            message = replace(message, content=content)
        out.append(message)
    return out


def _clears(block: Any, ids: frozenset[str]) -> bool:
    return (type(block) is dict and block.get("type") == "tool_result"
            and block.get("tool_use_id") in ids)


# --------------------------------------------------------------------------- the transcript


class _Entry(NamedTuple):
    row: int
    value: dict[str, Any]


class _Known(NamedTuple):
    """The model-visible history ending at an entry, valid from line `since` on."""

    since: int
    context: list[_Message]
    any_occurrence: bool = False


class _Broken(Exception):
    """A chain that cannot be followed; the text says where."""


class _Transcript:
    def __init__(self, label: str) -> None:
        self.label = label
        self.by_uuid: dict[str, list[_Entry]] = {}
        self.markers: list[_Entry] = []
        self.summaries: dict[str, list[_Entry]] = {}
        """parentUuid → the isCompactSummary entries that name it."""
        self.leaf: _Entry | None = None
        self.known: dict[str, _Known] = {}
        self.missing_summary: list[tuple[int, list[_Message]]] = []
        """(boundary line, after) of boundaries whose summary came from the summarizer."""
        self.session_id: str | None = None
        self.stood_in: int | None = None
        """The boundary whose stand-in summary the last `context_at` went through."""

    def add(self, row: int, value: dict[str, Any], tally: Tally) -> None:
        entry = _Entry(row, value)
        uuid = string_of(value.get("uuid"))
        if uuid is not None:
            self.by_uuid.setdefault(uuid, []).append(entry)
        if self.session_id is None:
            self.session_id = _session_of(value)
        if value.get("type") == "system" and value.get("subtype") in ("compact_boundary",
                                                                       "microcompact_boundary"):
            tally.events += 1
            self.markers.append(entry)
            return
        tally.other += 1
        parent = string_of(value.get("parentUuid"))
        if value.get("isCompactSummary") is True and parent is not None:
            self.summaries.setdefault(parent, []).append(entry)
        if _visible(value):
            self.leaf = entry

    def lookup(self, uuid: str, limit: float) -> _Entry | None:
        found = self.by_uuid.get(uuid)
        if not found:
            return None
        for entry in found[::-1]:
            if entry.row < limit:
                return entry
        return None

    def context_at(self, uuid: str, limit: float, start_row: int) -> list[_Message]:
        """The model-visible history ending at entry `uuid` (the latest one before `limit`)."""
        collected: list[dict[str, Any]] = []
        seen: set[str] = set()
        current, named_at = uuid, start_row
        prefix: list[_Message] = []
        while True:
            entry = self.lookup(current, limit)
            known = self.known.get(current)
            if known is not None and known.since < limit and (
                    known.any_occurrence or entry is None or entry.row > known.since):
                prefix = known.context
                break
            if entry is None:
                rebuilt = self._summary_stand_in(named_at)
                if rebuilt is None:
                    raise _Broken(f"the parentUuid chain breaks at line {named_at}: it names "
                                  f"{current!r}, which no earlier line of the file is")
                prefix = rebuilt
                break
            if current in seen:
                raise _Broken(f"the parentUuid chain loops at line {entry.row}")
            seen.add(current)
            value = entry.value
            if value.get("type") == "system" and value.get("subtype") == "compact_boundary":
                raise _Broken(f"the chain reaches the compact boundary of line {entry.row}, "
                              "whose after could not be rebuilt")
            collected.append(value)
            parent = value.get("parentUuid")
            if parent is None:
                break
            if type(parent) is not str:
                raise _Broken(f"line {entry.row}: parentUuid must be a string or null")
            current, named_at = parent, entry.row
        context = list(prefix)
        for value in reversed(collected):
            if _visible(value):
                append(context, value)
        return context

    def _summary_stand_in(self, row: int) -> list[_Message] | None:
        """A chain broken right after a boundary whose summary was never written names that
        summary: its after stands in (the latest such boundary before the line)."""
        for boundary, after in reversed(self.missing_summary):
            if boundary < row:
                self.stood_in = boundary
                return after
        return None

    # -- compactions -------------------------------------------------------------------

    def compactions(self, siblings: Siblings | None) -> Iterator[Compaction]:
        summarizers = _Summarizers(siblings, self.session_id)
        seen: dict[str, int] = {}
        for marker in self.markers:
            # Older builds wrote subagent sidechains into the session's file: each session
            # counts its own compactions.
            session = _session_of(marker.value) or self.label
            seen[session] = seen.get(session, 0) + 1
            yield self.compaction(seen[session], marker, summarizers)

    def compaction(self, ordinal: int, marker: _Entry, summarizers: _Summarizers) -> Compaction:
        value = marker.value
        micro = value.get("subtype") == "microcompact_boundary"
        meta = value.get("microcompactMetadata" if micro else "compactMetadata")
        meta = meta if type(meta) is dict else {}
        trigger = meta.get("trigger") if meta.get("trigger") in ("auto", "manual") else None
        tokens_after = integer_of(meta.get("postTokens"))
        pre = integer_of(meta.get("preTokens"))
        saved = integer_of(meta.get("tokensSaved"))
        if tokens_after is None and pre is not None and saved is not None:
            tokens_after = pre - saved
        compactor = "claude-code/micro" if micro else (
            f"claude-code/{trigger}" if trigger else "claude-code")
        base = Compaction(
            source_row=marker.row, ordinal=ordinal, session_id=_session_of(value) or self.label,
            logged_at=string_of(value.get("timestamp")), compactor=compactor, format=FORMAT,
            event="clear" if micro else "summarize", fidelity="rebuilt" if micro else "replayed",
            before=None, after=None, trigger=trigger, tokens_before=pre,
            tokens_after=tokens_after, notes=(NO_SYSTEM_NOTE,))
        leaf = string_of(value.get("logicalParentUuid")) or string_of(value.get("parentUuid"))
        if leaf is None:
            return replace(base, problem=f"line {marker.row}: the boundary names no "
                                         "logicalParentUuid: its before cannot be found")
        self.stood_in = None
        try:
            before = self.context_at(leaf, marker.row, marker.row)
        except _Broken as broken:
            return replace(base, problem=f"before: {broken}")
        if self.stood_in is not None:
            base = replace(base, notes=(*base.notes, STAND_IN_NOTE.format(row=self.stood_in)))
        if micro:
            ids = meta.get("compactedToolIds")
            cleared = frozenset(i for i in ids if type(i) is str) if type(ids) is list else frozenset()
            after = _cleared(before, cleared)
            uuid = string_of(value.get("uuid"))
            if uuid is not None:
                self.known[uuid] = _Known(marker.row - 1, after)
            self.known[leaf] = _Known(marker.row, after, any_occurrence=True)
            return replace(base, before=_wire(before), after=_wire(after))
        try:
            after, notes, summary_uuid = self.after(marker, meta, summarizers)
        except _Broken as broken:
            return replace(base, before=None, problem=f"after: {broken}")
        self.register(marker, after, summary_uuid, meta)
        fidelity = "rebuilt" if notes else base.fidelity
        return replace(base, before=_wire(before), after=_wire(after), fidelity=fidelity,
                       notes=(*base.notes, *notes))

    def after(self, marker: _Entry, meta: dict[str, Any],
              summarizers: _Summarizers) -> tuple[list[_Message], tuple[str, ...], str | None]:
        boundary = string_of(marker.value.get("uuid"))
        candidates = [entry for entry in self.summaries.get(boundary or "", ())
                      if entry.row > marker.row] if boundary else []
        notes: tuple[str, ...] = ()
        summary_uuid: str | None = None
        if candidates and _visible(candidates[0].value):
            summary = candidates[0].value
            summary_uuid = string_of(summary.get("uuid"))
            context = [_Message("user", summary["message"]["content"])]
        else:
            found = summarizers.summary_before(string_of(marker.value.get("timestamp")))
            if found is None:
                raise _Broken(f"the compact summary of the boundary at line {marker.row} was "
                              "never written (no isCompactSummary entry names it, and no "
                              "summarizer transcript holds it: anthropics/claude-code#43053)")
            name, text = found
            context = [_Message("user", text)]
            notes = (SUMMARIZER_NOTE.format(name=name),)
        for value in self.preserved(marker, meta):
            if _visible(value):
                append(context, value)
        return context, notes, summary_uuid

    def preserved(self, marker: _Entry, meta: dict[str, Any]) -> list[dict[str, Any]]:
        limit = self._next_marker_row(marker)
        kept = meta.get("preservedMessages")
        uuids = kept.get("uuids") if type(kept) is dict else None
        if type(uuids) is list:
            found = []
            for uuid in uuids:
                entry = self.lookup(uuid, limit) if type(uuid) is str else None
                if entry is None:
                    raise _Broken(f"the boundary at line {marker.row} preserves {uuid!r}, "
                                  "which no line of the file is")
                found.append(entry.value)
            return found
        segment = meta.get("preservedSegment")
        if type(segment) is not dict:
            return []
        head, tail = string_of(segment.get("headUuid")), string_of(segment.get("tailUuid"))
        if head is None or tail is None:
            return []
        chain: list[dict[str, Any]] = []
        current: str | None = tail
        while current is not None:
            entry = self.lookup(current, limit)
            if entry is None or len(chain) > len(self.by_uuid):
                raise _Broken(f"the preserved segment of the boundary at line {marker.row} "
                              f"cannot be followed from {tail!r} back to {head!r}")
            chain.append(entry.value)
            if current == head:
                break
            current = string_of(entry.value.get("parentUuid"))
        if current is None:
            raise _Broken(f"the preserved segment of the boundary at line {marker.row} "
                          f"does not reach its head {head!r}")
        chain.reverse()
        return chain

    def register(self, marker: _Entry, after: list[_Message], summary_uuid: str | None,
                 meta: dict[str, Any]) -> None:
        """Later chains end at this compaction's summary or preserved messages: the history
        there is this after (or its prefix through that preserved message)."""
        if summary_uuid is None:
            self.missing_summary.append((marker.row, after))
            return
        self.known[summary_uuid] = _Known(marker.row, after)
        kept = meta.get("preservedMessages")
        uuids = kept.get("uuids") if type(kept) is dict else None
        if type(uuids) is list and len(uuids) == len(after) - 1:
            for position, uuid in enumerate(uuids[:-1]):
                if type(uuid) is str:
                    self.known[uuid] = _Known(marker.row, after[:position + 2])
        if type(uuids) is list and uuids and type(uuids[-1]) is str:
            self.known[uuids[-1]] = _Known(marker.row, after)

    def _next_marker_row(self, marker: _Entry) -> float:
        later = [entry.row for entry in self.markers if entry.row > marker.row]
        return later[0] if later else float("inf")


def _wire(context: list[_Message]) -> list[Any]:
    return [message.wire() for message in context]


def _session_of(value: dict[str, Any]) -> str | None:
    """`sessionId`; a sidechain's entries (a subagent, written with its parent's sessionId)
    are their own session, `<sessionId>/agent-<agentId>`."""
    session = string_of(value.get("sessionId"))
    agent = string_of(value.get("agentId"))
    if session is not None and value.get("isSidechain") is True and agent:
        return f"{session}/agent-{agent}"
    return session


class _Summarizers:
    """The summarizer transcripts of a session (`agent-acompact-*.jsonl`): each one's final
    assistant text and when it was written, each used at most once."""

    def __init__(self, siblings: Siblings | None, session_id: str | None) -> None:
        self.siblings = siblings
        self.session_id = session_id
        self.found: list[tuple[str, str, str]] | None = None
        self.used: set[str] = set()

    def _load(self) -> list[tuple[str, str, str]]:
        if self.found is None:
            self.found = []
            if self.siblings is not None and self.session_id and "/" not in self.session_id:
                pattern = f"{self.session_id}/subagents/agent-acompact-*.jsonl"
                for name, lines in self.siblings(pattern):
                    final = _final_text(lines)
                    if final is not None:
                        self.found.append((final[0], name, final[1]))
            self.found.sort()
        return self.found

    def summary_before(self, timestamp: str | None) -> tuple[str, str] | None:
        if timestamp is None:
            return None
        chosen = None
        for written, name, text in self._load():
            if written <= timestamp and name not in self.used:
                chosen = (name, text)
        if chosen is not None:
            self.used.add(chosen[0])
        return chosen


def _final_text(lines: Iterable[Line]) -> tuple[str, str] | None:
    """(timestamp, text) of a transcript's last assistant message with text."""
    final: tuple[str, str] | None = None
    for _, value in parsed(lines, Tally()):
        if isinstance(value, LineProblem) or not _visible(value):
            continue
        message = value["message"]
        timestamp = string_of(value.get("timestamp"))
        if message["role"] != "assistant" or timestamp is None:
            continue
        text = "".join(block["text"] for block in _blocks(message["content"])
                       if type(block) is dict and block.get("type") == "text"
                       and type(block.get("text")) is str)
        if text:
            final = (timestamp, text)
    return final


def _read(label: str, lines: Iterable[Line]) -> tuple[_Transcript, Tally, list[LineProblem]]:
    tally = Tally()
    transcript = _Transcript(label)
    problems: list[LineProblem] = []
    for row, value in parsed(lines, tally):
        if isinstance(value, LineProblem):
            problems.append(value)
        else:
            transcript.add(row, value, tally)
    return transcript, tally, problems


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    transcript, tally, problems = _read(label, lines)
    rows: list[Row] = [*problems, *transcript.compactions(siblings)]
    rows.sort(key=lambda row: row.source_row)
    return Derived(tuple(rows), tally.frozen())


def history(lines: Iterable[Line]) -> list[Any]:
    """The chain ending at the newest user or assistant entry: what the next request sends
    (the active branch when the tree forks), compactions applied."""
    transcript, _, _ = _read("", lines)
    for _ in transcript.compactions(None):
        pass
    leaf = transcript.leaf
    if leaf is None:
        return []
    uuid = string_of(leaf.value.get("uuid"))
    if uuid is None:
        return []
    return _wire(transcript.context_at(uuid, float("inf"), leaf.row))


SOURCE = Source(
    name=NAME, format=FORMAT, sniff=sniff, derive=derive, role=role, history=history,
    cycle_free=True,  # its own replay of parsed JSON (tests/test_source_collector.py)
    notes=(NO_SYSTEM_NOTE, "attachments Claude Code renders into the request are not rebuilt"))
