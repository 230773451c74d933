"""A Chat Completions compaction (before, after) written as an agent's own session file.

`as_codex`, `as_claude_code` and `as_gemini_cli` write the pair the way each agent logs a
session with one compaction in it, traps included (lines that are no message, unknown line
types, items never sent, split assistant turns, one tool result per line, upserts, slash
commands), and return the file's lines with the wire before and after its source must derive
(None when the agent cannot say the pair: a role it has no entry for, a shape its wire format
cannot hold). What an agent never writes is settled first and said in the returned pair:
Codex records no `system` message (they are written as `developer`), Claude Code and Gemini CLI
write no instructions at all (dropped). The property tests derive the pairs back; the example
agent logs (`examples/agent-logs/`) are written by the same functions.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from sessiongen.anthropic_wire import NotExpressible as AnthropicNotExpressible
from sessiongen.anthropic_wire import to_anthropic
from sessiongen.gemini_wire import NotExpressible as GeminiNotExpressible
from sessiongen.gemini_wire import to_gemini
from sessiongen.responses_items import representable, to_items

Message = dict[str, Any]
INSTRUCTION_ROLES = ("system", "developer")


@dataclass(frozen=True)
class Written:
    """An agent's session file holding one compaction, and the pair it holds."""

    lines: list[str]
    before: list[Any]
    after: list[Any]
    format: str
    marker_row: int
    session_id: str


def _json(line: Message) -> str:
    """A line as the agents write one: compact JSON (serde_json, `JSON.stringify`)."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _clock(start: str) -> Any:
    minute = 0

    def tick() -> str:
        nonlocal minute
        minute += 1
        return f"{start}T{10 + minute // 3600:02d}:{minute // 60 % 60:02d}:{minute % 60:02d}.000Z"

    return tick


# --------------------------------------------------------------------------- Codex CLI


def as_codex(before: list[Message], after: list[Message], session_id: str = "0199-codex",
             *, remote: bool = False, summary: str = "summary") -> Written | None:
    """A rollout: session meta and turn context, the before's items as `response_item` lines
    among token counts, ghost snapshots and an unknown line type, then the `compacted` line
    whose `replacement_history` is the after (with a ghost snapshot Codex never sends)."""
    shaped = [representable(_developer(messages)) for messages in (before, after)]
    if shaped[0] is None or shaped[1] is None:
        return None
    items_before = _codex_parts(to_items(shaped[0]).items)
    items_after = _codex_parts(to_items(shaped[1]).items)
    if remote:
        items_after = [*items_after, {"type": "compaction", "encrypted_content": "gAAAA-opaque"}]
    tick = _clock("2026-08-01")
    lines = [{"timestamp": tick(), "type": "session_meta",
              "payload": {"id": session_id, "timestamp": tick(), "cwd": "/repo",
                          "originator": "codex_cli_rs", "cli_version": "0.128.0",
                          "base_instructions": {"text": "You are Codex."}}},
             {"timestamp": tick(), "type": "turn_context",
              "payload": {"turn_id": "t1", "cwd": "/repo", "model": "gpt-5-codex"}}]
    ghost = {"type": "ghost_snapshot", "ghost_commit": {"id": "g1", "parent": None}}
    for position, item in enumerate(items_before):
        lines.append({"timestamp": tick(), "type": "response_item", "payload": item})
        if position % 3 == 1:
            lines.append({"timestamp": tick(), "type": "event_msg", "payload": {
                "type": "token_count", "info": {"last_token_usage": {
                    "input_tokens": 1000 + position, "output_tokens": 10,
                    "total_tokens": 1010 + position}}}})
        if position % 4 == 2:
            lines.append({"timestamp": tick(), "type": "response_item", "payload": ghost})
        if position % 5 == 3:
            lines.append({"timestamp": tick(), "type": "world_state", "payload": {"n": position}})
    lines.append({"timestamp": tick(), "type": "compacted", "payload": {
        "message": "" if remote else summary, "replacement_history": [*items_after, ghost]}})
    marker = len(lines)
    lines.append({"timestamp": tick(), "type": "event_msg", "payload": {"type": "context_compacted"}})
    return Written([_json(line) for line in lines], items_before, items_after,
                   "openai-responses", marker, session_id)


def _codex_parts(items: list[Message]) -> list[Message]:
    """Codex writes a message's text as content parts (`input_text`, `output_text`)."""
    for item in items:
        if item.get("type") == "message" and isinstance(item.get("content"), str):
            kind = "output_text" if item.get("role") == "assistant" else "input_text"
            item["content"] = [{"type": kind, "text": item["content"]}]
    return items


def _developer(messages: list[Message]) -> list[Message]:
    """Codex never records `system` messages; instructions are `developer` messages there."""
    out = copy.deepcopy(messages)
    for message in out:
        if message.get("role") == "system":
            message["role"] = "developer"
    return out


# --------------------------------------------------------------------------- Claude Code


def _conversation(messages: list[Message]) -> list[Message]:
    return [copy.deepcopy(m) for m in messages if m.get("role") not in INSTRUCTION_ROLES]


def as_claude_code(before: list[Message], after: list[Message],
                   session_id: str = "11111111-2222-4333-8444-555555555555",
                   *, trigger: str = "auto") -> Written | None:
    """A transcript: a title line, then the before's messages as chained entries (an assistant
    message split one block per line under one `message.id`, one `tool_result` per line,
    progress entries and file-history snapshots on the chain), a `compact_boundary`, the
    after's first message as the `isCompactSummary` entry and the rest as preserved entries."""
    try:
        wire_before = _plain(to_anthropic(_conversation(before), top_system=False)[0])
        wire_after = _plain(to_anthropic(_conversation(after), top_system=False)[0])
    except AnthropicNotExpressible:
        return None
    if (not wire_before or not wire_after or wire_after[0]["role"] != "user"
            or _results(wire_after[0]["content"])
            or any(m["role"] not in ("user", "assistant") for m in (*wire_before, *wire_after))):
        return None
    writer = _Claude(session_id)
    lines: list[Message] = [{"type": "summary", "summary": "A session", "leafUuid": "x"}]
    leaf = writer.write(lines, wire_before, None, trap=True)
    boundary = writer.uuid()
    lines.append(writer.entry("system", None, boundary, subtype="compact_boundary",
                              logicalParentUuid=leaf, content="Conversation compacted",
                              compactMetadata={"trigger": trigger, "preTokens": 9000}))
    marker = len(lines)
    summary = writer.uuid()
    lines.append(writer.entry("user", boundary, summary, isCompactSummary=True,
                              message={"role": "user", "content": wire_after[0]["content"]}))
    start = len(lines)
    writer.write(lines, wire_after[1:], summary, trap=False)
    preserved = [line["uuid"] for line in lines[start:]]
    lines[marker - 1]["compactMetadata"]["preservedMessages"] = {
        "anchorUuid": summary, "uuids": preserved}
    return Written([_json(line) for line in lines], wire_before, wire_after, "anthropic",
                   marker, session_id)


def _plain(messages: Any) -> list[Message]:
    """Claude Code's entries hold a message's role and content only."""
    return [{"role": m.get("role"), "content": m.get("content")} for m in messages]


def _results(content: Any) -> bool:
    return (isinstance(content, list) and bool(content)
            and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


class _Claude:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.count = 0
        self.tick = _clock("2026-08-18")

    def uuid(self) -> str:
        self.count += 1
        return f"00000000-0000-4000-8000-{self.count:012d}"

    def entry(self, kind: str, parent: str | None, uuid: str, **fields: Any) -> Message:
        return {"parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": "/repo", "sessionId": self.session_id, "version": "2.1.89",
                "gitBranch": "main", "type": kind, "uuid": uuid, "timestamp": self.tick(), **fields}

    def write(self, lines: list[Message], messages: list[Message], parent: str | None,
              trap: bool) -> str | None:
        """Append `messages` as chained entries after `parent`; the last entry's uuid."""
        for index, message in enumerate(messages):
            content = message["content"]
            if message["role"] == "assistant":
                pieces = [[block] for block in content] if isinstance(content, list) and content \
                    else [content]
                message_id = f"msg_{self.count:04d}"
                for piece in pieces:
                    uuid = self.uuid()
                    lines.append(self.entry("assistant", parent, uuid, requestId="req_1", message={
                        "id": message_id, "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5", "content": piece}))
                    parent = uuid
            elif _results(content):
                for block in content:
                    uuid = self.uuid()
                    lines.append(self.entry("user", parent, uuid, toolUseResult={"ok": True},
                                            message={"role": "user", "content": [block]}))
                    parent = uuid
            else:
                uuid = self.uuid()
                lines.append(self.entry("user", parent, uuid,
                                        message={"role": "user", "content": content}))
                parent = uuid
            if trap and index % 3 == 1:
                uuid = self.uuid()
                lines.append(self.entry("progress", parent, uuid, data={"type": "hook_progress"}))
                parent = uuid
            if trap and index % 4 == 2:
                lines.append({"type": "file-history-snapshot", "messageId": parent,
                              "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})
        return parent


# --------------------------------------------------------------------------- Gemini CLI

ENVIRONMENT = ("This is the Gemini CLI. We are setting up the context for our chat.\n"
               "Today's date is Saturday, August 1, 2026.")
SNAPSHOT = "<state_snapshot>\n  <overall_goal>Carry on.</overall_goal>\n</state_snapshot>"
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"


def as_gemini_cli(before: list[Message], after: list[Message],
                  session_id: str = "b1f00000-1111-4222-8333-444444444444",
                  *, snapshot: str = SNAPSHOT) -> Written | None:
    """A session file: metadata, the start-up `$set.messages` of the environment context, the
    before's Contents as message records (model turns with their `toolCalls`, tool responses as
    the user records that follow, an upsert, an `info` record and a slash command the CLI never
    sends), then the compression's `$set.messages`: environment, state snapshot,
    acknowledgement and the after's Contents."""
    try:
        contents_before = _bare(to_gemini(_conversation(before))[0])
        contents_after = _bare(to_gemini(_conversation(after))[0])
    except GeminiNotExpressible:
        return None
    if not all(map(_sendable, (*contents_before, *contents_after))):
        return None
    tick = _clock("2026-08-01")
    environment = {"id": "env", "timestamp": tick(), "type": "user",
                   "content": [{"text": ENVIRONMENT}]}
    lines: list[Message] = [
        {"sessionId": session_id, "projectHash": "9ac0ffee", "startTime": tick(),
         "lastUpdated": tick(), "kind": "main"},
        {"$set": {"messages": [environment], "lastUpdated": tick()}},
    ]
    records = _records(contents_before, "b", tick)
    for position, record in enumerate(records):
        if position % 3 == 0 and record["type"] == "gemini":
            lines.append({**record, "content": [], "toolCalls": []})  # upserted below
        lines.append(record)
        if position % 4 == 1:
            lines.append({"id": f"i{position}", "timestamp": tick(), "type": "info",
                          "content": "Working..."})
        if position % 5 == 2:
            lines.append({"id": f"c{position}", "timestamp": tick(), "type": "user",
                          "content": "/stats"})
    snapshot_records = [
        {"id": "snap", "timestamp": tick(), "type": "user", "content": [{"text": snapshot}]},
        {"id": "ack", "timestamp": tick(), "type": "gemini", "content": [{"text": ACKNOWLEDGEMENT}]}]
    lines.append({"$set": {"messages": [environment, *snapshot_records,
                                        *_records(contents_after, "a", tick)],
                           "lastUpdated": tick()}})
    marker = len(lines)
    env = {"role": "user", "parts": [{"text": ENVIRONMENT}]}
    after_contents = [env, {"role": "user", "parts": [{"text": snapshot}]},
                      {"role": "model", "parts": [{"text": ACKNOWLEDGEMENT}]}, *contents_after]
    return Written([_json(line) for line in lines], [env, *contents_before], after_contents,
                   "gemini", marker, session_id)


def _bare(contents: list[Message]) -> list[Message]:
    """Gemini CLI's records hold a Content's role and parts only."""
    return [{"role": content.get("role"), "parts": content.get("parts")} for content in contents]


def _sendable(content: Message) -> bool:
    """Whether the CLI sends a record of this Content back (not a slash command, not empty)."""
    parts = content.get("parts") or []
    if content.get("role") not in ("user", "model") or not parts:
        return False
    if content["role"] == "model":
        return True
    text = "".join(part["text"] if "text" in part else
                   "[part]" if set(part) & _PLACEHOLDER_PARTS else "" for part in parts).strip()
    return bool(text) and not text.startswith(("/", "?", "<session_context>", "<hook_context>"))


_PLACEHOLDER_PARTS = {"functionCall", "functionResponse", "inlineData", "fileData", "executableCode",
                      "codeExecutionResult", "videoMetadata", "thought"}
"""Parts Gemini CLI spells as a placeholder when it reads a record's text (`partToString`)."""


def _records(contents: list[Message], prefix: str, tick: Any) -> list[Message]:
    records: list[Message] = []
    for index, content in enumerate(contents):
        record: Message = {"id": f"{prefix}{index}", "timestamp": tick(),
                           "type": "gemini" if content["role"] == "model" else "user",
                           "content": content["parts"]}
        if content["role"] == "model":
            following = contents[index + 1]["parts"] if index + 1 < len(contents) else []
            answered = {part["functionResponse"].get("id"): part for part in following
                        if "functionResponse" in part}
            calls = [part["functionCall"] for part in content["parts"] if "functionCall" in part]
            record["toolCalls"] = [
                {"id": call.get("id"), "name": call.get("name"), "args": call.get("args", {}),
                 "status": "success", "timestamp": record["timestamp"],
                 **({"result": [answered[call.get("id")]]} if call.get("id") in answered else {})}
                for call in calls]
        records.append(record)
    return records
