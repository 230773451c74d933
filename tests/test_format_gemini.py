"""The `gemini` format: reading Gemini Contents, sites, input errors, and equivalence.

Generated Chat Completions sessions (`sessiongen`) written as Contents
(`sessiongen.gemini_wire`) must get the verdicts and mutant statuses of the same conversation
read as `openai` (its `twin`: the details Gemini settles, settled), with findings pointing at
the Contents and mutant sites at their parts. The `gemini` provider profile judges the format
by default.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from frayproof_audit import InputError, check, validate
from frayproof_audit.contract import parse_contract
from frayproof_audit.mutate import run_mutations
from frayproof_audit.snapshot import load_file, load_list
from sessiongen import small, strategies
from sessiongen.gemini_wire import NotExpressible, Place, expected_site, index_map, to_gemini, twin
from sessiongen.source import RandomSource
from tests.helpers import EXAMPLE_CONTRACT, history, make_contract

GEMINI = "gemini"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": words}]}


def calls(*ids: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"id": i, "name": "read", "args": {"path": "a"}}}
                                       for i in ids]}


def responses(*ids: str) -> dict[str, Any]:
    return {"role": "user", "parts": [
        {"functionResponse": {"id": i, "name": "read", "response": {"output": "ok"}}} for i in ids]}


ASK = text("user", "what is in a")

CASES: dict[str, tuple[list[Any], list[tuple[str, int | None]]]] = {
    # name: (after, [(code, Content index)])
    "answered": ([ASK, calls("c1", "c2"), responses("c2", "c1"), text("model", "done")], []),
    "orphan-response": ([ASK, calls("c1"), responses("c1", "zz")], [("TP-ORPHAN", 2)]),
    "unanswered-call": ([ASK, calls("c1", "c2"), responses("c1"), text("user", "go on")],
                        [("TP-UNANSWERED", 1)]),
    "thought-alone-is-content": (
        [ASK, {"role": "model", "parts": [{"text": "hmm", "thought": True}]}], []),
    "no-parts-is-an-empty-message": ([ASK, {"role": "model", "parts": []}],
                                     [("ST-EMPTY-ASSISTANT", 1)]),
    "a-null-response-is-no-content": (
        [ASK, calls("c1"), {"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "read", "response": None}}]}],
        [("ST-TOOL-NOCONTENT", 2)]),
}


@pytest.mark.parametrize("name", CASES)
def test_cases(name: str) -> None:
    after, expected = CASES[name]
    report = validate(after, input_format=GEMINI)
    assert [(v.code, v.message_index) for v in report.violations] == expected


def test_neutral_mapping_and_sites() -> None:
    after = [ASK,
             {"role": "model", "turnId": "t1", "parts": [
                 {"text": "reading"},
                 {"text": "why", "thought": True, "thoughtSignature": "sig"},
                 {"functionCall": {"id": "c1", "name": "read", "args": {"b": 1, "a": [2]}},
                  "thoughtSignature": "s2"},
                 {"inlineData": {"mimeType": "image/png", "data": "AA=="}},
                 {"functionCall": {"id": "c2", "name": "list"}}]},
             {"role": "user", "parts": [
                 {"functionResponse": {"id": "c1", "name": "read", "response": {"output": "x"}}},
                 {"functionResponse": {"id": "c2", "name": "list", "response": {"files": [1]}}},
                 {"text": "and now?"}]}]
    loaded = load_list(after, GEMINI)
    assert loaded.wire[1] == {
        "turnId": "t1", "role": "assistant",
        "content": [{"type": "text", "text": "reading"},
                    {"type": "thought", "text": "why", "thought": True, "thoughtSignature": "sig"},
                    {"type": "inlineData", "inlineData": {"mimeType": "image/png", "data": "AA=="}}],
        "tool_calls": [
            {"thoughtSignature": "s2", "id": "c1", "type": "function",
             "function": {"name": "read", "arguments": '{"b":1,"a":[2]}'}},
            {"id": "c2", "type": "function", "function": {"name": "list", "arguments": ""}}]}
    assert loaded.wire[2:] == [
        {"role": "tool", "name": "read", "tool_call_id": "c1", "content": "x"},
        {"role": "tool", "name": "list", "tool_call_id": "c2", "content": '{"files":[1]}'},
        {"role": "user", "content": "and now?"}]
    assert [loaded.site("after", i) for i in range(len(loaded))] == [
        "after[0]", "after[1]", "after[2].parts[0]", "after[2].parts[1]", "after[2]"]
    assert [loaded.site("after", 1, k) for k in range(2)] == ["after[1].parts[2]", "after[1].parts[4]"]
    assert loaded.site("after", 1, 0, "two words") == 'after[1].parts[2].functionCall.args["two words"]'
    assert loaded.span_site("after", 2, 4) == "after[2].parts[0:2]"
    assert loaded.span_site("after", 0, 3) == "after[0:3]"
    assert [loaded.wire_index(i) for i in range(len(loaded))] == [0, 1, 2, 2, 2]


def test_content_metadata_is_copied_into_each_message_read_from_it() -> None:
    loaded = load_list([ASK, calls("c1"), {"role": "user", "meta": {"n": 1}, "parts": [
        *responses("c1")["parts"], {"text": "next"}]}], GEMINI)
    first, second = loaded.wire[2], loaded.wire[3]
    assert first["meta"] == second["meta"] == {"n": 1}
    assert first["meta"] is not second["meta"]


@pytest.mark.parametrize("after, message", [
    ([{"role": "user", "content": "hi"}], r"contents\[0\]\.parts must be an array of parts"),
    ([{"role": 3, "parts": []}], r"contents\[0\]\.role must be a string"),
    ([{"role": "user", "parts": ["x"]}], r"contents\[0\]\.parts\[0\] must be an object"),
    ([{"role": "user", "parts": [{"text": 1}]}], r"contents\[0\]\.parts\[0\]\.text must be a string"),
    ([{"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}],
     r"contents\[0\]\.parts\[0\]\.functionCall\.args must be an object or null"),
    ([{"role": "model", "parts": [{"functionCall": {"name": 2}}]}],
     r"contents\[0\]\.parts\[0\]\.functionCall\.name must be a string"),
    ([{"role": "model", "parts": [{"functionCall": "f"}]}],
     r"contents\[0\]\.parts\[0\]\.functionCall must be an object"),
    ([{"role": "user", "parts": [{"functionResponse": {"id": 7, "name": "f"}}]}],
     r"contents\[0\]\.parts\[0\]\.functionResponse\.id must be a string or null"),
    ({"contents": []}, "A snapshot must be an array"),
])
def test_input_errors_name_the_part(after: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate(after, input_format=GEMINI)


def test_load_copy_detaches_and_files_load(tmp_path: Path) -> None:
    after = [ASK, calls("c1"), responses("c1")]
    loaded = load_list(after, GEMINI)
    loaded.wire[1]["tool_calls"][0]["function"]["name"] = "changed"
    assert after[1]["parts"][0]["functionCall"]["name"] == "read"
    path = tmp_path / "contents.json"
    path.write_text(json.dumps(after), encoding="utf-8")
    assert load_file(path, GEMINI).wire == load_list(after, GEMINI).wire


def test_the_gemini_profile_judges_the_format_by_default() -> None:
    contract = parse_contract("format: gemini\nchecks: {provider_validity: true}\n")
    after = [ASK, calls("c1", "c2"), responses("c1"), text("model", "done")]
    codes = [(v.code, v.message_index) for v in check(after, after, contract).violations]
    assert ("PV-GEM-RESPONSE-COUNT", 1) in codes
    assert not any(code.startswith(("PV-CHAT", "PV-ANTH", "PV-RESP")) for code, _ in codes)


def test_auto_detects_gemini_contents() -> None:
    after = [ASK, calls("c1"), responses("c1")]
    assert validate(after, input_format="auto").violations == validate(after, input_format=GEMINI).violations
    from frayproof_audit.formats import detect
    assert detect(after)[0].name == GEMINI
    assert detect([{"role": "user", "parts": []}])[1] is False  # an empty Content says nothing


# --- the same conversation in both formats ---------------------------------------------------

def _convert(messages: list[Any]) -> tuple[list[Any], list[Place]]:
    try:
        return to_gemini(messages)
    except NotExpressible:
        assume(False)
        raise  # unreachable: assume(False) raises


def _same_verdicts(before: list[Any], after: list[Any], contract: Any) -> None:
    wire_before, before_places = _convert(before)
    wire_after, after_places = _convert(after)
    try:
        flat = check(twin(before), twin(after), contract)
    except InputError:
        with pytest.raises(InputError):
            check(wire_before, wire_after, contract, input_format=GEMINI)
        return
    gemini = check(wire_before, wire_after, contract, input_format=GEMINI)
    assert [(v.code, v.check, v.snapshot, v.severity, v.tool_call_id, v.pin, v.rule)
            for v in gemini.violations] == [
        (v.code, v.check, v.snapshot, v.severity, v.tool_call_id, v.pin, v.rule)
        for v in flat.violations]
    index = {"before": index_map(before_places), "after": index_map(after_places)}
    assert [v.message_index for v in gemini.violations] == [
        None if v.message_index is None else index[v.snapshot][v.message_index]
        for v in flat.violations]


@SETTINGS
@given(strategies.mutation_cases())
def test_generated_sessions_get_the_same_verdicts(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    _same_verdicts(before, after, make_contract(contract_yaml))


def test_the_neutral_reading_is_the_twin() -> None:
    src = RandomSource(11)
    compared = 0
    for _ in range(60):
        before, _, _ = small.mutation_case(src)
        try:
            contents, _ = to_gemini(before)
        except NotExpressible:
            continue
        neutral = load_list(contents, GEMINI)
        flat = load_list(twin(before), "openai")
        assert [neutral.identity(i) for i in range(len(neutral))] == [
            flat.identity(i) for i in range(len(flat))]
        compared += 1
    assert compared > 10


def _mutation_cases() -> list[small.MutationCase]:
    src = RandomSource(5)
    found: list[small.MutationCase] = []
    while len(found) < 10:
        case = small.clean_mutation_case(src) if len(found) < 5 else small.mutation_case(src)
        try:
            to_gemini(case[0]), to_gemini(case[1])
        except NotExpressible:
            continue
        found.append(case)
    return found


@pytest.mark.parametrize("case", _mutation_cases())
@pytest.mark.parametrize("verify", [False, True], ids=["fast", "verify"])
def test_mutant_statuses_and_sites_match_openai(case: small.MutationCase, verify: bool) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    flat = run_mutations(twin(before), after=twin(after), contract=contract, verify=verify)
    wire_after, places = to_gemini(after)
    gemini = run_mutations(to_gemini(before)[0], after=wire_after, contract=contract,
                           input_format=GEMINI, verify=verify)
    assert gemini.baseline.passed == flat.baseline.passed
    assert [(m.operator, m.description, m.status, m.caught_by) for m in gemini.mutants] == [
        (m.operator, m.description, m.status, m.caught_by) for m in flat.mutants]
    for mine, theirs in zip(gemini.mutants, flat.mutants, strict=True):
        assert mine.sites == tuple(expected_site(site, places) for site in theirs.sites)


def test_mutant_sites_name_parts() -> None:
    before, _ = to_gemini(history(2))
    found = run_mutations(before, after=before, contract=EXAMPLE_CONTRACT, input_format=GEMINI)
    sites = {site for mutant in found.mutants for site in mutant.sites}
    assert "after[2].parts[0]" in sites  # the first call, in its model Content
    assert "after[3].parts[0]" in sites  # its response
