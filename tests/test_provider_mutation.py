"""The reasoning operators on real wire formats: sites in the user's coordinates, caught by
provider validity, surviving without it, and absent from data without such content."""

from __future__ import annotations

from typing import Any

import pytest

from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.mutate.report import CAUGHT, SURVIVED, MutationReport
from frayproof_audit.snapshot import load_source
from tests.helpers import call, make_contract, result, user

ASK = {"role": "user", "content": "Which port?"}
RS = {"type": "reasoning", "id": "rs_1", "summary": []}
FC = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "port = 80"}
RS2 = {"type": "reasoning", "id": "rs_2", "summary": []}
SEARCH = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
DONE = {"type": "message", "id": "msg_2", "role": "assistant", "content": "Port 80."}
ITEMS = [ASK, RS, FC, OUT, RS2, SEARCH, DONE]

THOUGHT = {"type": "thinking", "thinking": "The port is in app.toml.", "signature": "sig-1"}
REDACTED = {"type": "redacted_thinking", "data": "b3BhcXVl"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "app.toml"}}
ANSWER = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": "port = 80"}]}
MESSAGES = [ASK, {"role": "assistant", "content": [REDACTED, THOUGHT, USE]}, ANSWER]


def _run(snapshot: Any, fmt: str, checks: dict[str, Any], operator: str) -> MutationReport:
    contract = make_contract({"format": fmt, "checks": checks})
    before, after = load_source(snapshot, fmt), load_source(snapshot, fmt)
    report = mutate_pair(before, after, contract, [operator], verify=True)
    assert report.baseline.passed
    return report


def _entries(report: MutationReport) -> list[tuple[str, tuple[str, ...], str]]:
    return [(m.status, m.sites, m.reason) for m in report.mutants]


def test_drop_reasoning_item_is_caught_by_the_responses_reasoning_rule() -> None:
    report = _run(ITEMS, "openai-responses", {"provider_validity": True}, "drop_reasoning_item")
    assert [(m.status, m.sites, m.caught_by) for m in report.mutants] == [
        (CAUGHT, ("after[1]",), ("provider_validity",)),
        (CAUGHT, ("after[4]",), ("provider_validity",)),
    ]
    codes = [[v.code for v in m.report.violations] for m in report.mutants if m.report]
    assert codes == [["PV-RESP-REASONING-MISSING"], ["PV-RESP-REASONING-MISSING"]]
    assert "'fc_1' of type 'function_call'" in report.mutants[0].report.violations[0].message  # type: ignore[union-attr]
    assert "'ws_1' of type 'web_search_call'" in report.mutants[1].report.violations[0].message  # type: ignore[union-attr]


def test_drop_reasoning_item_survives_without_provider_validity() -> None:
    report = _run(ITEMS, "openai-responses", {}, "drop_reasoning_item")
    hint = get_operator("drop_reasoning_item").survivor_hint
    assert _entries(report) == [(SURVIVED, ("after[1]",), hint), (SURVIVED, ("after[4]",), hint)]
    assert "PV-RESP-REASONING-MISSING" in hint


def test_alter_thinking_block_is_caught_by_the_byte_for_byte_rule() -> None:
    report = _run({"system": "Be brief.", "messages": MESSAGES}, "anthropic",
                  {"provider_validity": True}, "alter_thinking_block")
    assert [(m.status, m.sites) for m in report.mutants] == [
        (CAUGHT, ("after[1].content[0]",)), (CAUGHT, ("after[1].content[1]",))]
    for mutant in report.mutants:
        assert mutant.report is not None
        assert [v.code for v in mutant.report.violations] == ["PV-ANTH-THINKING-MODIFIED"]


def test_alter_thinking_block_survives_without_provider_validity() -> None:
    report = _run(MESSAGES, "anthropic", {}, "alter_thinking_block")
    hint = get_operator("alter_thinking_block").survivor_hint
    assert [m.status for m in report.mutants] == [SURVIVED, SURVIVED]
    assert all(m.reason == hint for m in report.mutants)
    assert "PV-ANTH-THINKING-MODIFIED" in hint


def test_dropping_the_final_thinking_is_caught_by_the_thinking_first_rule() -> None:
    """Not an operator's fault, but the rule the reasoning operators' docs promise."""
    contract = make_contract({"format": "anthropic", "checks": {"provider_validity": True}})
    before = load_source(MESSAGES, "anthropic")
    after = load_source([ASK, {"role": "assistant", "content": [USE]}, ANSWER], "anthropic")
    from frayproof_audit.engine import check_loaded
    assert [v.code for v in check_loaded(before, after, contract).violations] == [
        "PV-ANTH-THINKING-FIRST"]


CHAT = [user(), call("a"), result("a"), {"role": "assistant", "content": "done"}]


@pytest.mark.parametrize(("operator", "fmt", "snapshot"), [
    ("drop_reasoning_item", "openai", CHAT),
    ("drop_reasoning_item", "anthropic", MESSAGES),
    ("alter_thinking_block", "openai", CHAT),
    ("alter_thinking_block", "openai-responses", ITEMS),
])
def test_no_entry_at_all_where_there_is_no_such_content(operator: str, fmt: str,
                                                         snapshot: Any) -> None:
    assert _run(snapshot, fmt, {"provider_validity": True}, operator).mutants == ()


def test_chat_runs_keep_exactly_their_entries() -> None:
    report = mutate_pair(load_source(CHAT, "openai"), load_source(CHAT, "openai"),
                         make_contract(None))
    assert report.mutants
    assert {m.operator for m in report.mutants}.isdisjoint(
        {"drop_reasoning_item", "alter_thinking_block"})


def test_a_mixed_corpus_audit_reports_provider_codes_and_reasoning_mutants(tmp_path: Any) -> None:
    """One run over Anthropic and Responses records: findings carry the PV codes, and the
    mutants table holds the reasoning operators' caught mutants."""
    import json

    from frayproof_audit.corpus import audit
    from frayproof_audit.corpus.dataset.table_reader import read_table

    broken = [ASK, {"role": "assistant", "content": [USE]}, ANSWER]
    records = [
        {"pair_id": "a-ok", "format": "anthropic", "before": MESSAGES, "after": MESSAGES},
        {"pair_id": "a-bad", "format": "anthropic", "before": MESSAGES, "after": broken},
        {"pair_id": "r-ok", "format": "openai-responses", "before": ITEMS, "after": ITEMS},
        {"pair_id": "c-ok", "before": CHAT, "after": CHAT},
    ]
    corpus = tmp_path / "pairs.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    contract = tmp_path / "contract.yaml"
    contract.write_text("checks:\n  provider_validity: true\n", encoding="utf-8")
    audit(str(corpus), str(contract), str(tmp_path / "out"), jobs=1, backend="threading",
          fail_on=())
    findings = read_table(tmp_path / "out", "findings").collect()
    assert sorted(zip(findings["pair_id"], findings["code"], strict=True)) == [
        ("a-bad", "PV-ANTH-THINKING-FIRST")]
    mutants = read_table(tmp_path / "out", "mutants").collect()
    ours = mutants.filter(mutants["operator"].is_in(["drop_reasoning_item", "alter_thinking_block"]))
    assert sorted(zip(ours["pair_id"], ours["operator"], ours["status"], strict=True)) == [
        ("a-ok", "alter_thinking_block", "caught"), ("a-ok", "alter_thinking_block", "caught"),
        ("r-ok", "drop_reasoning_item", "caught"), ("r-ok", "drop_reasoning_item", "caught")]
