"""The `anthropic` format: the neutral mapping, wire coordinates, input errors, and the
data-driven cases in `tests/cases/formats/anthropic/*.yaml` (Anthropic wire data verbatim)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit import InputError, check, validate
from frayproof_audit.formats import get_format
from frayproof_audit.formats.anthropic import ANTHROPIC, AnthropicInputError
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.mutate import run_mutations
from frayproof_audit.snapshot import load_source
from tests.helpers import EXAMPLE_CONTRACT, conditions, make_contract, run_cli, verdict

CASES_DIR = Path(__file__).parent / "cases" / "formats" / "anthropic"


def _cases() -> list[Any]:
    found = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        defaults = document.get("defaults", {})
        for case in document["cases"]:
            found.append(pytest.param({**defaults, **case}, id=f"{path.stem}:{case['id']}"))
    return found


@pytest.mark.parametrize("case", _cases())
def test_case(case: dict[str, Any], write_json: Callable[..., Path]) -> None:
    contract = make_contract(case.get("contract"))
    expected = [tuple(item) for item in case["expect"]]

    def run(before: Any, after: Any) -> Any:
        if case.get("before") is None:
            return validate(after, contract, input_format="anthropic")
        return check(before, after, contract, input_format="anthropic")

    report = run(case.get("before"), case["after"])
    assert [(*finding, code) for finding, code in zip(verdict(report), conditions(report),
                                                       strict=True)] == expected
    before = case.get("before")
    from_files = run(None if before is None else write_json(before), write_json(case["after"]))
    assert verdict(from_files) == verdict(report)


REQUEST = {
    "model": "claude-x",
    "max_tokens": 100,
    "system": [{"type": "text", "text": "Never write", "cache_control": {"type": "ephemeral"}},
               {"type": "text", "text": "Be brief"}],
    "messages": [
        {"role": "user", "content": "hi"},
        {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
         "stop_reason": "tool_use", "usage": {"input_tokens": 1},
         "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                     {"type": "text", "text": "calling"},
                     {"type": "tool_use", "id": "a", "name": "read",
                      "input": {"path": "x", "n": 1, "é": [1.5, None]}},
                     {"type": "tool_use", "id": "b", "name": "read", "input": {},
                      "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": [
            {"type": "text", "text": "also"},
            {"type": "tool_result", "tool_use_id": "a", "content": "ok", "is_error": False},
            {"type": "tool_result", "tool_use_id": "b",
             "content": [{"type": "text", "text": "x"}]}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "z"}]},
    ],
}


def test_the_neutral_model_of_a_saved_request() -> None:
    loaded = load_source(REQUEST, "anthropic")
    assert loaded.format.name == "anthropic"
    assert loaded.wire == [
        {"role": "system", "content": [REQUEST["system"][0]]},
        {"role": "system", "content": [REQUEST["system"][1]]},
        {"role": "user", "content": "hi"},
        {"id": "msg_1", "type": "message", "model": "claude-x", "stop_reason": "tool_use",
         "usage": {"input_tokens": 1}, "role": "assistant",
         "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                     {"type": "text", "text": "calling"}],
         "tool_calls": [
             {"id": "a", "type": "function",
              "function": {"name": "read", "arguments": '{"path":"x","n":1,"é":[1.5,null]}'}},
             {"cache_control": {"type": "ephemeral"}, "id": "b", "type": "function",
              "function": {"name": "read", "arguments": "{}"}}]},
        {"is_error": False, "role": "tool", "tool_call_id": "a", "content": "ok"},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "x"}]},
        {"role": "user", "content": [{"type": "text", "text": "also"}]},
        {"role": "tool", "tool_call_id": "z", "content": ""},
    ]
    assert [loaded.site("after", index) for index in range(len(loaded))] == [
        "after.system[0]", "after.system[1]", "after[0]", "after[1]", "after[2].content[1]",
        "after[2].content[2]", "after[2]", "after[3].content[0]"]
    assert loaded.site("after", 3, 1) == "after[1].content[3]"
    assert loaded.site("after", 3, 0, "path") == "after[1].content[2].input.path"
    assert loaded.site("after", 3, 0, "é") == 'after[1].content[2].input["é"]'
    assert loaded.span_site("after", 0, 3) == "after.system[0]..after[0]"
    assert loaded.span_site("after", 2, 4) == "after[0:2]"
    assert loaded.span_site("after", 4, 5) == "after[2].content[1]"
    assert [loaded.wire_index(i) for i in range(len(loaded))] == [None, None, 0, 1, 2, 2, 2, 3]
    # the latest user message is the text beside the results, not the results-only turn
    assert loaded.last_index("user") == 6
    # identities are openai's identities of the same neutral dicts: no private keys
    assert [loaded.identity(i) for i in range(len(loaded))] == [
        OPENAI.identity(message) for message in loaded.wire]


def test_a_plain_list_has_no_origins_and_a_string_system_one_field_origin() -> None:
    plain = load_source([{"role": "user", "content": "hi"}], "anthropic")
    assert plain.origins is None and plain.format is ANTHROPIC
    loaded = load_source({"system": "rules", "messages": []}, "anthropic")
    assert loaded.wire == [{"role": "system", "content": "rules"}]
    assert loaded.site("after", 0) == "after.system" and loaded.wire_index(0) is None


def test_load_copy_detaches_and_equals_load() -> None:
    copied = load_source(REQUEST, "anthropic")  # a caller's value: load_copy
    assert copied.wire == get_format("anthropic").load(json.loads(json.dumps(REQUEST))).wire
    copied.wire[3]["content"][0]["thinking"] = "changed"
    assert REQUEST["messages"][1]["content"][0]["thinking"] == "hm"  # type: ignore[index]
    as_tuple = load_source([{"role": "user", "content": ({"type": "text", "text": "t"},)}],
                           "anthropic")
    assert as_tuple.wire == [{"role": "user", "content": [{"type": "text", "text": "t"}]}]


def test_metadata_of_a_split_message_is_copied_not_shared() -> None:
    loaded = load_source([{"role": "user", "meta": {"k": [1]}, "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "ok"},
        {"type": "text", "text": "t"}]}], "anthropic")
    first, second = loaded.wire
    assert first["meta"] == second["meta"] and first["meta"] is not second["meta"]


@pytest.mark.parametrize("snapshot, message", [
    ("text", "A snapshot must be an array of messages"),
    ({"system": "s"}, "messages must be an array of message objects"),
    ({"system": 5, "messages": []}, "system must be a string or an array of text blocks"),
    ({"system": [{"type": "image"}], "messages": []}, r"system\[0\] must be a text block"),
    ([1], r"messages\[0\] must be an object"),
    ([{"role": 1, "content": "x"}], r"messages\[0\].role must be a string"),
    ([{"role": "tool", "content": "x"}], r"messages\[0\].role is 'tool', a Chat Completions role"),
    ([{"role": "assistant", "content": None, "tool_calls": []}],
     r"messages\[0\].tool_calls is a Chat Completions field, not Anthropic: read this snapshot as"
     " openai"),
    ([{"role": "user", "content": "x", "tool_call_id": "a"}], r"messages\[0\].tool_call_id is a"),
    ([{"role": "user", "content": 5}], r"messages\[0\].content must be a string, an array"),
    ([{"role": "user", "content": ["x"]}], r"messages\[0\].content\[0\] must be an object"),
    ([{"role": "user", "content": [{"type": 3}]}], r"messages\[0\].content\[0\].type must be a"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": 7, "name": "f", "input": {}}]}],
     r"messages\[0\].content\[0\].id must be a string"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": None}]}],
     r"messages\[0\].content\[0\].name must be a string"),
    ([{}, {}, {}, {"role": "user", "content": [{"type": "text", "text": "x"},
                                               {"type": "tool_result", "tool_use_id": 1}]}],
     r"messages\[3\].content\[1\].tool_use_id must be a string"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": 1}]}],
     r"messages\[0\].content\[0\].content must be a string, an array"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                    "content": ["x"]}]}],
     r"messages\[0\].content\[0\].content\[0\] must be an object"),
])
def test_input_errors_name_the_wire_field(snapshot: Any, message: str) -> None:
    with pytest.raises(AnthropicInputError, match=message):
        get_format("anthropic").load(snapshot)


def test_values_json_cannot_hold_are_named_where_they_sit() -> None:
    with pytest.raises(InputError, match=r"messages\[1\] must contain only finite JSON values"):
        validate([{"role": "user", "content": "x"}, {"role": "user", "content": float("nan")}],
                 input_format="anthropic")
    with pytest.raises(InputError, match=r"system must contain only finite JSON values"):
        validate({"system": [{"type": "text", "text": "x", "n": float("inf")}], "messages": []},
                 input_format="anthropic")


def test_null_chat_fields_are_ignored() -> None:
    loaded = load_source([{"role": "assistant", "content": "hi", "tool_calls": None,
                           "refusal": None}], "anthropic")
    assert loaded.wire == [{"role": "assistant", "content": "hi"}]


def test_mutant_sites_name_wire_blocks(tmp_path: Path) -> None:
    """Mutation edits the neutral model and labels the user's own blocks."""
    before = {"system": "Never write to production", "messages": [
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": [{"type": "text", "text": "reading"},
                                          {"type": "tool_use", "id": "c0", "name": "read",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c0",
                                      "content": "data"}]},
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": "latest request"}]}
    path = tmp_path / "before.json"
    path.write_text(json.dumps(before), encoding="utf-8")
    report = run_mutations(path, after=path, contract=EXAMPLE_CONTRACT, input_format="anthropic",
                           verify=True)
    sites = {site for mutant in report.mutants for site in mutant.sites}
    assert {"after[1].content[1]", "after[2].content[0]",
            "after[1].content[1]->after[2].content[0]"} <= sites
    assert any("after.system" in site for site in sites)


def test_cli_reads_anthropic_wire(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps(REQUEST), encoding="utf-8")
    out = run_cli("validate", "--snapshot", path, "--input-format", "anthropic", expect=1)
    assert "TP-ORPHAN" in out.stdout and "after[3]" in out.stdout
    contract = tmp_path / "c.yaml"
    contract.write_text("format: anthropic\n", encoding="utf-8")
    assert "TP-ORPHAN" in run_cli("validate", "--snapshot", path, "--contract", contract,
                                  expect=1).stdout
    bad = run_cli("validate", "--snapshot", path, "--input-format", "openai", expect=2)
    assert "array of message objects" in bad.stderr


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                     st.sampled_from(["tool_use", "tool_result", "text", "user", "assistant",
                                      "system", "tool", "thinking"]))
_KEYS = st.sampled_from(["role", "content", "type", "id", "name", "input", "tool_use_id",
                         "text", "system", "messages", "is_error", "tool_calls", "x"])
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(_JSON, max_size=5), st.dictionaries(_KEYS, _JSON, max_size=4)))
def test_any_json_loads_or_is_an_input_error(value: Any) -> None:
    """Hostile wire data (of the formats' containers): a `Loaded` whose neutral dicts are valid
    Chat messages, or an `InputError`, never a crash."""
    for name in ("anthropic", "auto"):
        try:
            loaded = get_format(name).load(json.loads(json.dumps(value)))
        except InputError:
            continue
        assert len(loaded.views) == len(loaded.wire)
        assert loaded.origins is None or len(loaded.origins) == len(loaded.wire)
        for index in range(len(loaded)):
            loaded.identity(index)
            loaded.site("after", index)
        validate(loaded.wire)  # the neutral dicts are valid Chat messages
