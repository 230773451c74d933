"""The tool-argument fast paths change speed, never findings.

* `toolargs.quick` proofs: a proof that says "valid" must agree with jsonschema on every
  instance (hypothesis over schemas of the covered keywords and instances made to resemble
  them), and schemas beyond the covered keywords get no proof at all.
* `judge` with proofs reports exactly what it reports with every call sent to jsonschema, on
  the realistic tool lists of `sessiongen.tooled` (conforming, broken and altered arguments).
* `tool_call_integrity`'s lazily built indexes keep the first-match order of the eager ones.
* A record's tool list is parsed once per process, whichever shard (`RecordTools`) asks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.validators import Draft7Validator, Draft202012Validator

from frayproof_audit import check
from frayproof_audit.checks.tool_call_integrity import call_facts
from frayproof_audit.contract import Contract
from frayproof_audit.corpus.run import record_tools
from frayproof_audit.corpus.run.record_tools import RecordTools
from frayproof_audit.snapshot import load_wire
from frayproof_audit.toolargs import compiled, schemas
from frayproof_audit.toolargs.compiled import ToolSet, tool_set
from frayproof_audit.toolargs.policy import DEFAULT_POLICY, make_policy
from frayproof_audit.toolargs.quick import prove_valid
from frayproof_audit.toolargs.rules import judge
from frayproof_audit.toolargs.schemas import ToolSchemaError, tool_schemas
from sessiongen import tooled
from sessiongen.prose import TOOLS
from tests.helpers import make_contract

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- proofs agree with jsonschema ----------------------------------------------------------------

KEYS = ("a", "b", "c")
SCALARS: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 1.5, -2.0, 3.0]),
    st.sampled_from(["", "a", "ab", "abc", "x1", "1", "A-12", "abc\n", "é", "١", "\ufeff", "\r"]),
)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=12,
)
TYPE_NAMES = ("string", "integer", "number", "boolean", "object", "array", "null")


def _keywords(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """One covered keyword with a valid value (subschemas drawn from `inner`)."""
    size = st.integers(0, 3)
    return st.one_of(
        st.builds(lambda t: {"type": t}, st.sampled_from(TYPE_NAMES)),
        st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=3,
                                                    unique=True)),
        st.builds(lambda ps: {"properties": ps}, st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
        st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(KEYS), max_size=3, unique=True)),
        st.builds(lambda a: {"additionalProperties": a}, st.booleans() | inner),
        st.builds(lambda i: {"items": i}, inner | st.just(True)),
        st.builds(lambda e: {"enum": e}, st.lists(JSON_VALUES, min_size=1, max_size=4)),
        st.builds(lambda c: {"const": c}, JSON_VALUES),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                                        "exclusiveMaximum"]),
                  st.integers(-2, 2) | st.sampled_from([0.5, 1.0, -1.5])),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minLength", "maxLength", "minItems", "maxItems",
                                                        "minProperties", "maxProperties"]), size),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b$", "^[A-Z]+-[0-9]+$", "1", "", "c$",
                                                             r"^\d+$", r"^\w+$", "^.$", r"^\s$"])),
        st.builds(lambda u: {"uniqueItems": u}, st.booleans()),
        st.just({"description": "annotations never invalidate", "format": "date-time", "default": 3}),
    )


def _schema(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.lists(_keywords(inner), max_size=4).map(
        lambda parts: {key: value for part in parts for key, value in part.items()})


SUBSCHEMAS = st.recursive(st.just({}), _schema, max_leaves=6)


@st.composite
def root_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A schema of the covered keywords, sometimes reaching part of itself through `$ref`."""
    schema = draw(_schema(SUBSCHEMAS))
    if draw(st.booleans()):
        schema["$defs"] = {"shared": draw(SUBSCHEMAS)}
        schema.setdefault("properties", {})[draw(st.sampled_from(KEYS))] = {"$ref": "#/$defs/shared"}
    Draft202012Validator.check_schema(schema)
    return schema


@SETTINGS
@given(root_schemas(), st.lists(JSON_VALUES, min_size=1, max_size=8))
def test_a_proof_never_calls_an_invalid_instance_valid(schema: dict[str, Any], instances: list[Any]) -> None:
    proof = prove_valid(schema, True)
    assert proof is not None  # every keyword drawn here is covered
    validator = compiled.compile_tool(schemas.ToolSchema("t", schema)).validator  # what judge asks
    for instance in instances:
        if proof(instance):
            assert not list(validator.iter_errors(instance)), (schema, instance)


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"type": "string"}]},
    {"properties": {"a": {"not": {"type": "string"}}}},
    {"items": {"contains": {"type": "integer"}}},
    {"patternProperties": {"^x": {"type": "string"}}},
    {"prefixItems": [{"type": "string"}]},
    {"$id": "https://example.com/tool", "type": "object"},
    {"$defs": {"n": {"properties": {"n": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"},  # recursive
    {"$ref": "#/properties/a", "properties": {"a": {}}},  # not a $defs reference
    {"properties": {"a": False}},
    {"multipleOf": 2},
    {"dependentRequired": {"a": ["b"]}},
    {"x-vendor": True},  # unknown to us: never assumed harmless
])
def test_schemas_beyond_the_covered_keywords_get_no_proof(schema: dict[str, Any]) -> None:
    assert prove_valid(schema, True) is None


def test_only_draft_2020_12_schemas_get_proofs() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert prove_valid(schema, False) is None
    tool = compiled.compile_tool(schemas.ToolSchema("t", schema))
    assert tool.validator.META_SCHEMA == Draft7Validator.META_SCHEMA and tool.proof is None
    assert compiled.compile_tool(schemas.ToolSchema("t", {"type": "object"})).proof is not None


@pytest.mark.parametrize(("schema", "instance"), [
    ({"enum": [1]}, 1.0),  # jsonschema: equal; the proof: not proven (another type)
    ({"enum": [1]}, True),
    ({"const": [1, 2]}, [1, 2]),  # containers are left to jsonschema
    ({"uniqueItems": True}, [1, 2]),  # only arrays of strings are proven unique
])
def test_equality_corners_are_left_to_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    proof = prove_valid(schema, True)
    assert proof is not None and not proof(instance)


def test_every_tool_of_the_realistic_lists_has_a_proof() -> None:
    for name, definitions in tooled.TOOL_LISTS.items():
        tools = tool_set(tool_schemas(definitions, name))
        assert all(tool.proof is not None for tool in tools.tools.values()), name


# --- judge: the same findings with and without proofs --------------------------------------------

def _without_proofs(tools: ToolSet) -> ToolSet:
    return ToolSet({name: dataclasses.replace(tool, proof=None) for name, tool in tools.tools.items()})


def _argument_texts(rng: random.Random, tool: str) -> list[str]:
    arguments = tooled.conforming_arguments(rng, tool)
    text = json.dumps(arguments)
    broken = tooled.violating_arguments(rng, tool, arguments)
    return [text, json.dumps(broken), tooled.respaced(text, rng), tooled.altered(text, rng),
            json.dumps({**arguments, "lines": {"start": 2.0}}), json.dumps({**broken, "extra": [1, 1]})]


@pytest.mark.parametrize("list_name", sorted(tooled.TOOL_LISTS))
def test_judge_finds_the_same_with_and_without_proofs(list_name: str) -> None:
    tools = tool_set(tool_schemas(tooled.TOOL_LISTS[list_name], list_name))
    reference = _without_proofs(tools)
    policies = [DEFAULT_POLICY, make_policy((("required_fields", "off"), ("arg_types", "off"))),
                make_policy((("no_schema_drift", "error"),), severity="warning")]
    rng = random.Random(list_name)
    proven = 0
    for _ in range(60):
        tool = rng.choice(TOOLS)
        for text in _argument_texts(rng, tool):
            for policy in policies:
                fast = judge(tools, tool, text, True, policy)
                assert fast == judge(reference, tool, text, True, policy), text
            proof = tools.tools[tool].proof
            with contextlib.suppress(ValueError):  # a truncated text is not JSON
                proven += bool(proof is not None and proof(json.loads(text)))
    assert proven > 100  # the fast path is actually taken


@SETTINGS
@given(root_schemas(), st.lists(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=3), min_size=1,
                                max_size=6))
def test_judge_finds_the_same_with_and_without_proofs_on_drawn_schemas(
    schema: dict[str, Any], instances: list[dict[str, Any]]
) -> None:
    tool = compiled.compile_tool(schemas.ToolSchema("t", schema))
    fast, reference = ToolSet({"t": tool}), _without_proofs(ToolSet({"t": tool}))
    policies = [DEFAULT_POLICY, make_policy((("no_schema_drift", "error"), ("required_fields", "off")))]
    for instance in instances:
        text = json.dumps(instance)
        for policy in policies:
            assert judge(fast, "t", text, True, policy) == judge(reference, "t", text, True, policy)


# --- tool_call_integrity: lazy indexes, same first match -----------------------------------------

def test_result_ids_keep_message_order_of_first_occurrence() -> None:
    def tool(call_id: str, content: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call_id, "content": content}

    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in "ab"]
    before = load_wire([{"role": "user", "content": "go"},
                        {"role": "assistant", "content": None, "tool_calls": calls},
                        tool("b", "y"), tool("a", "x"), tool("b", "x")])
    facts = call_facts(before)
    assert facts.result_ids("x") == ("a", "b") and facts.result_ids("y") == ("b",)
    assert facts.result_ids("z") == ()
    assert facts.has_result("b", "x") and not facts.has_result("a", "y")


def test_traded_result_ids_are_still_found() -> None:
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in "ab"]
    before = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": calls},
              {"role": "tool", "tool_call_id": "a", "content": "12 C"},
              {"role": "tool", "tool_call_id": "b", "content": "3 C"}]
    after = [*before[:2], {**before[2], "content": "3 C"}, {**before[3], "content": "12 C"}]
    contract = make_contract({"checks": {"tool_call_integrity": True}})
    found = [(v.code, v.tool_call_id) for v in check(before, after, contract).violations
             if v.check == "tool_call_integrity"]
    assert found == [("TC-RESULT-ID", "b"), ("TC-RESULT-ID", "a")]


# --- a record's tools: parsed once per process ---------------------------------------------------

def test_a_tool_list_is_parsed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_tools, "_PARSED", {})
    checked: list[str] = []
    real = schemas.schema_problem

    def counting(schema: Any) -> str | None:
        checked.append("x")
        return real(schema)

    monkeypatch.setattr(schemas, "schema_problem", counting)
    definitions = tooled.TOOL_LISTS["ops-agent"]
    contract = Contract()
    first = RecordTools().contract_for(contract, definitions)
    second = RecordTools().contract_for(contract, json.loads(json.dumps(definitions)))
    assert first.tools is second.tools  # so their compiled validators are shared too
    assert tool_set(first.tools) is tool_set(second.tools)
    assert len(checked) == len(definitions)


def test_a_bad_tool_list_is_an_input_error_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_tools, "_PARSED", {})
    for cache in (RecordTools(), RecordTools()):
        with pytest.raises(ToolSchemaError, match="the record's tools"):
            cache.contract_for(Contract(), [{"type": "object"}])
    assert record_tools._PARSED == {}


def test_policy_levels_still_refuse_unknown_rules() -> None:
    with pytest.raises(KeyError):
        DEFAULT_POLICY.on("no_such_rule")
    assert make_policy() == DEFAULT_POLICY and hash(make_policy()) == hash(DEFAULT_POLICY)
    assert not make_policy((("schema", "off"),)).on("schema")
