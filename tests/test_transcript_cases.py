"""Every defect and repair rule (tests/cases/transcript/defects.yaml) in every format."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from frayproof_audit.transcript import RULES, IrreparableError, inspect, repair
from tests.helpers import REPO
from tests.transcript_formats import FORMATS, in_format, shape

CASES: list[dict[str, Any]] = yaml.safe_load(
    (REPO / "tests" / "cases" / "transcript" / "defects.yaml").read_text(encoding="utf-8"))


def test_every_rule_has_a_case() -> None:
    named = {name for case in CASES for name in case["defects"]}
    assert named | {"misplaced_call", "invalid_role"} == set(RULES)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any], fmt: str) -> None:
    snapshot = in_format(case["transcript"], fmt)
    if snapshot is None:
        pytest.skip(f"{fmt} cannot say this transcript")
    original = copy.deepcopy(snapshot)
    found = inspect(snapshot, fmt)
    assert [d.name for d in found.defects] == case["defects"]
    wasteful_only = all(RULES[name].severity == "WASTEFUL" for name in case["defects"])
    assert found.valid == case.get("valid", {}).get(fmt, wasteful_only)
    if case.get("irreparable"):
        assert not found.repairable
        with pytest.raises(IrreparableError):
            repair(snapshot, fmt)
        return
    assert found.repairable
    repaired = repair(snapshot, fmt)
    assert snapshot == original
    assert repaired.after.defects == ()
    assert shape(repaired.transcript, fmt) == case["repaired"]
    assert len(repaired.changes) == (len(case["defects"]) if case["defects"] else 0)
    assert repair(repaired.transcript, fmt).changes == ()


def test_sites_are_the_formats_own_coordinates() -> None:
    chat = next(case for case in CASES if case["id"] == "everything_at_once")["transcript"]
    sites = {fmt: [d.site for d in inspect(in_format(chat, fmt), fmt).defects] for fmt in FORMATS}
    assert sites == {
        "openai": ["transcript[1]", "transcript[2]", "transcript[3].tool_calls[2]",
                   "transcript[5]", "transcript[6]"],
        "anthropic": ["transcript[1].content[0]", "transcript[1].content[1]",
                      "transcript[2].content[2]", "transcript[3].content[1]", "transcript[4]"],
        "openai-responses": ["transcript[1]", "transcript[2]", "transcript[5]", "transcript[7]",
                             "transcript[8]"],
        "otel-genai": ["transcript[1].parts[0]", "transcript[1].parts[1]",
                       "transcript[2].parts[2]", "transcript[3].parts[1]", "transcript[4]"],
    }


def test_defects_carry_the_provider_condition_codes() -> None:
    chat = next(case for case in CASES if case["id"] == "everything_at_once")["transcript"]
    codes = {fmt: [d.codes for d in inspect(in_format(chat, fmt), fmt).defects] for fmt in FORMATS}
    assert codes["openai"] == [("PV-CHAT-TOOL-ORPHAN",), ("PV-CHAT-TOOL-ORPHAN",
                               "PV-CHAT-CALL-UNANSWERED"), ("PV-CHAT-CALL-UNANSWERED",), (), ()]
    assert codes["anthropic"] == [("PV-ANTH-RESULT-ORPHAN",), ("PV-ANTH-RESULT-ORPHAN",
                                  "PV-ANTH-USE-UNANSWERED"), ("PV-ANTH-USE-UNANSWERED",), (), ()]
    assert codes["openai-responses"][2] == ("PV-RESP-CALL-UNANSWERED",)


def test_a_provider_rule_no_neutral_defect_explains_is_a_defect_of_its_own() -> None:
    # The turn used thinking, but its final assistant message does not start with it.
    turn = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "two steps", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "f", "input": {}}]}]
    found = inspect(turn, "anthropic")
    assert [(d.name, d.severity, d.repairable) for d in found.defects] == [
        ("dangling_call", "FATAL", True), ("PV-ANTH-THINKING-FIRST", "FATAL", False)]
    with pytest.raises(IrreparableError, match="PV-ANTH-THINKING-FIRST"):
        repair(turn, "anthropic")


def test_a_moved_result_leaves_the_rest_of_its_message_where_it_was() -> None:
    otel = [{"role": "user", "parts": [{"type": "text", "content": "q"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "a", "name": "f"},
                                            {"type": "tool_call", "id": "b", "name": "f"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "response": "A"}]},
            {"role": "user", "parts": [{"type": "text", "content": "hi"},
                                       {"type": "tool_call_response", "id": "b", "response": "B"}]}]
    repaired = repair(otel, "otel-genai")
    assert repaired.transcript[2:] == [
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "response": "A"},
                                   {"type": "tool_call_response", "id": "b", "response": "B"}]},
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    assert repaired.after.defects == ()
