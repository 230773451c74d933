"""Reading the tool calls out of a saved trace, for `tool-args` (invary's `check --trace`).

Accepted, by their keys (exact, case-sensitive):

* a chat completion response `{choices: [{message: {tool_calls: [...]}}]}`: every call of
  every choice, in order;
* a message `{tool_calls: [...]}`, or a JSON array of messages (a snapshot): every call;
* a bare tool call `{id?, type?, function: {name, arguments}}`;
* a bare `{arguments}` or `{name, arguments}` object (with an optional `id`).

Every call is returned, not just the first (invary Q4). A shape that is recognized but holds a
wrongly typed field is an error naming that field, never a fall-through to a misleading "no
tool calls" (invary Q10); a trace with no call at all is an error too, since nothing was checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.jsonio import JSONProblem, loads_strict, strip_bom
from frayproof_audit.toolargs.calls import call_arguments

MAX_TRACE_BYTES = 256 * 1024 * 1024


class TraceError(InputError):
    """The trace cannot be read, or holds no tool call in a shape `tool-args` knows."""


@dataclass(frozen=True, slots=True)
class TraceCall:
    """One call found in a trace: where it is, its id and name (None when absent) and its raw
    arguments (`present`: whether the `arguments` key exists)."""

    where: str
    id: str | None
    name: str | None
    arguments: Any
    present: bool


def read_trace(path: str | os.PathLike[str]) -> tuple[TraceCall, ...]:
    """The calls of the trace file at `path` (strict JSON, an optional BOM)."""
    shown = os.fspath(path)
    try:
        data = read_regular_file(path, MAX_TRACE_BYTES)
    except UnreadableFile as exc:
        raise TraceError(f"Cannot read trace '{shown}': {exc}") from None
    try:
        value = loads_strict(strip_bom(data))
    except JSONProblem as exc:
        raise TraceError(f"Invalid trace '{shown}': {exc}") from None
    try:
        return trace_calls(value)
    except _Shape as exc:
        raise TraceError(f"Invalid trace '{shown}': {exc}") from None


class _Shape(Exception):
    """What is wrong with the trace's shape; the message starts with the path."""


def trace_calls(value: Any) -> tuple[TraceCall, ...]:
    """Every call of a parsed trace, in document order. Raises `_Shape` (wrapped by `read_trace`)."""
    calls: list[TraceCall] = []
    if type(value) is list:
        for index, item in enumerate(value):
            if type(item) is dict and "function" in item:
                calls.append(_call(item, f"[{index}]"))
            elif type(item) is dict:
                calls += _message(item, f"[{index}]")
            else:
                raise _Shape(f"[{index}]: must be a message or a tool call (an object)")
        what = "the array"
    elif type(value) is not dict:
        raise _Shape(_UNRECOGNIZED)
    elif "choices" in value:
        calls += _response(value)
        what = "the response"
    elif "tool_calls" in value:
        calls += _message(value, "")
        what = "the message"
    elif "function" in value:
        calls.append(_call(value, ""))
        what = "the call"
    elif "arguments" in value:
        calls.append(_minimal(value))
        what = "the call"
    else:
        raise _Shape(_UNRECOGNIZED)
    if not calls:
        raise _Shape(f"{what} holds no tool call: nothing to check")
    return tuple(calls)


_UNRECOGNIZED = (
    "unrecognized trace: expected a chat completion response (choices[].message.tool_calls), a "
    "message with tool_calls, an array of messages, a tool call {function: {name, arguments}}, "
    "or {name?, arguments}"
)


def _response(value: dict[str, Any]) -> list[TraceCall]:
    choices = value["choices"]
    if type(choices) is not list:
        raise _Shape("choices: must be an array")
    calls: list[TraceCall] = []
    for index, choice in enumerate(choices):
        where = f"choices[{index}]"
        if type(choice) is not dict:
            raise _Shape(f"{where}: must be an object")
        message = choice.get("message")
        if type(message) is not dict:
            hint = " (streaming chunks are not supported)" if "delta" in choice else ""
            raise _Shape(f"{where}.message: must be an object{hint}")
        calls += _message(message, f"{where}.message")
    return calls


def _message(message: dict[str, Any], where: str) -> list[TraceCall]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    here = f"{where}.tool_calls" if where else "tool_calls"
    if type(raw) is not list:
        raise _Shape(f"{here}: must be an array or null")
    return [_call(call, f"{here}[{position}]") for position, call in enumerate(raw)]


def _call(call: Any, where: str) -> TraceCall:
    prefix = where or "the call"
    if type(call) is not dict:
        raise _Shape(f"{prefix}: must be an object")
    kind = call.get("type")
    if kind is not None and kind != "function":
        raise _Shape(f"{where + '.' if where else ''}type: must be 'function' (only function calls "
                     "have arguments to check)")
    function = call.get("function")
    if type(function) is not dict:
        raise _Shape(f"{where + '.' if where else ''}function: must be an object with name and arguments")
    arguments, present = call_arguments(call)
    return TraceCall(
        where=prefix,
        id=_text(call, "id", where),
        name=_text(function, "name", f"{where + '.' if where else ''}function"),
        arguments=arguments,
        present=present,
    )


def _minimal(value: dict[str, Any]) -> TraceCall:
    return TraceCall(
        where="the call",
        id=_text(value, "id", ""),
        name=_text(value, "name", ""),
        arguments=value["arguments"],
        present=True,
    )


def _text(mapping: dict[str, Any], key: str, where: str) -> str | None:
    value = mapping.get(key)
    if value is not None and type(value) is not str:
        raise _Shape(f"{where + '.' if where else ''}{key}: must be a string or null")
    return value
