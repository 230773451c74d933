"""Tool schemas: what the agent's tools accept, from a contract's `tools:` or a record's `tools`.

A `ToolSchema` is one tool's name and the JSON Schema of its arguments (`parameters` in
OpenAI function definitions, `input_schema` in Anthropic tool definitions), in a neutral form
the checks and the argument mutation operators read.

Three spellings of a tool definition are accepted: OpenAI's `{type: function, function: {name,
description?, parameters}}`, a bare function object `{name, parameters}`, and Anthropic's
`{name, description?, input_schema}`. Anything else (a bare JSON Schema, a server tool without a
schema, a string) is an input error naming where it is, never a tool that accepts anything:
invary turned such schemas into a silent empty contract, and every call passed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.jsonio import JSONProblem, is_unicode_text, loads_strict, strip_bom
from frayproof_audit.toolargs.compiled import schema_problem


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """One tool: its name and the JSON Schema (an object schema) of its arguments."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)


class ToolSchemaError(InputError):
    """Tool definitions that cannot be used: not tool definitions, broken schemas, duplicates."""


MAX_TOOLS_FILE_BYTES = 16 * 1024 * 1024
"""A tools file is a few kilobytes of JSON; anything larger is a mistake."""

NO_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}
"""OpenAI lets a function omit `parameters`: it then takes none."""


def tool_schemas(value: Any, origin: str = "tools") -> tuple[ToolSchema, ...]:
    """Tool definitions (a list, `{"tools": [...]}`, or one definition) → `ToolSchema`s.

    Raises `ToolSchemaError` naming `origin` and every problem found (`[2].name: ...`). This is
    the function a corpus worker calls on a record's `tools` field; the result is immutable
    and can be cached by the canonical JSON of the field.
    """
    tools, problems = parse_tools(value)
    if problems:
        raise ToolSchemaError(f"Invalid tools '{origin}': {'; '.join(problems)}")
    return tools


def read_tools_file(path: str) -> Any:
    """The JSON value of a tools file (a regular file, strict JSON, an optional BOM)."""
    try:
        data = read_regular_file(path, MAX_TOOLS_FILE_BYTES)
    except UnreadableFile as exc:
        raise ToolSchemaError(f"Cannot read tools '{path}': {exc}") from None
    try:
        return loads_strict(strip_bom(data))
    except JSONProblem as exc:
        raise ToolSchemaError(f"Invalid tools '{path}': {exc}") from None


def load_tools_file(path: str) -> tuple[ToolSchema, ...]:
    return tool_schemas(read_tools_file(path), path)


def parse_tools(value: Any) -> tuple[tuple[ToolSchema, ...], list[str]]:
    """The tools and every problem, each located relative to `value` (`[2].function.name: ...`)."""
    if isinstance(value, Mapping) and "tools" in value and not _is_definition(value):
        return _parse_list(value["tools"], "tools")  # `{"tools": [...]}`, or a whole request body
    if isinstance(value, Mapping):
        problems: list[str] = []
        tool = _definition(value, "", problems)
        cleaned = [problem.lstrip(".").removeprefix(": ") for problem in problems]
        return ((tool,) if tool is not None and not problems else ()), cleaned
    return _parse_list(value, "")


def _is_definition(value: Mapping[str, Any]) -> bool:
    return any(key in value for key in ("name", "function", "parameters", "input_schema"))


def _parse_list(value: Any, where: str) -> tuple[tuple[ToolSchema, ...], list[str]]:
    if type(value) is not list:
        return (), [f"{where + ': ' if where else ''}must be a list of tool definitions"]
    problems: list[str] = []
    tools: list[ToolSchema] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(value):
        here = f"{where}[{index}]"
        before = len(problems)
        tool = _definition(item, here, problems)
        if tool is None or len(problems) > before:
            continue
        if tool.name in first_index:
            problems.append(f"{here}: duplicate tool name (item {first_index[tool.name]} has it too)")
            continue
        first_index[tool.name] = index
        tools.append(tool)
    return tuple(tools), problems


def _definition(item: Any, where: str, problems: list[str]) -> ToolSchema | None:
    if not isinstance(item, Mapping):
        problems.append(f"{where}: must be a tool definition (an object)")
        return None
    if "function" in item:
        kind = item.get("type", "function")
        if kind != "function":
            problems.append(f"{where}.type: must be 'function' next to 'function'")
            return None
        function = item["function"]
        if not isinstance(function, Mapping):
            problems.append(f"{where}.function: must be an object with name and parameters")
            return None
        return _named(function, "parameters", f"{where}.function", problems)
    if "input_schema" in item:
        if item.get("type", "custom") not in ("custom", None):
            problems.append(f"{where}.type: an Anthropic tool with input_schema must be 'custom'")
            return None
        return _named(item, "input_schema", where, problems)
    if "name" in item:
        kind = item.get("type")
        if kind is not None and kind != "function":
            problems.append(f"{where}: a {_quoted(kind)} tool has no argument schema "
                            "(only function tools can be checked)")
            return None
        return _named(item, "parameters", where, problems)
    hint = " (a bare JSON Schema? wrap it as {name, parameters})" if _looks_like_schema(item) else ""
    problems.append(f"{where}: not a tool definition: expected {{type: function, function: {{name, "
                    f"parameters}}}}, {{name, parameters}} or {{name, input_schema}}{hint}")
    return None


def _named(function: Mapping[str, Any], schema_key: str, where: str,
           problems: list[str]) -> ToolSchema | None:
    name = function.get("name")
    ok = True
    if type(name) is not str or not name.strip():
        problems.append(f"{where}.name: must be a non-empty string")
        ok = False
    elif not is_unicode_text(name):
        problems.append(f"{where}.name: must be valid Unicode text (it holds a lone surrogate)")
        ok = False
    parameters = function.get(schema_key)
    if parameters is None:
        if schema_key == "input_schema":
            problems.append(f"{where}.input_schema: must be an object schema")
            return None
        parameters = NO_PARAMETERS
    problem = _json_problem(parameters) or _parameters_problem(parameters)
    if problem is not None:
        problems.append(f"{where}.{schema_key}: {problem}")
        return None
    return ToolSchema(name=str(name), parameters=parameters) if ok else None


def _parameters_problem(parameters: Any) -> str | None:
    if not isinstance(parameters, Mapping):
        return "must be an object schema"
    kind = parameters.get("type", "object")
    if kind != "object":
        return "must describe an object (type: object): call arguments are a JSON object"
    return schema_problem(parameters)


MAX_SCHEMA_VALUES = 1_000_000
"""Values in one tool schema, counted as JSON would spell it (YAML aliases expanded)."""


def _json_problem(value: Any) -> str | None:
    """Why a schema from YAML is not JSON (an unquoted date, a non-string key, an alias that
    contains itself or expands beyond `MAX_SCHEMA_VALUES`), or None.

    YAML aliases share one built value: each container is checked once (linear on shared
    values), and its expanded size is counted, so an alias bomb is refused instead of walked.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, leaving = stack.pop()
        if isinstance(item, (Mapping, list)):
            key = id(item)
            items = list(item.values()) if isinstance(item, Mapping) else item
            if leaving:
                on_path.discard(key)
                sizes[key] = 1 + sum(sizes.get(id(each), 1) for each in items)
                if sizes[key] > MAX_SCHEMA_VALUES:
                    return f"must be JSON of at most {MAX_SCHEMA_VALUES:,} values (YAML aliases expanded)"
                continue
            if key in on_path:
                return "must be JSON: it contains itself (a recursive YAML alias)"
            if key in sizes:
                continue
            if isinstance(item, Mapping) and any(type(name) is not str for name in item):
                return "must be JSON: every key must be a string"
            on_path.add(key)
            stack.append((item, True))
            stack.extend((each, False) for each in items)
        elif type(item) is float and not math.isfinite(item):
            return "must be JSON: it holds a non-finite number"
        elif not (item is None or type(item) in (str, int, float, bool)):
            return f"must be JSON: it holds a {type(item).__name__} (quote dates in YAML)"
    return None


def _looks_like_schema(item: Mapping[str, Any]) -> bool:
    return any(key in item for key in ("properties", "$schema", "type", "required"))


def _quoted(value: Any) -> str:
    return repr(value) if type(value) is str and len(value) <= 40 else "non-function"



def resolve_tools_path(path: str, base_dir: str | None) -> str:
    """A contract's `tools:` path: relative paths are relative to the contract's folder."""
    expanded = os.path.expanduser(path)
    if os.path.isabs(expanded) or base_dir is None:
        return expanded
    return os.path.join(base_dir, expanded)
