"""Chat Completions message shapes, the building blocks every generator assembles.

No randomness here: each function returns one wire dict in a fixed key order. `sdk_nulls`
gives the shape an OpenAI SDK `model_dump()` writes (explicit nulls, its own key order), which
real logs are full of and which identity must see through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frayproof_audit.prepared import closed_exchanges as _closed_exchanges

Message = dict[str, Any]
Content = str | list[dict[str, Any]] | None

INSTRUCTION_ROLES = ("system", "developer")


def instruction(role: str, content: Content) -> Message:
    return {"role": role, "content": content}


def user(content: Content, *, sdk_nulls: bool = False) -> Message:
    message: Message = {"role": "user", "content": content}
    if sdk_nulls:
        message["name"] = None
    return message


def function_call(call_id: str, name: str, arguments: str, *, sdk_nulls: bool = False) -> dict[str, Any]:
    """One entry of `tool_calls`."""
    if sdk_nulls:
        return {"id": call_id, "function": {"arguments": arguments, "name": name}, "type": "function"}
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(content: Content, calls: list[dict[str, Any]] | None = None, *,
              sdk_nulls: bool = False) -> Message:
    """An assistant message; with `calls`, a tool batch."""
    if sdk_nulls:
        # The key order and null fields of the OpenAI SDK's ChatCompletionMessage dump.
        return {"content": content, "refusal": None, "role": "assistant", "annotations": [],
                "audio": None, "function_call": None, "tool_calls": calls or None}
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


def tool_result(call_id: str, content: Content, *, sdk_nulls: bool = False) -> Message:
    message: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if sdk_nulls:
        message["name"] = None
    return message


def text_block(text: str, kind: str = "text") -> dict[str, Any]:
    return {"type": kind, "text": text}


def image_block(url: str, detail: str | None = None) -> dict[str, Any]:
    image: dict[str, Any] = {"url": url}
    if detail is not None:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def header_length(messages: Sequence[Message]) -> int:
    """Number of leading instruction (system/developer) messages."""
    count = 0
    while count < len(messages) and messages[count].get("role") in INSTRUCTION_ROLES:
        count += 1
    return count


def closed_exchanges(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """Spans [u, u') between consecutive user messages that hold an assistant or tool message:
    the contract's own definition, so compactors protect exactly what `retention` checks."""
    return _closed_exchanges([message.get("role") or "" for message in messages])
