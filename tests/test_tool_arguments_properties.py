"""Property tests for tool arguments: conforming arguments always pass, and taking one thing
away is always the one finding it should be."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit import validate
from frayproof_audit.toolargs.compiled import tool_set
from frayproof_audit.toolargs.policy import DEFAULT_POLICY
from frayproof_audit.toolargs.rules import judge
from frayproof_audit.toolargs.schemas import tool_schemas
from frayproof_audit.toolargs.text import one_line
from tests.helpers import make_contract

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WHOLE = st.integers(min_value=-(10**30), max_value=10**30)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=10),
    "integer": WHOLE | st.integers(min_value=-(2**53), max_value=2**53).map(float),
    "number": WHOLE | st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": st.lists(st.integers(), max_size=3),
    "object": st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
}
TYPES = sorted(VALUES)
Schema = tuple[dict[str, tuple[str, ...]], list[str]]


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    """Properties (each a type or a union with null) and a required subset of them."""
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6, unique=True))
    types = {name: draw(st.sampled_from([(t,) for t in TYPES] + [(t, "null") for t in TYPES if t != "null"]))
             for name in names}
    required = [name for name in names if draw(st.booleans())]
    return types, required


def definition(schema: Schema) -> dict[str, Any]:
    types, required = schema
    properties = {name: {"type": list(kinds) if len(kinds) > 1 else kinds[0]}
                  for name, kinds in types.items()}
    return {"type": "function", "function": {"name": "tool", "parameters": {
        "type": "object", "properties": properties, "required": required}}}


@st.composite
def conforming(draw: st.DrawFn, schema: Schema) -> dict[str, Any]:
    """Arguments that follow the schema: every required field, some optional ones."""
    types, required = schema
    return {name: draw(VALUES[draw(st.sampled_from(kinds))]) for name, kinds in types.items()
            if name in required or draw(st.booleans())}


def problems(schema: Schema, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    tools = tool_set(tool_schemas([definition(schema)]))
    found = judge(tools, "tool", json.dumps(arguments), True, DEFAULT_POLICY)
    return [(p.code, p.evidence) for p in found]


@SETTINGS
@given(schemas(), st.data())
def test_conforming_arguments_always_pass(schema: Schema, data: st.DataObject) -> None:
    arguments = data.draw(conforming(schema))
    assert problems(schema, arguments) == []


@SETTINGS
@given(schemas(), st.data())
def test_dropping_a_required_field_is_exactly_that_finding(schema: Schema, data: st.DataObject) -> None:
    types, required = schema
    if not required:
        required.append(next(iter(types)))
    arguments = data.draw(conforming(schema))
    dropped = data.draw(st.sampled_from(required))
    del arguments[dropped]
    assert problems(schema, arguments) == [("TA-REQUIRED", one_line(dropped, 80))]


@SETTINGS
@given(schemas(), st.data())
def test_a_value_of_another_type_is_exactly_a_type_finding(schema: Schema, data: st.DataObject) -> None:
    types, _ = schema
    arguments = data.draw(conforming(schema))
    field = data.draw(st.sampled_from(sorted(types)))
    allowed = set(types[field]) | ({"number"} if "integer" in types[field] else set())
    wrong = data.draw(st.sampled_from([t for t in ("string", "boolean", "array", "object", "null")
                                       if t not in allowed]))
    arguments[field] = data.draw(VALUES[wrong])
    assert [code for code, _ in problems(schema, arguments)] == ["TA-TYPE"]


@SETTINGS
@given(schemas(), st.data())
def test_the_check_agrees_with_the_rules_on_a_snapshot(schema: Schema, data: st.DataObject) -> None:
    arguments = data.draw(conforming(schema))
    after = [{"role": "user", "content": "go"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c", "type": "function",
                  "function": {"name": "tool", "arguments": json.dumps(arguments)}}]},
             {"role": "tool", "tool_call_id": "c", "content": "ok"}]
    assert validate(after, make_contract({"tools": [definition(schema)]})).violations == ()


def columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(min_value=4, max_value=120))
def test_evidence_is_one_line_within_its_width(text: str, width: int) -> None:
    line = one_line(text, width)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert sum(columns(c) for c in line) <= width
    line.encode("utf-8", "surrogatepass")
    if len(text) <= width // 2 and all(c.isprintable() and ord(c) < 0x1100 for c in text):
        assert line == text
