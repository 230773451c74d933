"""Gemini CLI sessions: `~/.gemini/tmp/<project hash>/chats/session-<time>-<id8>.jsonl`.

Subagents write `chats/<parent session id>/<session id>.jsonl`. The file is replayed as the CLI
loads it (google-gemini/gemini-cli `packages/core/src/services/chatRecordingService.ts`,
`loadConversationRecord`), line by line, each line tested in the CLI's order: a
`{"$rewindTo": id}` drops that message and every later one (all of them when the id is not
there); a record with a string `id` is a message, upserted (a later line with the same id
replaces it where it stands); a `{"$set": {...}}` updates metadata, and a `$set.messages`
array is a checkpoint: "clear and rebuild from the provided messages array"; the first line
(`sessionId`, `projectHash`) is metadata. Other lines are ignored.

The model-visible history is the messages converted as the CLI converts them on resume
(`packages/core/src/utils/sessionUtils.ts`, `convertSessionToClientHistory`): `info`, `error`
and `warning` records are not sent, nor are user records whose text is empty or starts with
`/`, `?`, `<session_context>` or `<hook_context>` (`isIgnoredUserContent`: slash commands); a
user record is a `user` Content of its parts; a `gemini` record whose parts hold calls or
thoughts is a `model` Content of them, else one rebuilt from its recorded thoughts, text and
`toolCalls` (as `functionCall` parts), followed by a `user` Content of the calls' results.
Builds since May 2026 also record a tool response as the user record that follows
(`packages/core/src/core/geminiChat.ts`: "Record tool response as a message"), the response
the model was sent; then the `toolCalls` copy of it is not sent again.

A compression is written as a `$set.messages` checkpoint (since 2026-05-18, when
`GeminiClient.tryCompressChat` restarts the chat on the compressed history,
`packages/core/src/core/client.ts`, and the new chat syncs it to the file,
`updateMessagesFromHistory`). It is a `summarize` event when the new array holds a new
`<state_snapshot>` user message followed by the model's `Got it. Thanks for the additional
context!` (the exact turns `packages/core/src/context/chatCompressionService.ts` builds): the
before is the replayed history just before that line, the after the array itself (fidelity
`explicit`). A checkpoint that only shortens tool output (`toolOutputMaskingService.ts` puts a
`<tool_output_masked>` preview in place of a large response; truncation cuts old responses) is
a `clear` event. Every other `$set` (the bootstrap sync of the environment context at start,
id syncs, metadata) is no compaction. The system instruction is never written to the file.
Old `session-*.json` files (one JSON document, before 2026-04) record no compression.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Any

from frayproof_audit.jsonio import canonical
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

NAME = "gemini-cli"
FORMAT = "gemini"
SNAPSHOT_TAG = "<state_snapshot>"
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
MASKED_TAG = "<tool_output_masked>"
"""`toolOutputMaskingService.ts`: `MASKING_INDICATOR_TAG` wraps a masked response's preview."""
NOT_SENT = frozenset({"info", "error", "warning"})
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
SESSION_NAME = re.compile(r"session-.*\.jsonl")
LEGACY_NAME = re.compile(r"session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[0-9A-Za-z]{8}\.json")
"""`session-<first 16 characters of the start time, colons as ->-<first 8 of the session id>.json`
(`chatRecordingService.ts` before 2026-04)."""
SUBAGENT_NAME = re.compile(r"[^/]+\.jsonl")
LEGACY_NOTE = ("old Gemini CLI session files (session-*.json, before 2026-04) record no "
               "compression: nothing in them to audit")
NO_SYSTEM_NOTE = "the system instruction is not in the session file"


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        if type(value.get("sessionId")) is str and type(value.get("projectHash")) is str:
            return f"line {row} is Gemini CLI session metadata (sessionId and projectHash)"
        if "$rewindTo" in value or type(value.get("$set")) is dict:
            return f"line {row} is a Gemini CLI session update ($set or $rewindTo)"
        if type(value.get("id")) is str and value.get("type") in ("user", "gemini", *NOT_SENT) \
                and "content" in value and "uuid" not in value:
            return f"line {row} is a Gemini CLI message record (type {value['type']!r})"
    return None


def role(path: PurePath) -> FileRole | None:
    name = path.name
    if SESSION_NAME.fullmatch(name):
        return FileRole("session")
    if LEGACY_NAME.fullmatch(name):
        return FileRole("legacy", LEGACY_NOTE)
    parts = path.parts
    if len(parts) >= 3 and parts[-3] == "chats" and SUBAGENT_NAME.fullmatch(name):
        return FileRole("session")  # chats/<parent session>/<session>.jsonl
    return None


# --------------------------------------------------------------------------- records → Content[]


def _part_list(content: Any) -> list[Any]:
    """`ensurePartArray`: strings become text parts."""
    if type(content) is list:
        return [{"text": part} if type(part) is str else part for part in content]
    if type(content) is str:
        return [{"text": content}]
    return [content]


def _as_text(content: Any) -> str:
    """`partListUnionToString` (verbose), as far as `isIgnoredUserContent` reads it."""
    if not content:
        return ""
    if type(content) is str:
        return content
    if type(content) is list:
        return "".join(_as_text(part) for part in content)
    if type(content) is not dict:
        return ""
    for key, label in (("videoMetadata", "[Video Metadata]"), ("thought", "[Thought]"),
                       ("codeExecutionResult", "[Code Execution Result]"),
                       ("executableCode", "[Executable Code]"), ("fileData", "[File Data]"),
                       ("functionCall", "[Function Call]"),
                       ("functionResponse", "[Function Response]"), ("inlineData", "[Media]")):
        if key in content:
            return label
    text = content.get("text")
    return text if type(text) is str else ""


def _ignored(record: dict[str, Any]) -> bool:
    text = _as_text(record.get("content")).strip()
    return not text or text.startswith(IGNORED_PREFIXES)


def _response_ids(parts: list[Any]) -> set[str]:
    return {part["functionResponse"].get("id") for part in parts
            if type(part) is dict and type(part.get("functionResponse")) is dict
            and type(part["functionResponse"].get("id")) is str}


def contents(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as the model's `Content[]` (see the module docstring)."""
    sent = [record for record in records if record.get("type") not in NOT_SENT
            and not (record.get("type") == "user" and _ignored(record))]
    history: list[dict[str, Any]] = []
    for position, record in enumerate(sent):
        kind = record.get("type")
        if kind == "user":
            history.append({"role": "user", "parts": _part_list(record.get("content"))})
        elif kind == "gemini":
            history.extend(_model_turns(record, sent[position + 1:position + 2]))
    return history


def _model_turns(record: dict[str, Any], following: list[dict[str, Any]]) -> list[dict[str, Any]]:
    content = record.get("content")
    parts = _part_list(content) if content else []
    calls = record.get("toolCalls")
    calls = [call for call in calls if type(call) is dict] if type(calls) is list else []
    if any(type(p) is dict and (p.get("functionCall") or p.get("thought")) for p in parts):
        model = parts
    else:
        model = []
        thoughts = record.get("thoughts")
        for thought in thoughts if type(thoughts) is list else ():
            if type(thought) is dict:
                subject, description = thought.get("subject"), thought.get("description")
                text = f"**{subject}** {description}" if subject else description
                model.append({"text": text, "thought": True})
        model.extend(parts)
        for call in calls:
            model.append({"functionCall": {"id": call.get("id"), "name": call.get("name"),
                                           "args": call.get("args")}})
    if not model:
        return []
    turns = [{"role": "model", "parts": model}]
    responses: list[Any] = []
    for call in calls:
        result = call.get("result")
        if not result:
            continue
        if type(result) is str:
            responses.append({"functionResponse": {"id": call.get("id"), "name": call.get("name"),
                                                   "response": {"output": result}}})
        elif type(result) is list:
            responses.extend(_part_list(result))
        else:
            responses.append(result)
    recorded = (following and following[0].get("type") == "user"
                and _response_ids(_part_list(following[0].get("content")))
                & {call.get("id") for call in calls})
    if responses and not recorded:
        turns.append({"role": "user", "parts": responses})
    return turns


# --------------------------------------------------------------------------- replay


def _snapshot_at(records: list[dict[str, Any]], known: set[str]) -> bool:
    """A new `<state_snapshot>` user record followed by the model's acknowledgement."""
    for first, second in itertools.pairwise(records):
        if (first.get("type") == "user" and first.get("id") not in known
                and SNAPSHOT_TAG in _as_text(first.get("content"))
                and second.get("type") == "gemini"
                and _as_text(second.get("content")).strip() == ACKNOWLEDGEMENT):
            return True
    return False


def _responses(history: list[dict[str, Any]]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for content in history:
        for part in content["parts"]:
            response = part.get("functionResponse") if type(part) is dict else None
            if type(response) is dict and type(response.get("id")) is str:
                found[response["id"]] = canonical(response.get("response"))
    return found


def _cleared(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> bool:
    """A response of before, by call id, that after holds masked or shorter."""
    old = _responses(before)
    for call_id, response in _responses(after).items():
        earlier = old.get(call_id)
        if earlier is not None and response != earlier and (
                MASKED_TAG.encode() in response or len(response) < len(earlier)):
            return True
    return False


class _Replay:
    def __init__(self, label: str) -> None:
        self.label = label
        self.session_id: str | None = None
        self.messages: dict[str, dict[str, Any]] = {}
        self.rows: list[Row] = []
        self.ordinal = 0

    def line(self, row: int, value: dict[str, Any], tally: Tally) -> None:
        rewind = value.get("$rewindTo")
        if type(rewind) is str:
            tally.other += 1
            self.rewind(rewind)
        elif type(value.get("id")) is str:
            tally.other += 1
            self.messages[value["id"]] = value
        elif type(value.get("$set")) is dict:
            self.set(row, value["$set"], tally)
        else:
            tally.other += 1
            if type(value.get("sessionId")) is str and type(value.get("projectHash")) is str:
                self.session_id = self.session_id or value["sessionId"]
                for record in value.get("messages") or ():
                    if type(record) is dict and type(record.get("id")) is str:
                        self.messages[record["id"]] = record

    def rewind(self, target: str) -> None:
        if target not in self.messages:
            self.messages.clear()
            return
        ids = list(self.messages)
        for message_id in ids[ids.index(target):]:
            del self.messages[message_id]

    def set(self, row: int, update: dict[str, Any], tally: Tally) -> None:
        new = update.get("messages")
        if type(new) is not list:
            tally.other += 1
            return
        records = [record for record in new if type(record) is dict
                   and type(record.get("id")) is str]
        previous = list(self.messages.values())
        event = None
        if _snapshot_at(records, set(self.messages)):
            event = "summarize"
        before = contents(previous)
        after = contents(records)
        if event is None and _cleared(before, after):
            event = "clear"
        self.messages = {}
        for record in records:
            self.messages[record["id"]] = record
        if event is None:
            tally.other += 1
            return
        tally.events += 1
        self.ordinal += 1
        self.rows.append(Compaction(
            source_row=row, ordinal=self.ordinal, session_id=self.session_id or self.label,
            logged_at=string_of(update.get("lastUpdated")), compactor="gemini-cli",
            format=FORMAT, event="summarize" if event == "summarize" else "clear",
            fidelity="explicit", before=before, after=after,
            tokens_before=_last_prompt_tokens(previous), notes=(NO_SYSTEM_NOTE,)))


def _last_prompt_tokens(records: list[dict[str, Any]]) -> int | None:
    """`tokens.input` (the prompt token count) of the last model response before the line:
    the size the CLI compared with its threshold (`chat.getLastPromptTokenCount()`)."""
    for record in reversed(records):
        tokens = record.get("tokens")
        if record.get("type") == "gemini" and type(tokens) is dict:
            found = integer_of(tokens.get("input"))
            if found is not None:
                return found
    return None


def _replay(label: str, lines: Iterable[Line]) -> tuple[_Replay, Tally]:
    tally = Tally()
    replay = _Replay(label)
    for row, value in parsed(lines, tally):
        if isinstance(value, LineProblem):
            replay.rows.append(value)
        else:
            replay.line(row, value, tally)
    return replay, tally


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    replay, tally = _replay(label, lines)
    return Derived(tuple(replay.rows), tally.frozen())


def history(lines: Iterable[Line]) -> list[Any]:
    """The history the CLI would resume with (the environment context it re-adds in front on
    start is in the file only when its start-up sync wrote it)."""
    return contents(list(_replay("", lines)[0].messages.values()))


SOURCE = Source(
    name=NAME, format=FORMAT, sniff=sniff, derive=derive, role=role, history=history,
    cycle_free=True,  # its own replay of parsed JSON (tests/test_source_collector.py)
    notes=(NO_SYSTEM_NOTE, LEGACY_NOTE))
