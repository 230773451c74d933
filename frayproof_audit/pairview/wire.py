"""A snapshot as its user logged it: wire messages in order, each with the parts its neutral
reading holds (texts, tool calls, tool results, other blocks), labelled in the user's own
coordinates (`after[4]`, `after[4].tool_calls[1]`, `after[2].content[0]`, `after.system`).

Findings name wire messages (`message_index` is the user's index), so the view is built on
them, not on the neutral model: an Anthropic user message holding two `tool_result` blocks is
one message with two result parts, a Responses turn of several items is those items. What the
format reads outside its message list (a request's top-level `system`, `instructions`) comes
first, as the *frame*. Every format is read through its registered record: the message list of
a request object is at its `messages_key`, a snapshot given as a JSON string is parsed by its
text evidence, and parts are labelled by `Loaded.site`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from frayproof_audit.formats.base import evidence_of
from frayproof_audit.jsonio import canonical, compact
from frayproof_audit.loaded import Loaded, Origin
from frayproof_audit.model import TEXT_BLOCK_TYPES

PartKind = Literal["text", "call", "result", "block", "refusal", "empty"]


@dataclass(frozen=True, slots=True)
class Part:
    """One thing a wire message holds: a text, a tool call (`name`, its arguments as `text`), a
    tool result (`call_id`, its content as `text`), another block (`name` its type, `text` its
    JSON), a refusal, or nothing at all (`empty`)."""

    kind: PartKind
    text: str
    site: str
    call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class WireMessage:
    """One wire message (or frame entry) of a snapshot."""

    snapshot: str
    position: int
    """Its place in the view's list of this snapshot: frame entries first, then the messages."""
    index: int | None
    """The wire message index; None for a frame entry (it has no index in the message list)."""
    label: str
    role: str
    parts: tuple[Part, ...]
    key: bytes
    """Canonical JSON of the wire value: equal keys are the same message."""
    size: int
    """Bytes of the wire value as compact JSON."""
    value: Any
    """The wire value itself (a message, an item, a frame field's value)."""

    @property
    def call_ids(self) -> frozenset[str]:
        return frozenset(part.call_id for part in self.parts if part.call_id is not None)

    @property
    def text_only(self) -> bool:
        """It holds text and no call, result or other block."""
        return bool(self.parts) and all(part.kind == "text" for part in self.parts)


def message_list(loaded: Loaded, raw: Any) -> list[Any]:
    """The wire message list of a snapshot as logged: the list itself, the list a request object
    keeps at its format's `messages_key`, or the list a JSON-string snapshot parses into."""
    rules = evidence_of(loaded.format)
    if isinstance(raw, str) and rules is not None and rules.text is not None:
        raw = rules.text.parse(raw)
    if isinstance(raw, dict):
        key = rules.messages_key if rules is not None else None
        found = raw.get(key) if key is not None else None
        return found if isinstance(found, list) else []
    return raw if isinstance(raw, list) else []


def read_messages(snapshot: str, loaded: Loaded, raw: Any) -> list[WireMessage]:
    """The snapshot's frame entries, then its wire messages, each with its parts."""
    wire = message_list(loaded, raw)
    frame: dict[str, list[Part]] = {}
    frame_values: dict[str, tuple[str, Any]] = {}
    per_message: dict[int, list[Part]] = {}
    roles: dict[int, str] = {}
    for index in range(len(loaded)):
        origin = loaded.origin(index)
        parts = _parts(snapshot, loaded, index)
        start, stop = _span(origin)
        if stop - start > 1:  # several items, one neutral message: each item shows itself
            others = {json_text(wire[k]) for k in range(start, min(stop, len(wire))) if k != origin.message}
            parts = [part for part in parts if part.kind != "block" or part.text not in others]
        if origin.field is not None:
            label = loaded.site(snapshot, index)
            frame.setdefault(label, []).extend(parts)
            frame_values.setdefault(label, (loaded.views[index].role, loaded.wire[index].get("content")))
            continue
        for message, held in _placed(snapshot, origin, parts, start, stop):
            per_message.setdefault(message, []).extend(held)
            roles.setdefault(message, loaded.views[index].role)
    out: list[WireMessage] = []
    for label, parts in frame.items():
        role, value = frame_values[label]
        out.append(WireMessage(snapshot, len(out), None, label, role, tuple(parts), canonical(
            [label.split(".", 1)[1], value]), len(compact(value)), value))
    for index, value in enumerate(wire):
        parts = per_message.get(index) or [_other(snapshot, index, value)]
        key = canonical(value)  # as long as the compact JSON: only the key order differs
        out.append(WireMessage(snapshot, len(out), index, f"{snapshot}[{index}]",
                               _role(value, roles.get(index)), tuple(parts), key, len(key), value))
    return out


def _placed(snapshot: str, origin: Origin, parts: list[Part], start: int,
            stop: int) -> list[tuple[int, list[Part]]]:
    """The parts of a neutral message, each with the wire message it is drawn in. One wire
    message holds them all, except for a neutral message read from several items (a Responses
    turn): each call is in the item its site names, and the texts are in the turn's own message
    item, the last item before its first call (the one findings point at when it has no call)."""
    if stop - start <= 1:
        return [(origin.message, parts)]
    held: dict[int, list[Part]] = {}
    rest: list[Part] = []
    for part in parts:
        named = _ITEM.fullmatch(part.site) if part.kind == "call" else None
        if named is not None and named.group(1) == snapshot and start <= int(named.group(2)) < stop:
            held.setdefault(int(named.group(2)), []).append(part)
        else:
            rest.append(part)
    if rest:
        calls = min(held, default=None)
        home = origin.message if calls is None else max(calls - 1, start)
        held.setdefault(home, [])[:0] = rest
    return sorted(held.items())


_ITEM = re.compile(r"(\w+)\[(\d+)\]")


def _span(origin: Origin) -> tuple[int, int]:
    """The wire messages [start, stop) a neutral message is read from (a Responses turn's items
    are several; every other origin is one)."""
    start, stop = getattr(origin, "start", None), getattr(origin, "stop", None)
    if isinstance(start, int) and isinstance(stop, int):
        return start, stop
    return origin.message, origin.message + 1


def _role(value: Any, neutral: str | None) -> str:
    """The role the user's data gives the message (`model` in Gemini, an item's `type` in the
    Responses API), else the neutral reading's."""
    if isinstance(value, dict):
        for key in ("role", "type"):
            found = value.get(key)
            if isinstance(found, str) and found:
                return found
    return neutral or "?"


def _other(snapshot: str, index: int, value: Any) -> Part:
    """A wire message the neutral reading takes no message from (a reasoning item of a turn)."""
    kind = value.get("type") if isinstance(value, dict) else None
    return Part("block", json_text(value), f"{snapshot}[{index}]",
                name=kind if isinstance(kind, str) else None)


def json_text(value: Any) -> str:
    return compact(value).decode("utf-8", "replace")


def _parts(snapshot: str, loaded: Loaded, index: int) -> list[Part]:
    view = loaded.views[index]
    message = loaded.wire[index]
    site = loaded.site(snapshot, index)
    if view.role == "tool":
        return [Part("result", _content_text(view.content), site, call_id=view.tool_call_id)]
    parts = list(_content_parts(view.content, site))
    if view.refusal:
        parts.append(Part("refusal", view.refusal, site))
    calls = message.get("tool_calls") or ()
    for position, call in enumerate(view.calls):
        wire_call = calls[position] if position < len(calls) else {}
        function = wire_call.get("function") if isinstance(wire_call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        text = arguments if isinstance(arguments, str) else json_text(arguments)
        parts.append(Part("call", text, loaded.site(snapshot, index, call=position), call_id=call.id,
                          name=call.name))
    return parts or [Part("empty", "", site)]


def _content_parts(content: Any, site: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", content, site)] if content else []
    if not isinstance(content, list):
        return [Part("block", json_text(content), site)]
    parts = []
    for block in content:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(block, dict) and block.get("type") in TEXT_BLOCK_TYPES and isinstance(text, str):
            parts.append(Part("text", block["text"], site))
        elif isinstance(block, str):
            parts.append(Part("text", block, site))
        else:
            kind = block.get("type") if isinstance(block, dict) else None
            parts.append(Part("block", json_text(block), site, name=kind if isinstance(kind, str) else None))
    return parts


def _content_text(content: Any) -> str:
    """A tool result's content as one text: the string, its text blocks joined, other blocks as
    JSON."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        pieces = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                pieces.append(block["text"])
            elif isinstance(block, str):
                pieces.append(block)
            else:
                pieces.append(json_text(block))
        return "\n".join(pieces)
    return json_text(content)
