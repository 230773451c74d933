"""Reading a tool call's arguments from a Chat-Completions-shaped call dict.

Neutral message dicts and OpenAI traces share this shape (`{id, type, function: {name,
arguments}}`), so the check and the trace reader read arguments the same way. Whether the key is
there at all matters: an absent `arguments` is a different policy from `""`.
"""

from __future__ import annotations

from typing import Any


def call_arguments(call: Any) -> tuple[Any, bool]:
    """(raw arguments, whether the `arguments` key is present) of one call dict."""
    function = call.get("function") if type(call) is dict else None
    if type(function) is not dict or "arguments" not in function:
        return None, False
    return function["arguments"], True


def message_calls(message: Any) -> list[Any]:
    """The call dicts of a neutral message (none when it has no call array)."""
    calls = message.get("tool_calls") if type(message) is dict else None
    return calls if type(calls) is list else []
