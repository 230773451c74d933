"""`uniqueItems` in time linear in the array, with jsonschema's equality (issue 23 D8).

jsonschema compares the items of an array it cannot sort pairwise: 20,000 objects took longer
than 30 s. Items are now hashed by a canonical form that is equal exactly when jsonschema's
`equal` says two items are (`1 == 1.0`, `true != 1`, objects by members, arrays by position), so
the verdict is jsonschema's definition of "unique" and the time is linear. The same holds where
the schema itself is checked: drafts 3 and 4 require an `enum` to be unique.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema._utils import equal

from frayproof_audit.toolargs.compiled import tool_set
from frayproof_audit.toolargs.keywords import all_unique
from frayproof_audit.toolargs.policy import DEFAULT_POLICY
from frayproof_audit.toolargs.rules import judge
from frayproof_audit.toolargs.schemas import tool_schemas
from tests.helpers import run_cli

UNIQUE = {"type": "object", "properties": {"items": {"type": "array", "uniqueItems": True}}}


def function(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "t", "parameters": parameters}}


def pairwise_unique(items: list[Any]) -> bool:
    """jsonschema's definition, without its sorting shortcut: no two items are `equal`."""
    return not any(equal(one, two) for one, two in itertools.combinations(items, 2))


def tool_args(tmp_path: Path, parameters: dict[str, Any], arguments: Any, expect: int) -> Any:
    (tmp_path / "s.json").write_text(json.dumps(function(parameters)), encoding="utf-8")
    (tmp_path / "t.json").write_text(json.dumps({"arguments": json.dumps(arguments)}), encoding="utf-8")
    return run_cli("tool-args", "--trace", tmp_path / "t.json", "--schema", tmp_path / "s.json",
                   expect=expect, real=True)


def codes(parameters: dict[str, Any], arguments: Any) -> list[str]:
    tools = tool_set(tool_schemas([function(parameters)]))
    return [p.code for p in judge(tools, "t", json.dumps(arguments), True, DEFAULT_POLICY)]


@pytest.mark.parametrize("duplicate", [False, True])
def test_twenty_thousand_objects_are_judged_at_once(tmp_path: Path, duplicate: bool) -> None:
    items: list[Any] = [{"k": n, "tags": ["a", n]} for n in range(20_000)]
    if duplicate:
        items.append({"tags": ["a", 7.0], "k": 7})  # the 8th item, keys reordered, 7 as 7.0
    out = tool_args(tmp_path, UNIQUE, {"items": items}, expect=1 if duplicate else 0)
    assert ("TA-SCHEMA $.items: [{'k': 0, 'tags': ['a', 0]}" in out.stdout) is duplicate


@pytest.mark.parametrize(("items", "unique"), [
    ([1, 1.0], False),
    ([True, 1], True),
    ([False, 0], True),
    ([[True], [1]], True),
    ([{"a": True}, {"a": 1}], True),
    ([{"a": 1}, {"a": 1.0}], False),
    ([[1], [True], [1.0]], False),   # jsonschema's sorting shortcut misses this one; `equal` does not
    (["1", 1], True),
    ([None, False], True),
    ([[], {}], True),
    ([{"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}], False),
    ([10**30, 1e30], True),           # exact: 1e30 is not 10**30
    ([2**53, float(2**53)], False),
])
def test_equality_is_jsonschemas(items: list[Any], unique: bool) -> None:
    assert pairwise_unique(items) is unique
    assert all_unique(items) is unique
    assert ("TA-SCHEMA" in codes(UNIQUE, {"items": items})) is not unique


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([0.0, 1.0, 2.0, 0.5])
    | st.sampled_from(["", "a", "1"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(JSON, max_size=6))
def test_all_unique_is_pairwise_equal(items: list[Any]) -> None:
    assert all_unique(items) == pairwise_unique(items)


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-04/schema#",
                                   "http://json-schema.org/draft-03/schema#"])
def test_a_big_enum_under_an_old_draft_loads_at_once(tmp_path: Path, draft: str) -> None:
    parameters = {"$schema": draft, "type": "object",
                  "properties": {"x": {"enum": [{"k": n} for n in range(20_000)]}}}
    tool_args(tmp_path, parameters, {"x": {"k": 5}}, expect=0)
    parameters["properties"]["x"]["enum"].append({"k": 5.0})
    out = tool_args(tmp_path, parameters, {"x": {"k": 5}}, expect=2)
    assert "not a valid JSON Schema at properties/x/enum: [{'k': 0}, {'k': 1}" in out.stderr


def test_nested_unevaluated_properties_stay_bounded(tmp_path: Path) -> None:
    # jsonschema re-validates every subtree under unevaluatedProperties: 2^depth. The call's
    # time budget ends it; the call is reported as not judged, never as passing.
    schema = {"type": "object", "anyOf": [{"properties": {"c": {"$ref": "#"}}}],
              "unevaluatedProperties": False}
    node: dict[str, Any] = {}
    for _ in range(40):
        node = {"c": node}
    out = tool_args(tmp_path, schema, node, expect=1)
    assert "TA-NOT-JUDGED" in out.stdout
