"""The tool_arguments check beyond its YAML cases: schema loading, messages, caching, scope."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import check, validate
from frayproof_audit.contract import Contract, ContractError, load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.toolargs import compiled
from frayproof_audit.toolargs.schemas import ToolSchema, ToolSchemaError, tool_schemas
from tests.helpers import make_contract

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["location", "unit"],
        },
    },
}


def calling(*calls: tuple[str, str], call_id: str = "c") -> list[dict[str, Any]]:
    """A user turn, one assistant message making `calls` (name, arguments), and their results."""
    ids = [f"{call_id}{n}" for n in range(len(calls))]
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in zip(ids, calls, strict=True)]},
        *({"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids),
    ]


def messages_of(after: list[dict[str, Any]], contract: Contract) -> list[str]:
    return [v.message for v in validate(after, contract).violations]


# --- invary's evidence, in our messages ----------------------------------------------------

def test_findings_name_the_field_the_tool_and_the_site() -> None:
    contract = make_contract({"tools": [WEATHER]})
    missing, = messages_of(calling(("get_weather", '{"location":"Tokyo"}')), contract)
    assert missing == ("Tool call is missing a required argument (get_weather, after[1].tool_calls[0]): "
                       "unit")
    typed, = messages_of(calling(("get_weather", '{"location":42,"unit":"c"}')), contract)
    assert typed.endswith("location: expected string, got number 42")
    drift, = messages_of(calling(("get_weather", '{"location":"T","unit":"c","timezone":"x"}')), contract)
    assert drift.endswith("): timezone")


def test_schema_evidence_is_the_json_path_and_cut_to_one_line() -> None:
    tool = {"name": "t", "parameters": {"type": "object", "properties": {
        "a": {"type": "object", "properties": {"b": {"enum": ["x"]}}}}}}
    long = "\n" * 3 + "y" * 500
    (message,) = messages_of(calling(("t", json.dumps({"a": {"b": long}}))), make_contract({"tools": [tool]}))
    evidence = message.split("): ", 1)[1]
    assert evidence.startswith("$.a.b: '\\n\\n\\ny")
    assert "\n" not in message and len(evidence) <= 200 and evidence.endswith("...")


def test_schema_errors_are_capped_per_call() -> None:
    tool = {"name": "t", "parameters": {"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "string"}}}}}
    report = validate(calling(("t", json.dumps({"xs": list(range(25))}))), make_contract({"tools": [tool]}))
    assert [v.code for v in report.violations] == ["TA-SCHEMA"] * 11
    assert report.violations[-1].message.endswith("15 more schema error(s) not shown")


# --- where schemas come from -----------------------------------------------------------------

@pytest.mark.parametrize("definition", [
    WEATHER,
    WEATHER["function"],
    {"name": "get_weather", "description": "d", "input_schema": WEATHER["function"]["parameters"]},
], ids=["openai", "bare-function", "anthropic"])
def test_three_spellings_give_the_same_tool(definition: dict[str, Any]) -> None:
    (tool,) = tool_schemas([definition])
    assert tool == ToolSchema("get_weather", WEATHER["function"]["parameters"])


def test_one_definition_a_list_and_a_tools_document_are_accepted() -> None:
    assert tool_schemas(WEATHER) == tool_schemas([WEATHER]) == tool_schemas({"tools": [WEATHER]})
    assert tool_schemas({"model": "m", "messages": [], "tools": [WEATHER]}) == tool_schemas([WEATHER])


def test_a_function_without_parameters_takes_none() -> None:
    (tool,) = tool_schemas([{"type": "function", "function": {"name": "now"}}])
    assert tool.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("value", "problem"), [
    ([{"type": "object", "properties": {"a": {}}}], "[0]: not a tool definition"),
    ([{"type": "function", "function": None}], "[0].function: must be an object"),
    ([{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}], "[1]: duplicate tool name"),
    ([{"type": "web_search_20250305", "name": "web_search"}], "[0]: a 'web_search_20250305' tool"),
    ([{"name": "a", "input_schema": None}], "[0].input_schema: must be an object schema"),
    ([{"name": "", "parameters": {}}], "[0].name: must be a non-empty string"),
    ([{"name": "a", "parameters": {"type": "string"}}], "must describe an object"),
    ([{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "strin"}}}}],
     "[0].parameters: not a valid JSON Schema at properties/x/type"),
    ([{"name": "a", "parameters": {"properties": {"x": {"$ref": "#/$defs/nope"}}}}],
     "$ref '#/$defs/nope' at #/properties/x does not resolve inside the schema"),
    ([{"name": "a", "parameters": {"properties": {"x": {"$ref": "https://example.com/x.json"}}}}],
     "$ref 'https://example.com/x.json' at #/properties/x is https://example.com/x.json, outside the schema"),
    ([{"name": "a", "parameters": {"$schema": "https://example.com/my-draft"}}], "unknown $schema"),
    ("tools.json", "must be a list of tool definitions"),
], ids=["bare-json-schema", "null-function", "duplicate", "server-tool", "null-input-schema",
        "empty-name", "not-an-object", "broken-schema", "dangling-ref", "remote-ref", "unknown-draft",
        "a-string"])
def test_what_is_not_a_usable_tool_definition_is_an_input_error(value: Any, problem: str) -> None:
    with pytest.raises(ToolSchemaError) as raised:
        tool_schemas(value, "record 7")
    assert isinstance(raised.value, InputError)
    assert str(raised.value).startswith("Invalid tools 'record 7': ")
    assert problem in str(raised.value)


def test_the_schemas_draft_is_honoured() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "definitions": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/definitions/n"}}}
    contract = make_contract({"tools": [{"name": "t", "parameters": draft7}]})
    assert [v.code for v in validate(calling(("t", '{"n":"1"}')), contract).violations] == ["TA-SCHEMA"]


def test_contract_problems_are_located_and_reported_together() -> None:
    with pytest.raises(ContractError) as raised:
        make_contract({"tools": [WEATHER, {"type": "object"}, {"name": "x", "parameters": {"type": "array"}}],
                       "checks": {"tool_arguments": {"rules": {"schemas": "off"}}}})
    text = str(raised.value)
    assert "tools[1]: not a tool definition" in text
    assert "tools[2].parameters: must describe an object" in text
    assert "checks.tool_arguments.rules: unknown rule 'schemas'" in text


def test_rules_accept_yaml_off_and_refuse_other_levels() -> None:
    contract = make_contract("checks:\n  tool_arguments:\n    rules: {schema: off, arg_types: warning}\n")
    assert contract.option("tool_arguments", "rules") == (("arg_types", "warning"), ("schema", "off"))
    with pytest.raises(ContractError, match=r"rules: schema: must be one of error, warning, off"):
        make_contract({"checks": {"tool_arguments": {"rules": {"schema": "fatal"}}}})
    with pytest.raises(ContractError, match=r"tools: must be a list of tool definitions or the path"):
        make_contract({"tools": None})


def test_a_tools_path_is_relative_to_the_contract_and_not_hashed(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "tools.json").write_text(json.dumps({"tools": [WEATHER]}), encoding="utf-8")
    text = "tools: schemas/tools.json\n"
    (tmp_path / "contract.yaml").write_text(text, encoding="utf-8")
    contract = load_contract(tmp_path / "contract.yaml")
    assert [tool.name for tool in contract.tools] == ["get_weather"]
    assert contract.source_text == text and contract.sha256 == Contract(source_text=text).sha256


def test_a_bad_tools_file_fails_the_contract(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text('[{"name": "a", "parameters": {}}, {"name": "a"}]', encoding="utf-8")
    (tmp_path / "dup.json").write_text('{"tools": [], "tools": []}', encoding="utf-8")
    (tmp_path / "c.yaml").write_text("tools: tools.json\n", encoding="utf-8")
    (tmp_path / "d.yaml").write_text("tools: dup.json\n", encoding="utf-8")
    (tmp_path / "e.yaml").write_text("tools: missing.json\n", encoding="utf-8")
    with pytest.raises(ContractError, match=r"tools \(tools.json\)\[1\]: duplicate tool name"):
        load_contract(tmp_path / "c.yaml")
    with pytest.raises(ContractError, match=r"duplicate key"):
        load_contract(tmp_path / "d.yaml")
    with pytest.raises(ContractError, match=r"Cannot read tools .*missing.json"):
        load_contract(tmp_path / "e.yaml")


def test_per_record_tools_replace_the_contracts() -> None:
    contract = make_contract({"tools": [WEATHER]})
    after = calling(("ping", "{}"))
    assert [v.code for v in validate(after, contract).violations] == ["TA-UNKNOWN-TOOL"]
    record = dataclasses.replace(contract, tools=tool_schemas([{"name": "ping", "parameters": {}}]))
    assert validate(after, record).violations == ()


# --- inertness, order, scope and speed ---------------------------------------------------------

def test_inert_without_tools_even_on_broken_arguments() -> None:
    after = calling(("anything", "{not json"))
    assert validate(after).violations == ()
    assert validate(after, make_contract({"checks": {"tool_arguments": {"scope": "both"}}})).violations == ()


def test_before_findings_come_after_the_after_findings_and_point_into_before() -> None:
    contract = make_contract({"tools": [WEATHER], "checks": {"tool_arguments": {"scope": "both"}}})
    before = calling(("get_weather", "{"), call_id="b")
    after = calling(("get_weather", "{}"), call_id="a")
    report = check(before, after, contract)
    assert [(v.snapshot, v.code) for v in report.violations] == [
        ("after", "TA-REQUIRED"), ("after", "TA-REQUIRED"), ("before", "TA-JSON")]
    assert "before[1].tool_calls[0]" in report.violations[-1].message


def test_schemas_compile_once_per_contract_not_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = compiled.compile_tool

    def counting(tool: ToolSchema) -> compiled.CompiledTool:
        built.append(tool.name)
        return real(tool)

    monkeypatch.setattr(compiled, "compile_tool", counting)
    contract = make_contract({"tools": [WEATHER]})
    after = calling(*[("get_weather", json.dumps({"location": str(n), "unit": "c"})) for n in range(50)])
    for _ in range(3):
        assert validate(after, contract).passed
    assert built == ["get_weather"]
    assert compiled.tool_set(contract.tools) is compiled.tool_set(contract.tools)


def test_a_reference_under_a_nested_id_is_checked_when_the_contract_loads() -> None:
    # A nested $id moves the base URI; the load-time check follows it (it used to step aside,
    # and validation then fetched the URL: issue 23 D2).
    schema = {"type": "object", "properties": {"a": {"$id": "https://example.com/a", "$ref": "missing"}}}
    expected = r"\$ref 'missing' at #/properties/a is https://example.com/missing, outside the schema"
    with pytest.raises(ContractError, match=expected):
        make_contract({"tools": [{"name": "t", "parameters": schema}]})


def test_mutation_testing_runs_with_tool_schemas() -> None:
    from frayproof_audit.mutate.runner import run_mutations

    contract = make_contract({"tools": [WEATHER]})
    session = [{"role": "system", "content": "s"},
               *calling(("get_weather", '{"location":"T","unit":"c"}')),
               {"role": "user", "content": "thanks"}]
    report = run_mutations(session, contract=contract, after=session, verify=True)
    assert report.baseline.passed and report.mutants
