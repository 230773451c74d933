"""What the argument operators read: calls of tools with a schema, and their argument objects.

A call is an argument site when it is on an assistant message, its tool name has a schema in
`contract.tools` (the first schema of that name), and its arguments text parses
(`jsonio.loads_strict`) as a JSON object. The operators change that object and write it back
compactly (`json.dumps(..., separators=(",", ":"), ensure_ascii=False)`, key order kept), so a
mutant's arguments text is re-serialized even where the change is one key.

`retype_argument` needs a value of a type the schema does not allow. It takes the first of
`WRONG_VALUES` whose JSON type is not among the declared ones (`integer` is also a `number`),
which gives: string → `0`; integer, number → `"0"`; boolean, null, array, object → `0`;
`["string", "integer"]` → `false`. A property without a usable `type` (absent, not a JSON type
name, or allowing every type) gives no site.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.jsonio import JSONProblem, loads_strict
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import call_arguments
from frayproof_audit.toolargs.text import kind

JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
WRONG_VALUES: tuple[Any, ...] = (0, "0", False, None, [], {})
"""Replacement values of `retype_argument`, in order of preference."""


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call whose tool has a schema and whose arguments are a JSON object."""

    index: int
    position: int
    tool: str
    parameters: Mapping[str, Any]
    arguments: dict[str, Any]


def call_sites(after: Loaded, contract: Contract) -> Iterator[CallSite]:
    """Argument sites in output order (message, then call position)."""
    schemas: dict[str, Mapping[str, Any]] = {}
    for tool in contract.tools:
        schemas.setdefault(tool.name, tool.parameters)
    if not schemas:
        return
    for index, view in enumerate(after.views):
        if view.role != "assistant":
            continue
        for position, call in enumerate(view.calls):
            parameters = schemas.get(call.name)
            if parameters is None:
                continue
            parsed = _object(call_arguments(after.wire[index], position))
            if parsed is not None:
                yield CallSite(index, position, call.name, parameters, parsed)


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = loads_strict(text.encode("utf-8"))
    except (JSONProblem, UnicodeEncodeError):
        return None
    return value if type(value) is dict else None


def required(parameters: Mapping[str, Any]) -> list[str]:
    """The schema's `required` names, first occurrence of each (non-strings ignored)."""
    names = parameters.get("required")
    if type(names) is not list:
        return []
    return list(dict.fromkeys(name for name in names if type(name) is str))


def declared_types(parameters: Mapping[str, Any]) -> list[tuple[str, frozenset[str]]]:
    """(name, allowed JSON types) of each property with a usable `type`, in schema order."""
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found = []
    for name, schema in properties.items():
        if type(name) is not str or not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        kinds = [kind] if type(kind) is str else kind if type(kind) is list else []
        allowed = frozenset(k for k in kinds if type(k) is str and k in JSON_TYPES)
        if allowed:
            found.append((name, allowed))
    return found


def json_type(value: Any) -> str:
    """JSON Schema's type name of a parsed value: `kind`, with integers told apart."""
    return "integer" if type(value) is int else kind(value)


def allows(allowed: frozenset[str], value: Any) -> bool:
    kind = json_type(value)
    return kind in allowed or (kind == "integer" and "number" in allowed)


def wrong_value(allowed: frozenset[str]) -> tuple[bool, Any]:
    """(found, value): the first of `WRONG_VALUES` the declared types do not allow."""
    for value in WRONG_VALUES:
        if not allows(allowed, value):
            return True, value
    return False, None


def same_value(a: Any, b: Any) -> bool:
    """Equal as JSON values (types compared exactly, so `0` is not `false`)."""
    return json_type(a) == json_type(b) and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def compact(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
