"""Chat Completions sessions rewritten as Anthropic Messages wire data (equivalence tests, examples).

`to_anthropic(messages)` gives the Anthropic snapshot and, for each Chat message, its `Place`
in that snapshot, so a finding's message index and a mutant's site can be mapped across. The
rewrite is the obvious one: a leading plain system string → top-level `system` (optional),
calls → `tool_use` blocks after the assistant's text, each run of tool messages → one user
message of `tool_result` blocks. What Anthropic cannot say (a refusal, a `custom` call, a
`tool_call_id` on a user message, arguments that are not compact JSON) raises `NotExpressible`,
and the property tests skip that session.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.formats.anthropic import compact_json


class NotExpressible(Exception):
    """The Chat session says something the Anthropic wire format cannot."""


@dataclass
class Place:
    """Where one Chat message sits in the Anthropic wire data."""

    message: int | None  # None: the top-level system
    block: int | None = None  # a tool result's block in its user message
    calls: list[int] = field(default_factory=list)  # block index of each call


def to_anthropic(messages: list[dict[str, Any]], *, top_system: bool = True) -> tuple[Any, list[Place]]:
    wire: list[dict[str, Any]] = []
    places: list[Place] = []
    system: str | None = None
    rest = messages
    first = messages[0] if messages else {}
    if top_system and set(first) == {"role", "content"} and first["role"] == "system" \
            and isinstance(first["content"], str):
        system, rest = first["content"], messages[1:]
        places.append(Place(None))
    results_open = False  # the last wire message is a user message of results we built
    for message in rest:
        if message.get("role") == "tool":
            block = _result_block(message)
            if not results_open:
                wire.append({"role": "user", "content": []})
                results_open = True
            wire[-1]["content"].append(block)
            places.append(Place(len(wire) - 1, len(wire[-1]["content"]) - 1))
            continue
        results_open = False
        converted, calls = _message(message)
        wire.append(converted)
        places.append(Place(len(wire) - 1, None, calls))
    if system is None:
        return wire, places
    return {"model": "claude-test", "system": system, "messages": wire}, places


def _result_block(message: dict[str, Any]) -> dict[str, Any]:
    extras = {k: v for k, v in message.items() if k not in ("role", "tool_call_id", "content")}
    if set(extras) & {"type", "tool_use_id"}:
        raise NotExpressible("a tool message key a tool_result block uses itself")
    block: dict[str, Any] = {"type": "tool_result", **extras}
    if message.get("tool_call_id") is not None:
        block["tool_use_id"] = message["tool_call_id"]
    block["content"] = message.get("content")
    return block


def _message(message: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
    for key in ("tool_call_id", "refusal", "function_call"):
        if message.get(key) is not None:
            raise NotExpressible(key)
    calls = message.get("tool_calls") or []
    converted = {k: v for k, v in message.items() if k not in ("tool_calls", "refusal", "function_call")}
    if not calls:
        return converted, []
    if message.get("role") != "assistant":
        raise NotExpressible("calls on a non-assistant message")
    content = message.get("content")
    blocks: list[Any] = ([] if content is None else
                         [{"type": "text", "text": content}] if isinstance(content, str) else list(content))
    positions = []
    for call in calls:
        positions.append(len(blocks))
        blocks.append(_tool_use(call))
    converted["content"] = blocks
    return converted, positions


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    if call.get("type") != "function" or set(call) - {"id", "type", "function"} \
            or set(function) - {"name", "arguments"}:
        raise NotExpressible("a call Anthropic cannot spell")
    block = {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", "")}
    text = function.get("arguments", "")
    if text == "":
        return block  # no `input`: empty arguments text
    try:
        value = json.loads(text)
    except ValueError:
        raise NotExpressible("arguments that are not JSON") from None
    if compact_json(value) != text:
        raise NotExpressible("arguments not in compact JSON")
    return {**block, "input": value}


def index_map(places: list[Place]) -> list[int | None]:
    """Chat message index → the wire message index a finding on it reports."""
    return [place.message for place in places]


_SITE = re.compile(r"after\[(\d+)\](?:\.tool_calls\[(\d+)\](?:\.arguments(.*))?)?")
_SPAN = re.compile(r"after\[(\d+):(\d+)\]")


def expected_site(site: str, places: list[Place]) -> str:
    """The anthropic spelling of an openai mutant site (`pin:system@after[0]`, `a->b` too)."""
    if "->" in site:
        return "->".join(expected_site(part, places) for part in site.split("->"))
    label, at, rest = site.rpartition("@")
    if at:
        return f"{label}@{expected_site(rest, places)}"
    span = _SPAN.fullmatch(site)
    if span:
        first, last = places[int(span[1])], places[int(span[2]) - 1]
        if first == last:
            return _point(first)
        if _whole(first) and _whole(last):
            return f"after[{first.message}:{last.message + 1 if last.message is not None else 0}]"
        return f"{_point(first)}..{_point(last)}"
    point = _SITE.fullmatch(site)
    if not point:
        return site
    place = places[int(point[1])]
    if point[2] is None:
        return _point(place)
    where = f"after[{place.message}].content[{place.calls[int(point[2])]}]"
    return where if point[3] is None else f"{where}.input{point[3]}"


def _whole(place: Place) -> bool:
    return place.message is not None and place.block is None


def _point(place: Place) -> str:
    if place.message is None:
        return "after.system"
    where = f"after[{place.message}]"
    return where if place.block is None else f"{where}.content[{place.block}]"
