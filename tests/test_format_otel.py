"""The `otel-genai` format: reading OTel GenAI ChatMessages, sites, notes, and equivalence.

Generated Chat Completions sessions (`sessiongen`) written as OTel ChatMessages
(`tests/otel_messages.py`) must get the verdicts and mutant statuses of the same conversation
read as `openai`, with findings pointing at the ChatMessages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from frayproof_audit import InputError, check, validate
from frayproof_audit.formats import get_format
from frayproof_audit.mutate import run_mutations
from frayproof_audit.snapshot import load_file, load_list
from sessiongen import small, strategies
from sessiongen.source import RandomSource
from tests.helpers import EXAMPLE_CONTRACT, history, make_contract
from tests.otel_messages import to_otel, twin, wire_index

OTEL = "otel-genai"


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def calls(*ids: str, **part: Any) -> dict[str, Any]:
    return {"role": "assistant",
            "parts": [{"type": "tool_call", "id": i, "name": "read", "arguments": {"path": "a"},
                       **part} for i in ids]}


def response(call_id: str, role: str = "tool", key: str = "response") -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "tool_call_response", "id": call_id, key: "ok"}]}


ASK = text("user", "what is in a")

CASES: dict[str, tuple[list[Any], list[tuple[str, str, int | None]]]] = {
    # name: (after, [(code, severity, wire message index)])
    "answered": ([ASK, calls("c1"), response("c1")], []),
    "orphan-response": ([ASK, calls("c1"), response("c1"), response("zz")],
                        [("TP-ORPHAN", "error", 3)]),
    "unanswered-call": ([ASK, calls("c1", "c2"), response("c1"), text("user", "go on")],
                        [("TP-UNANSWERED", "error", 1)]),
    "orphan-inside-a-grouped-message": (
        [ASK, calls("c1"), {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "ok"},
            {"type": "tool_call_response", "id": "zz", "response": "ok"}]}],
        [("TP-ORPHAN", "error", 2)]),
    "response-in-a-user-message": (
        [ASK, calls("c1"), {"role": "user", "parts": [
            {"type": "tool_call_response", "id": "c1", "response": {"lines": 3}},
            {"type": "text", "content": "and now?"}]}], []),
    "result-and-spaced-id-pass-with-notes": (
        [ASK, calls(" c1"), response("c1 ", key="result")],
        [("FMT-NORMALIZED", "warning", None)] * 3),
    "reasoning-alone-is-content": (
        [ASK, {"role": "assistant", "parts": [{"type": "reasoning", "content": "hmm"}]}], []),
    "no-parts-is-an-empty-message": ([ASK, {"role": "assistant", "parts": []}],
                                     [("ST-EMPTY-ASSISTANT", "error", 1)]),
    "response-without-response": (
        [ASK, calls("c1"), {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1"}]}],
        [("ST-TOOL-NOCONTENT", "error", 2)]),
}


@pytest.mark.parametrize("name", CASES)
def test_cases(name: str, tmp_path: Path) -> None:
    after, expected = CASES[name]
    report = validate(after, input_format=OTEL)
    assert [(v.code, v.severity, v.message_index) for v in report.violations] == expected
    # The same list as a JSON string (a span attribute), in a file: the same findings.
    path = tmp_path / "after.json"
    path.write_text(json.dumps(json.dumps(after)), encoding="utf-8")
    assert validate(path, input_format=OTEL).violations == report.violations


def test_neutral_mapping_and_sites() -> None:
    after = [ASK,
             {"role": "assistant", "name": "agent", "finish_reason": "tool_calls", "parts": [
                 {"type": "text", "content": "reading"},
                 {"type": "reasoning", "content": "why"},
                 {"type": "tool_call", "id": "c1", "name": "read", "arguments": {"b": 1, "a": [2]}},
                 {"type": "tool_call", "id": "c2", "name": "read", "arguments": '{"a": 1}'},
                 {"type": "compaction", "id": "cmp", "content": "summary"},
                 {"type": "tool_call", "id": "c3", "name": "list"}]},
             {"role": "tool", "parts": [
                 {"type": "tool_call_response", "id": "c1", "response": "x"},
                 {"type": "tool_call_response", "id": "c2", "response": [1]},
                 {"type": "tool_call_response", "id": "c3", "response": None}]}]
    loaded = load_list(after, OTEL)
    assert loaded.wire[1] == {
        "name": "agent", "role": "assistant",
        "content": [{"type": "text", "text": "reading"}, {"type": "reasoning", "content": "why"},
                    {"type": "text", "text": "summary", "compaction": {"id": "cmp"}}],
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"a":[2],"b":1}'}},
            {"id": "c2", "type": "function", "function": {"name": "read", "arguments": '{"a": 1}'}},
            {"id": "c3", "type": "function", "function": {"name": "list"}}]}
    assert [m.get("content") for m in loaded.wire[2:]] == ["x", "[1]", None]
    assert loaded.notes == ()
    assert [loaded.site("after", i) for i in range(len(loaded))] == [
        "after[0]", "after[1]", "after[2].parts[0]", "after[2].parts[1]", "after[2].parts[2]"]
    assert [loaded.site("after", 1, k) for k in range(3)] == [
        "after[1].parts[2]", "after[1].parts[3]", "after[1].parts[5]"]
    assert loaded.site("after", 1, 0, "two words") == 'after[1].parts[2].arguments["two words"]'
    assert loaded.span_site("after", 2, 5) == "after[2].parts[0:3]"
    assert loaded.span_site("after", 0, 3) == "after[0:3]"


def test_notes_name_the_part() -> None:
    loaded = load_list([ASK, calls(" call_1"), response("call_1", key="result")], OTEL)
    assert loaded.notes == (
        "messages[1].parts[0]: id ' call_1' has surrounding whitespace (read as 'call_1')",
        "messages[2].parts[0]: 'result' read as 'response'")


@pytest.mark.parametrize("after, message", [
    ([{"role": "user", "content": "hi"}], r"messages\[0\]\.parts must be an array"),
    ([ASK, {"role": "assistant", "parts": [{"type": "text", "content": "x"}, {"type": "tool_call"}]}],
     r"messages\[1\]\.parts\[1\]\.name must be a string"),
    ([{"role": 3, "parts": []}], r"messages\[0\]\.role must be a string"),
    ([{"role": "user", "parts": [{"content": "x"}]}], r"messages\[0\]\.parts\[0\]\.type must be"),
    ([{"role": "user", "parts": [{"type": "text", "content": 1}]}],
     r"messages\[0\]\.parts\[0\]\.content must be a string"),
    ([calls("c")["parts"][0] | {"id": 1}], r"messages\[0\]\.parts must be"),
    ([{"role": "tool", "parts": [{"type": "tool_call_response", "id": 7}]}],
     r"messages\[0\]\.parts\[0\]\.id must be a string or null"),
    ("[1,", "not valid JSON"),
    ('{"role": "user"}', "must hold an array"),
])
def test_input_errors_name_the_part(after: Any, message: str) -> None:
    loaded_with = load_list if isinstance(after, list) else get_format(OTEL).load
    with pytest.raises(InputError, match=message):
        loaded_with(after, OTEL) if isinstance(after, list) else loaded_with(after)


def test_load_copy_detaches_and_load_file_takes_a_json_string(tmp_path: Path) -> None:
    after = [ASK, calls("c1"), response("c1")]
    loaded = load_list(after, OTEL)
    loaded.wire[1]["tool_calls"][0]["function"]["name"] = "changed"
    assert after[1]["parts"][0]["name"] == "read"
    path = tmp_path / "span.json"
    path.write_text(json.dumps(json.dumps(after)), encoding="utf-8")
    assert load_file(path, OTEL).wire == load_list(after, OTEL).wire


# --- the same conversation in both formats ---------------------------------------------------

def _same_verdicts(before: list[Any], after: list[Any], contract: Any, grouped: bool) -> None:
    flat = check(twin(before), twin(after), contract)
    otel = check(to_otel(before, grouped), to_otel(after, grouped), contract, input_format=OTEL)
    assert [(v.code, v.snapshot, v.severity) for v in otel.violations] == [
        (v.code, v.snapshot, v.severity) for v in flat.violations]
    index = {"before": wire_index(before, grouped), "after": wire_index(after, grouped)}
    assert [v.message_index for v in otel.violations] == [
        None if v.message_index is None else index[v.snapshot][v.message_index]
        for v in flat.violations]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.mutation_cases())
def test_generated_sessions_get_the_same_verdicts(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    for grouped in (False, True):
        _same_verdicts(before, after, contract, grouped)


def test_the_neutral_reading_is_the_twin() -> None:
    src = RandomSource(11)
    for _ in range(40):
        before, _, _ = small.mutation_case(src)
        for grouped in (False, True):
            neutral = load_list(to_otel(before, grouped), OTEL)
            flat = load_list(twin(before), "openai")
            assert [neutral.identity(i) for i in range(len(neutral))] == [
                flat.identity(i) for i in range(len(flat))]


def _mutation_cases() -> list[small.MutationCase]:
    src = RandomSource(5)
    return [*(small.clean_mutation_case(src) for _ in range(6)),
            *(small.mutation_case(src) for _ in range(6))]


@pytest.mark.parametrize("case", _mutation_cases())
@pytest.mark.parametrize("verify", [False, True], ids=["fast", "verify"])
def test_mutant_statuses_match_openai(case: small.MutationCase, verify: bool) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    flat = run_mutations(twin(before), after=twin(after), contract=contract, verify=verify)
    otel = run_mutations(to_otel(before, True), after=to_otel(after, True), contract=contract,
                         input_format=OTEL, verify=verify)
    assert [(m.operator, m.status, m.caught_by) for m in otel.mutants] == [
        (m.operator, m.status, m.caught_by) for m in flat.mutants]


def test_mutant_sites_name_parts() -> None:
    before = history(2)
    otel = run_mutations(to_otel(before, True), after=to_otel(before, True),
                         contract=EXAMPLE_CONTRACT, input_format=OTEL)
    sites = {site for mutant in otel.mutants for site in mutant.sites}
    assert "after[2].parts[0]" in sites  # the first call, in its assistant message
    assert "after[3].parts[0]" in sites  # its result


# --- corpus ------------------------------------------------------------------------------------

def test_a_corpus_record_with_json_string_snapshots_audits(tmp_path: Path) -> None:
    from frayproof_audit.corpus import audit, read_table

    before = [ASK, calls("c1"), response("c1"), text("user", "next")]
    after = [ASK, response("zz"), text("user", "next")]
    lenient = [ASK, calls(" c1"), response("c1", key="result"), text("user", "next")]
    records = [
        {"pair_id": "orphan", "format": OTEL, "before": json.dumps(before), "after": json.dumps(after)},
        {"pair_id": "lenient", "format": OTEL, "before": json.dumps(before), "after": lenient},
        {"pair_id": "broken", "format": OTEL, "before": "[{", "after": after},
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False, fail_on=("none",))
    pairs = {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}
    assert {name: (row["format"], row["status"]) for name, row in pairs.items()} == {
        "orphan": (OTEL, "fail"), "lenient": (OTEL, "pass"), "broken": (OTEL, "input_error")}
    assert "before: The messages string is not valid JSON" in pairs["broken"]["input_error"]
    findings = read_table(tmp_path / "out", "findings").collect()
    found = sorted(zip(findings["pair_id"], findings["code"], findings["message_index"], strict=True),
                   key=str)
    assert found == sorted([("lenient", "FMT-NORMALIZED", None), ("lenient", "FMT-NORMALIZED", None),
                            ("orphan", "TP-ORPHAN", 1)], key=str)
