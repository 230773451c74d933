"""Chat Completions sessions rewritten as Gemini `Content[]` (format equivalence tests, agent logs).

`to_gemini(messages)` gives the Contents and, for each Chat message, its `Place` in them, so a
finding's message index and a mutant's site can be mapped across. The rewrite is the obvious
one: `assistant` → role `model`, content → `text` parts (a string as one part), calls →
`functionCall` parts after the text (`args` parsed from the arguments text), each run of tool
messages → one `user` Content of `functionResponse` parts (`response: {"output": text}`, the
name of the call it answers), any other role as written. What Gemini cannot say (a refusal, a
`tool_call_id` on a message that is no tool result, arguments that are not a compact JSON
object, a call type other than `function`, tool results that are not text, blocks with keys a
part cannot hold) raises `NotExpressible`.

Some Chat details read back settled, as the format documents: a tool message gains the `name`
of its call, a list of one plain text block reads as its string, an empty content list as no
content, `input_text` / `output_text` blocks as `text` blocks. `twin(messages)` is the session
with exactly those details settled: the conversation both formats must judge alike.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.formats.anthropic import compact_json

Message = dict[str, Any]
_TEXT_TYPES = ("text", "input_text", "output_text")
_MODELLED = ("role", "content", "tool_calls", "tool_call_id", "refusal")


class NotExpressible(Exception):
    """The Chat session says something Gemini Contents cannot."""


@dataclass
class Place:
    """Where one Chat message sits in the Contents."""

    message: int
    block: int | None = None  # a tool result's part in its user Content
    calls: list[int] = field(default_factory=list)  # part index of each call


def to_gemini(messages: list[Message]) -> tuple[list[Message], list[Place]]:
    contents: list[Message] = []
    places: list[Place] = []
    names = _call_names(messages)
    results_open = False
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            part = _response_part(message, names[index])
            if not results_open:
                contents.append({"role": "user", "parts": []})
                results_open = True
            contents[-1]["parts"].append(part)
            places.append(Place(len(contents) - 1, len(contents[-1]["parts"]) - 1))
            continue
        results_open = False
        content, calls = _content(message)
        contents.append(content)
        places.append(Place(len(contents) - 1, None, calls))
    return contents, places


def _call_names(messages: list[Message]) -> list[str]:
    """For each message, the name of the latest earlier call with its `tool_call_id` ("" for a
    tool message answering none)."""
    seen: dict[str, str] = {}
    names: list[str] = []
    for message in messages:
        names.append(seen.get(message.get("tool_call_id") or "", "")
                     if message.get("role") == "tool" else "")
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                seen[call["id"]] = (call.get("function") or {}).get("name", "")
    return names


def _response_part(message: Message, name: str) -> Message:
    extras = {k: v for k, v in message.items() if k not in ("role", "tool_call_id", "content")}
    if "functionResponse" in extras or "name" in extras:
        raise NotExpressible("a tool message key a functionResponse part uses itself")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise NotExpressible("a tool result that is not text")
    response: dict[str, Any] = {}
    if message.get("tool_call_id") is not None:
        response["id"] = message["tool_call_id"]
    response["name"] = name
    response["response"] = None if content is None else {"output": content}
    return {"functionResponse": response, **extras}


def _content(message: Message) -> tuple[Message, list[int]]:
    for key in ("tool_call_id", "refusal"):
        if message.get(key) is not None:
            raise NotExpressible(key)
    role = message.get("role")
    if role == "model":
        raise NotExpressible("the role 'model' (Gemini's assistant)")
    converted: Message = {k: v for k, v in message.items() if k not in _MODELLED}
    if "parts" in converted:
        raise NotExpressible("a message key named parts")
    if "role" in message:
        converted["role"] = "model" if role == "assistant" else role
    parts = _parts(message.get("content"))
    positions = []
    for call in message.get("tool_calls") or []:
        positions.append(len(parts))
        parts.append(_call_part(call))
    converted["parts"] = parts
    return converted, positions


def _parts(content: Any) -> list[Message]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    parts = []
    for block in content:
        kind = block.get("type")
        if kind in _TEXT_TYPES and isinstance(block.get("text"), str):
            rest = {k: v for k, v in block.items() if k not in ("type", "text")}
            if rest.keys() & {"thought", "functionCall", "functionResponse"}:
                raise NotExpressible("a text block with keys a part reads itself")
            parts.append({"text": block["text"], **rest})
        elif isinstance(kind, str) and block.keys() == {"type", kind} \
                and kind not in ("functionCall", "functionResponse", "text", "thought"):
            parts.append({kind: block[kind]})
        else:
            raise NotExpressible("a content block Gemini parts cannot hold")
    return parts


def _call_part(call: Any) -> Message:
    if not isinstance(call, dict):
        raise NotExpressible("a call that is not an object")
    function = call.get("function") or {}
    if call.get("type") != "function" or set(call) - {"id", "type", "function"} \
            or set(function) - {"name", "arguments"} or not isinstance(call.get("id"), str):
        raise NotExpressible("a call Gemini cannot spell")
    part: Message = {"id": call["id"], "name": function.get("name", "")}
    text = function.get("arguments", "")
    if text != "":
        try:
            value = json.loads(text)
        except ValueError:
            raise NotExpressible("arguments that are not JSON") from None
        if not isinstance(value, dict) or compact_json(value) != text:
            raise NotExpressible("arguments that are not a compact JSON object")
        part["args"] = value
    return {"functionCall": part}


def twin(messages: list[Message]) -> list[Message]:
    """The session as the gemini reading sees it (see the module docstring)."""
    names = _call_names(messages)
    return [_twin(message, name) for message, name in zip(messages, names, strict=True)]


def _twin(message: Message, name: str) -> Message:
    twin = copy.deepcopy(message)
    content = message.get("content")
    if message.get("role") == "tool":
        return {**twin, "name": name}
    if content == []:
        twin["content"] = None
    elif isinstance(content, list):
        blocks = [{**block, "type": "text"} if block.get("type") in _TEXT_TYPES else block
                  for block in copy.deepcopy(content)]
        one = blocks[0] if len(blocks) == 1 else None
        twin["content"] = (one["text"] if one is not None and one.keys() == {"type", "text"}
                           and one["type"] == "text" else blocks)
    if "tool_calls" in twin and not twin["tool_calls"]:
        del twin["tool_calls"]
    return twin


def index_map(places: list[Place]) -> list[int]:
    """Chat message index → the Content index a finding on it reports."""
    return [place.message for place in places]


_SITE = re.compile(r"after\[(\d+)\](?:\.tool_calls\[(\d+)\](?:\.arguments(.*))?)?")
_SPAN = re.compile(r"after\[(\d+):(\d+)\]")


def expected_site(site: str, places: list[Place]) -> str:
    """The gemini spelling of an openai mutant site (`pin:system@after[0]`, `a->b` too)."""
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
        if first.message == last.message and first.block is not None and last.block is not None:
            return f"after[{first.message}].parts[{first.block}:{last.block + 1}]"
        return f"after[{first.message}:{last.message + 1}]"
    point = _SITE.fullmatch(site)
    if not point:
        return site
    place = places[int(point[1])]
    if point[2] is None:
        return _point(place)
    where = f"after[{place.message}].parts[{place.calls[int(point[2])]}]"
    return where if point[3] is None else f"{where}.functionCall.args{point[3]}"


def _point(place: Place) -> str:
    where = f"after[{place.message}]"
    return where if place.block is None else f"{where}.parts[{place.block}]"
