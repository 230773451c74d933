"""Chat Completions sessions rewritten as serialized LangChain messages (format equivalence tests).

`to_langchain(messages)` gives the messages as `langchain_core.load.dumpd` writes them
(`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`), one per Chat
message, so findings keep their message index and a mutant's site only gains the `.kwargs`
step (`after[2].kwargs.tool_calls[0].args.path`). The rewrite is the obvious one: `system` →
`SystemMessage` (`developer` with `additional_kwargs.__openai_role__`), `user` →
`HumanMessage`, `assistant` → `AIMessage` (calls as `tool_calls {name, args, id}`, `args`
parsed from the arguments text, a refusal in `additional_kwargs`), `tool` → `ToolMessage`, any
other role a `ChatMessage`. What LangChain cannot say (a missing or empty role, a
`tool_call_id` on a message that is no tool result, a tool result without text or id, arguments
that are not a JSON object, a call type other than `function` or a call with other keys, an
empty `name` or refusal, blocks LangChain converts into something else) raises
`NotExpressible`.

LangChain's reading settles some details (`formats.langchain`): no content reads as `""`, text
blocks alone as their texts joined by newlines, a text block as `{type, text}` only, arguments
as `json.dumps(args, ensure_ascii=False)`, message keys LangChain has no field for are not
sent. `twin(messages)` is the session with exactly those details settled.
"""

from __future__ import annotations

import json
import re
from typing import Any

Message = dict[str, Any]
_PASSED = frozenset({"input_audio", "thinking", "reasoning", "input_text", "output_text"})
"""Block types LangChain passes through as written (besides `text` and `image_url`)."""
_CONVERTED_KEYS = frozenset({"json", "guard_content", "image"})


class NotExpressible(Exception):
    """The Chat session says something LangChain messages cannot."""


def _class(role: Any) -> tuple[str, str | None]:
    if role == "system":
        return "SystemMessage", None
    if role == "developer":
        return "SystemMessage", "developer"
    if role == "user":
        return "HumanMessage", None
    if role == "assistant":
        return "AIMessage", None
    if role == "tool":
        return "ToolMessage", None
    if not isinstance(role, str) or not role or role == "function":
        raise NotExpressible("a missing, empty or function role")
    return "ChatMessage", role


def _serialized(name: str, kwargs: Message) -> Message:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", name],
            "kwargs": kwargs}


def to_langchain(messages: list[Message]) -> list[Message]:
    return [_message(message) for message in messages]


def _message(message: Message) -> Message:
    role = message.get("role")
    name, special = _class(role)
    kwargs: Message = {"content": _content(message.get("content"))}
    extra: Message = {}
    if special == "developer":
        extra["__openai_role__"] = "developer"
    elif name == "ChatMessage":
        kwargs["role"] = special
    if message.get("name") is not None:
        if not isinstance(message["name"], str) or not message["name"]:
            raise NotExpressible("an empty name")
        kwargs["name"] = message["name"]
    refusal = message.get("refusal")
    if refusal is not None:
        if name != "AIMessage" or not isinstance(refusal, str) or not refusal:
            raise NotExpressible("a refusal LangChain would not send")
        extra["refusal"] = refusal
    if extra:
        kwargs["additional_kwargs"] = extra
    call_id = message.get("tool_call_id")
    if name == "ToolMessage":
        if not isinstance(call_id, str) or message.get("content") is None:
            raise NotExpressible("a tool result without id or content")
        kwargs["tool_call_id"] = call_id
    elif call_id is not None:
        raise NotExpressible("a tool_call_id on a message that is no tool result")
    calls = message.get("tool_calls")
    if calls:
        if name != "AIMessage":
            raise NotExpressible("calls on a message that is not the assistant's")
        kwargs["tool_calls"] = [_call(call) for call in calls]
    return _serialized(name, kwargs)


def _call(call: Any) -> Message:
    if not isinstance(call, dict) or call.get("type") != "function" \
            or set(call) - {"id", "type", "function"} or not isinstance(call.get("id"), str):
        raise NotExpressible("a call LangChain cannot spell")
    function = call.get("function")
    if not isinstance(function, dict) or set(function) - {"name", "arguments"} \
            or not isinstance(function.get("name"), str):
        raise NotExpressible("a call LangChain cannot spell")
    try:
        args = json.loads(function.get("arguments", ""))
    except ValueError:
        raise NotExpressible("arguments that are not JSON") from None
    if not isinstance(args, dict):
        raise NotExpressible("arguments that are not a JSON object")
    return {"name": function["name"], "args": args, "id": call["id"], "type": "tool_call"}


def _content(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise NotExpressible("content that is neither text nor blocks")
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise NotExpressible("a block without a type")
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise NotExpressible("a text block without text")
        elif kind == "image_url":
            if "image_url" not in block:
                raise NotExpressible("an image_url block without image_url")
        elif kind not in _PASSED or block.keys() & _CONVERTED_KEYS:
            raise NotExpressible("a block LangChain converts")
    return json.loads(json.dumps(content))


def twin(messages: list[Message]) -> list[Message]:
    """The session as the langchain reading sees it (see the module docstring)."""
    return [_twin(message) for message in messages]


def _twin(message: Message) -> Message:
    role = message["role"]
    out: Message = {"role": role}
    if message.get("name"):
        out["name"] = message["name"]
    if message.get("tool_calls"):
        out["tool_calls"] = [{"type": "function", "id": call["id"], "function": {
            "name": call["function"]["name"],
            "arguments": json.dumps(json.loads(call["function"].get("arguments", "")),
                                    ensure_ascii=False)}} for call in message["tool_calls"]]
    if message.get("refusal"):
        out["refusal"] = message["refusal"]
    if role == "tool":
        out["tool_call_id"] = message["tool_call_id"]
    out["content"] = _twin_content(message.get("content"))
    return out


def _twin_content(content: Any) -> Any:
    if not content:
        return ""
    if isinstance(content, str):
        return content
    blocks = []
    for block in content:
        if block["type"] == "text":
            blocks.append({"type": "text", "text": block["text"]})
        elif block["type"] == "image_url":
            blocks.append({"type": "image_url", "image_url": block["image_url"]})
        else:
            blocks.append(json.loads(json.dumps(block)))
    if all(block["type"] == "text" for block in blocks):
        return "\n".join(block["text"] for block in blocks)
    return blocks


_SITE = re.compile(r"after\[(\d+)\]\.tool_calls\[(\d+)\](?:\.arguments(.*))?")


def expected_site(site: str) -> str:
    """The langchain spelling of an openai mutant site (`a->b` and `label@site` too)."""
    if "->" in site:
        return "->".join(expected_site(part) for part in site.split("->"))
    label, at, rest = site.rpartition("@")
    if at:
        return f"{label}@{expected_site(rest)}"
    point = _SITE.fullmatch(site)
    if not point:
        return site
    where = f"after[{point[1]}].kwargs.tool_calls[{point[2]}]"
    return where if point[3] is None else f"{where}.args{point[3]}"
