"""The `openai-responses` format: Responses API items judged like the same chat session.

Cases in `tests/cases/formats/openai-responses.yaml` pin findings to item indices; the
properties convert generated `openai` sessions into items (`tests/responses_items.py`) and
demand the same verdicts and mutant statuses, with findings and sites in item coordinates.
"""

from __future__ import annotations

import json
from collections import UserList
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit import InputError, check, validate
from frayproof_audit.formats import get_format
from frayproof_audit.formats.responses import OPENAI_RESPONSES, ResponsesInputError
from frayproof_audit.mutate import run_mutations
from frayproof_audit.report import Report
from frayproof_audit.snapshot import load_source
from sessiongen import small, strategies
from tests.helpers import EXAMPLE_CONTRACT, history, make_contract, run_cli
from tests.responses_items import representable, to_items

FORMAT = "openai-responses"
CASES = yaml.safe_load(
    (Path(__file__).parent / "cases" / "formats" / "openai-responses.yaml").read_text("utf-8"))["cases"]


def _findings(report: Report) -> list[list[Any]]:
    return [[v.code, v.snapshot, v.message_index, v.tool_call_id] for v in report.violations]


def _run(case: dict[str, Any], after: Any, before: Any) -> Report:
    contract = make_contract(case.get("contract"))
    if before is None:
        return validate(after, contract, input_format=FORMAT)
    return check(before, after, contract, input_format=FORMAT)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any], tmp_path: Path) -> None:
    report = _run(case, case["after"], case.get("before"))
    assert _findings(report) == case["expect"]
    paths = []
    for name in ("after", "before"):
        if case.get(name) is None:
            paths.append(None)
            continue
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(case[name]), encoding="utf-8")
        paths.append(path)
    assert _findings(_run(case, paths[0], paths[1])) == case["expect"]  # files read the same


def test_the_format_is_registered_by_name() -> None:
    assert get_format(FORMAT) is OPENAI_RESPONSES
    assert make_contract(f"format: {FORMAT}\n").format == FORMAT


# --------------------------------------------------------------------------- neutral mapping

THOUGHT = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
SAID = {"type": "message", "role": "assistant", "content": "looking", "id": "msg_1"}
CALL_A = {"type": "function_call", "call_id": "a", "name": "read", "arguments": "{}", "id": "fc_a"}
CALL_B = {"type": "function_call", "call_id": "b", "name": "read", "arguments": '{"path": "x"}'}
ITEMS = [
    {"role": "user", "content": "go"},                                    # 0
    THOUGHT, SAID, CALL_A, CALL_B,                                        # 1-4: one turn
    {"type": "function_call_output", "call_id": "b", "output": "ok"},    # 5
    {"type": "function_call_output", "call_id": "a", "output": "ok"},    # 6
    {"type": "reasoning", "id": "rs_2", "summary": []},                   # 7: reasoning only
    {"type": "compaction", "encrypted_content": "c"},                     # 8
    THOUGHT, {"type": "message", "role": "assistant", "content": "done"},  # 9-10: one turn
]


def test_items_map_to_chat_shaped_neutral_messages() -> None:
    loaded = load_source(ITEMS, FORMAT)
    assert loaded.wire == [
        {"role": "user", "content": "go"},
        {"role": "assistant",
         "content": [THOUGHT, {"type": "output_text", "text": "looking"}], "item": {"id": "msg_1"},
         "tool_calls": [
             {"id": "a", "type": "function", "function": {"name": "read", "arguments": "{}"},
              "item": {"id": "fc_a"}},
             {"id": "b", "type": "function", "function": {"name": "read", "arguments": '{"path": "x"}'}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "b"},
        {"role": "tool", "content": "ok", "tool_call_id": "a"},
        {"role": "assistant", "content": [{"type": "reasoning", "id": "rs_2", "summary": []}]},
        {"role": "assistant", "content": [{"type": "compaction", "encrypted_content": "c"}]},
        {"role": "assistant", "content": [THOUGHT, {"type": "output_text", "text": "done"}]},
    ]
    assert [loaded.wire_index(i) for i in range(len(loaded))] == [0, 3, 5, 6, 7, 8, 10]


def test_sites_name_items_runs_and_calls_exactly() -> None:
    loaded = load_source(ITEMS, FORMAT)
    assert [loaded.site("after", i) for i in range(len(loaded))] == [
        "after[0]", "after[1:5]", "after[5]", "after[6]", "after[7]", "after[8]", "after[9:11]"]
    assert loaded.site("after", 1, 0) == "after[3]"
    assert loaded.site("after", 1, 1) == "after[4]"
    assert loaded.site("after", 1, 1, "path") == "after[4].arguments.path"
    assert loaded.site("after", 1, 1, "two words") == 'after[4].arguments["two words"]'
    assert loaded.span_site("after", 0, 2) == "after[0:5]"
    assert loaded.span_site("after", 4, 7) == "after[7:11]"


def test_a_call_without_a_message_is_its_own_site() -> None:
    loaded = load_source([{"role": "user", "content": "go"}, CALL_A, CALL_B], FORMAT)
    assert [loaded.site("after", 1, k) for k in (0, 1)] == ["after[1]", "after[2]"]
    assert loaded.site("after", 1) == "after[1:3]"
    single = load_source([CALL_A], FORMAT)
    assert (single.site("after", 0), single.site("after", 0, 0)) == ("after[0]", "after[0]")


def test_a_request_object_names_its_fields() -> None:
    request = {"model": "m", "instructions": "Be brief", "input": [{"role": "user", "content": "go"}]}
    loaded = load_source(request, FORMAT)
    assert loaded.wire[0] == {"role": "system", "content": "Be brief"}
    assert [loaded.site("after", i) for i in range(2)] == ["after.instructions", "after[0]"]
    assert [loaded.wire_index(i) for i in range(2)] == [None, 0]
    assert loaded.span_site("after", 0, 2) == "after.instructions, after[0:1]"
    text = load_source({"instructions": "Be brief", "input": "go"}, FORMAT)
    assert text.wire == [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "go"}]
    assert text.site("after", 1) == "after.input"
    assert text.span_site("after", 0, 2) == "after.instructions, after.input"


def test_identity_is_the_neutral_message() -> None:
    typed = load_source([{"type": "message", "role": "user", "content": "go"}], FORMAT)
    easy = load_source([{"role": "user", "content": "go"}], FORMAT)
    other = load_source([{"role": "user", "content": "go", "id": "msg_9"}], FORMAT)
    assert typed.identity(0) == easy.identity(0) != other.identity(0)
    moved = load_source([{**CALL_A, "status": "completed"}], FORMAT)
    assert moved.identity(0) != load_source([CALL_A], FORMAT).identity(0)


def test_load_copy_detaches_from_the_callers_items() -> None:
    items = UserList([{"role": "user", "content": "go"}, dict(THOUGHT), dict(SAID)])
    loaded = OPENAI_RESPONSES.load_copy(list(items))
    items[1]["summary"] = ["changed"]
    items[2]["content"] = "changed"
    assert loaded.wire[1]["content"] == [THOUGHT, {"type": "output_text", "text": "looking"}]


@pytest.mark.parametrize(("snapshot", "problem"), [
    ([{"role": "user", "content": "go"}, 7], "items[1] must be an object"),
    ([{"type": 3}], "items[0].type must be a string"),
    ([{"role": 1, "content": "x"}], "items[0].role must be a string"),
    ([{"role": "user", "content": 5}], "items[0].content must be a string, an array of objects, or null"),
    ([{"role": "user", "content": ["x"]}], r"items[0].content[0] must be an object"),
    ([{"role": "user", "content": [{"type": 1}]}], r"items[0].content[0].type must be a string"),
    ([{"role": "user", "content": "go"}, {**CALL_A, "call_id": 3}], "items[1].call_id must be a string"),
    ([{**CALL_A, "name": None}], "items[0].name must be a string"),
    ([{**CALL_A, "arguments": {"path": "x"}}], "items[0].arguments must be a string"),
    ([SAID, {**CALL_A, "call_id": 3}], "items[1].call_id must be a string"),
    ([{"type": "message", "role": "assistant", "content": 4}, CALL_A], "items[0].content must be"),
    ([{"type": "function_call_output", "call_id": 1, "output": "x"}],
     "items[0].call_id must be a string or null"),
    ([{"type": "function_call_output", "call_id": "a", "output": 1}], "items[0].output must be"),
    ({"input": [{"role": "user", "content": "go"}, {"type": None}]}, "input[1].type must be a string"),
    ({"instructions": ["x"], "input": []}, "request.instructions must be a string or null"),
    ({"instructions": "x"}, "request.input must be an item array or a string"),
    ([{"role": "user", "content": "go", "score": float("nan")}], "items[0] must contain only finite"),
])
def test_input_errors_name_the_item(snapshot: Any, problem: str) -> None:
    with pytest.raises(ResponsesInputError) as caught:
        validate(snapshot, input_format=FORMAT)
    assert problem in str(caught.value)
    assert isinstance(caught.value, InputError)


def test_a_snapshot_must_be_a_list_or_an_object() -> None:
    with pytest.raises(InputError, match="must be an array"):
        validate(3, input_format=FORMAT)


# --------------------------------------------------------------------------- equivalence

EQUIVALENCE = settings(max_examples=200, deadline=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@EQUIVALENCE
@given(strategies.mutation_cases(), st.booleans())
def test_checks_give_the_same_verdict_in_item_coordinates(
    case: tuple[Any, Any, str], reasoning: bool
) -> None:
    """Reasoning items in front of assistant turns change no verdict: they are part of the
    turn they precede, and a turn that says something says it with or without them."""
    before_chat, after_chat, contract_text = case
    before_chat, after_chat = representable(before_chat), representable(after_chat)
    assume(before_chat is not None and after_chat is not None)
    assert before_chat is not None and after_chat is not None
    contract = make_contract(contract_text)
    before = to_items(before_chat, reasoning=reasoning)
    after = to_items(after_chat, typed=False, reasoning=reasoning)
    flat = check(before_chat, after_chat, contract, input_format="openai")
    items = check(before.items, after.items, contract, input_format=FORMAT)
    assert [(v.code, v.snapshot, v.tool_call_id) for v in items.violations] == [
        (v.code, v.snapshot, v.tool_call_id) for v in flat.violations]
    written = {"before": before, "after": after}
    for mine, theirs in zip(items.violations, flat.violations, strict=True):
        index = theirs.message_index
        assert mine.message_index == (None if index is None else written[theirs.snapshot].anchor[index])


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(strategies.clean_mutation_cases() | strategies.mutation_cases())
def test_mutants_get_the_same_status_and_sites_in_item_coordinates(case: tuple[Any, Any, str]) -> None:
    before_chat, after_chat, contract_text = case
    before_chat, after_chat = representable(before_chat), representable(after_chat)
    assume(before_chat is not None and after_chat is not None)
    assert before_chat is not None and after_chat is not None
    contract = make_contract(contract_text)
    after = to_items(after_chat)
    flat = run_mutations(before_chat, after=after_chat, contract=contract, input_format="openai")
    items = run_mutations(to_items(before_chat).items, after=after.items, contract=contract,
                          input_format=FORMAT)
    assert [(m.operator, m.status, m.caught_by) for m in items.mutants] == [
        (m.operator, m.status, m.caught_by) for m in flat.mutants]
    for mine, theirs in zip(items.mutants, flat.mutants, strict=True):
        assert list(mine.sites) == [after.site(site) for site in theirs.sites]


SEEDED = [case for case in small.mutation_cases(10, 120)
          if representable(case[0]) is not None and representable(case[1]) is not None]


@pytest.mark.parametrize("verify", [False, True], ids=["fast", "verify"])
def test_seeded_mutation_runs_agree_with_openai(verify: bool) -> None:
    """A batch of larger noisy sessions, the reference path (`verify`) included."""
    for before_raw, after_raw, contract_text in SEEDED:
        before_chat, after_chat = representable(before_raw), representable(after_raw)
        assert before_chat is not None and after_chat is not None
        contract = make_contract(contract_text)
        after = to_items(after_chat)
        flat = run_mutations(before_chat, after=after_chat, contract=contract, verify=verify)
        items = run_mutations(to_items(before_chat).items, after=after.items, contract=contract,
                              input_format=FORMAT, verify=verify)
        assert [(m.operator, m.status, m.caught_by, [after.site(s) for s in m.sites])
                for m in flat.mutants] == [
            (m.operator, m.status, m.caught_by, list(m.sites)) for m in items.mutants]


def test_mutation_labels_item_sites_on_a_fixed_session() -> None:
    chat = history(2)
    written = to_items(chat)
    report = run_mutations(written.items, after=written.items, contract=EXAMPLE_CONTRACT,
                           input_format=FORMAT)
    sites = {site for mutant in report.mutants for site in mutant.sites}
    # history(2): system, user, call c0, result c0, answer, user, call c1, ... → items 1:1 here
    assert {"after[2]", "after[3]", "after[1:5]"} <= sites
    assert not any(".tool_calls" in site for site in sites)


# --------------------------------------------------------------------------- corpus and CLI

def test_a_corpus_record_in_openai_responses_is_audited(tmp_path: Path) -> None:
    from frayproof_audit.corpus import audit, read_table

    before = to_items(history(2)).items
    after = [before[0], {"type": "function_call_output", "call_id": "gone", "output": "x"}, *before[5:]]
    request = {"model": "m", "instructions": "Never write to production", "input": before[1:]}
    records = [
        {"pair_id": "items", "format": FORMAT, "before": before, "after": after},
        {"pair_id": "request", "format": FORMAT, "before": request, "after": request},
    ]
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False, fail_on=("none",))
    pairs = {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}
    assert {name: (row["format"], row["status"]) for name, row in pairs.items()} == {
        "items": (FORMAT, "fail"), "request": (FORMAT, "pass")}
    findings = read_table(tmp_path / "out", "findings").collect().to_dicts()
    assert [(row["pair_id"], row["code"], row["message_index"]) for row in findings] == [
        ("items", "TP-ORPHAN", 1)]


def test_cli_reads_items_with_input_format(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"role": "user", "content": "go"}, CALL_A]), encoding="utf-8")
    out = run_cli("validate", "--snapshot", path, "--input-format", FORMAT, expect=1)
    assert "TP-UNANSWERED" in out.stdout
