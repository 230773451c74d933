"""Tool schemas inferred from the calls the good pairs' befores hold, when no record has `tools`.

What a schema claims must be what the calls show, and nothing one session shows:

* a tool gets a schema only when it is called in at least `min_sessions` sessions;
* its top-level `properties` are every key its calls use, each with the JSON types seen
  (`integer` where every number is whole, else `number`; several types as a union);
* `required` lists the keys **every** call of the tool has;
* a string key gets an `enum` when its values are few and repeated: at most `MAX_ENUM`
  distinct values, each seen in at least `min_sessions` sessions, and at most one distinct
  value per `SESSIONS_PER_VALUE` sessions using the key;
* no `additionalProperties: false`, no nested shapes: a key no call used yet is drift (a
  warning), never an error.

Arguments that are not a strict JSON object are left out (the `valid_json` rule judges them).
Each schema's `description` says it was inferred, and from how many calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_ENUM = 5
SESSIONS_PER_VALUE = 3
_TYPE_ORDER = ("string", "integer", "number", "boolean", "array", "object", "null")


@dataclass(frozen=True, slots=True)
class InferredTools:
    definitions: tuple[dict[str, Any], ...]
    calls: int
    """Calls whose arguments were read (JSON objects of the tools given a schema)."""
    sessions: int
    left_out: tuple[str, ...]
    """Tools called in too few sessions to be given a schema."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _arguments(text: str) -> dict[str, Any] | None:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, value in items:
            if name in found:
                raise ValueError("duplicate key")
            found[name] = value
        return found

    def constant(name: str) -> Any:
        raise ValueError(name)

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class _Tool:
    def __init__(self) -> None:
        self.calls = 0
        self.sessions: set[str] = set()
        self.keys: dict[str, int] = {}
        self.types: dict[str, set[str]] = {}
        self.key_sessions: dict[str, set[str]] = {}
        self.strings: dict[str, dict[str, set[str]] | None] = {}

    def add(self, session: str, arguments: dict[str, Any]) -> None:
        self.calls += 1
        self.sessions.add(session)
        for name, value in arguments.items():
            self.keys[name] = self.keys.get(name, 0) + 1
            self.types.setdefault(name, set()).add(_json_type(value))
            self.key_sessions.setdefault(name, set()).add(session)
            values = self.strings.setdefault(name, {})
            if values is None:
                continue
            if not isinstance(value, str) or (value not in values and len(values) >= MAX_ENUM):
                self.strings[name] = None
            else:
                values.setdefault(value, set()).add(session)

    def schema(self, min_sessions: int) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for name in sorted(self.keys):
            types = self.types[name]
            if "number" in types:
                types = types - {"integer"}
            ordered = [kind for kind in _TYPE_ORDER if kind in types]
            prop: dict[str, Any] = {"type": ordered[0] if len(ordered) == 1 else ordered}
            values = self.strings.get(name)
            if values and all(len(holders) >= min_sessions for holders in values.values()) \
                    and len(values) * SESSIONS_PER_VALUE <= len(self.key_sessions[name]):
                prop["enum"] = sorted(values)
            properties[name] = prop
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = sorted(name for name, count in self.keys.items() if count == self.calls)
        if required:
            schema["required"] = required
        return schema


def infer_tools(calls: Iterable[tuple[str, str, str]], min_sessions: int) -> InferredTools:
    """Schemas for the tools of `calls` ((session, tool name, arguments text) each)."""
    tools: dict[str, _Tool] = {}
    for session, name, text in calls:
        if not name.strip():
            continue
        arguments = _arguments(text)
        if arguments is not None:
            tools.setdefault(name, _Tool()).add(session, arguments)
    definitions: list[dict[str, Any]] = []
    left_out: list[str] = []
    used_calls = 0
    sessions: set[str] = set()
    for name in sorted(tools):
        tool = tools[name]
        if len(tool.sessions) < min_sessions:
            left_out.append(name)
            continue
        used_calls += tool.calls
        sessions |= tool.sessions
        definitions.append({
            "name": name,
            "description": (f"Inferred by frayproof-audit suggest from {tool.calls} call(s) in "
                            f"{len(tool.sessions)} session(s)."),
            "parameters": tool.schema(min_sessions),
        })
    return InferredTools(tuple(definitions), used_calls, len(sessions), tuple(left_out))
