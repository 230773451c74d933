"""Block edits (`drop_reasoning_item`, `alter_thinking_block`) declare their effect
(`Effects.block_edited`), so the evaluator's lemmas judge them instead of a full recheck of every
check; here every operator runs in verify mode (each mutant also rechecked in full, any
difference raises) on outputs built to reach what matters for such an edit: an assistant
message whose only content was the dropped item (structure's empty-assistant rule), a thinking
block in a pinned or retained message, reasoning leading a call turn."""

from __future__ import annotations

from typing import Any

import pytest

from frayproof_audit.engine import check_loaded
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.edits import DropBlock, ReplaceBlock
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.recheck.mutant import Effects
from frayproof_audit.snapshot import load_list
from tests.helpers import make_contract


def _reasoning(item_id: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": []}


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": f"sig-{text}"}


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}


OUTPUTS = {
    # dropping rs_2 leaves an assistant message whose only text is blank: empty for structure
    "reasoning then blank text": [
        {"role": "system", "content": "agent"}, {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_reasoning("rs_1")], "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "read"},
        {"role": "assistant", "content": [_reasoning("rs_2"), {"type": "text", "text": "  "}]},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": [_reasoning("rs_3"), {"type": "text", "text": "done"}]}],
    # thinking blocks in the latest assistant message (altered) and earlier ones
    "thinking turns": [
        {"role": "system", "content": "agent"}, {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_thinking("plan")], "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "read"},
        {"role": "assistant", "content": [_thinking("sum up"), {"type": "text", "text": "found it"}]},
        {"role": "user", "content": "fix"},
        {"role": "assistant", "content": [_thinking("fix"), {"type": "text", "text": "fixed"}],
         "tool_calls": [_call("b")]},
        {"role": "tool", "tool_call_id": "b", "content": "ok"}],
}
CONTRACTS = {
    "default": {"version": 1},
    "retained exactly": {"version": 1, "pins": [{"name": "system", "role": "system"}],
                         "retain": {"latest_user_message": "exact", "recent_exchanges": 2,
                                    "tool_results": "complete"},
                         "checks": {"tool_pairs": {"allow_trailing_pending_call": True}}},
    "every check": {"version": 1, "checks": {
        "tool_call_integrity": True, "provider_validity": {"allow_trailing_pending_call": True},
        "tool_pairs": {"allow_trailing_pending_call": True}}},
    "responses": {"version": 1, "checks": {"provider_validity": {"profile": "openai-responses"}}},
    "anthropic": {"version": 1, "checks": {"provider_validity": {"profile": "anthropic"}}},
}


def test_block_edits_declare_their_effect() -> None:
    assert DropBlock(3, 0, False).effects() == Effects(block_edited=(3,))
    assert DropBlock(3, 0, True).effects() == Effects(deleted=(3,))
    assert ReplaceBlock(3, 1, {"type": "thinking"}).effects() == Effects(block_edited=(3,))
    assert Effects(block_edited=(3,)).declared and Effects(block_edited=(3,)).rewritten == (3,)


@pytest.mark.parametrize("contract_name", sorted(CONTRACTS))
@pytest.mark.parametrize("output_name", sorted(OUTPUTS))
def test_every_operator_agrees_with_a_full_recheck(output_name: str, contract_name: str) -> None:
    contract = make_contract(CONTRACTS[contract_name])
    messages = OUTPUTS[output_name]
    before, after = load_list(messages), load_list(messages)
    assert check_loaded(before, after, contract).passed
    report = mutate_pair(before, after, contract, sorted(OPERATORS), verify=True)
    assert {"drop_reasoning_item", "alter_thinking_block"} & {m.operator for m in report.mutants}


def test_dropping_the_only_content_is_caught_as_an_empty_assistant() -> None:
    """The edit whose lemma has to look: rs_2 gone, the message's blank text says nothing."""
    contract = make_contract(CONTRACTS["default"])
    messages = OUTPUTS["reasoning then blank text"]
    report = mutate_pair(load_list(messages), load_list(messages), contract, ["drop_reasoning_item"],
                         verify=True)
    codes = {site: {v.code for v in m.report.violations} for m in report.mutants if m.report
             for site in m.sites}
    assert "ST-EMPTY-ASSISTANT" in codes["after[4].content[0]"]
    assert not codes["after[6].content[0]"]  # "done" is still said
