"""`provider_validity` (openai-chat) on mutants from the batches an edit can change
(`mutate.chat_batches`), against a full recheck of every mutant: `verify=True` raises on any
difference. The outputs are built to reach what generated sessions rarely do: a tool run left
at the very start, a pending call that stops being the tail, results that lose their call."""

from __future__ import annotations

from typing import Any

import pytest

from frayproof_audit.engine import check_loaded
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.snapshot import load_list
from tests.helpers import make_contract


def _calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}
        for call_id in ids]}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": f"result of {call_id}"}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


OUTPUTS = {
    # starts with a batch: dropping its head leaves a headless run at position 0
    "leading batch": [_calls("a"), _tool("a"), _text("user", "next"), _calls("b", "c"), _tool("c"),
                      _tool("b"), _text("assistant", "done"), _text("user", "last")],
    # ends with a pending call: moving or dropping around it changes the tail
    "pending tail": [_text("system", "agent"), _text("user", "go"), _calls("a", "b"), _tool("a"),
                     _tool("b"), _text("assistant", "read both"), _text("user", "more"), _calls("c")],
    # long runs: a swap or a move inside a batch
    "long batches": [_text("user", "go"), _calls("a", "b", "c"), _tool("b"), _tool("a"), _tool("c"),
                     _text("user", "again"), _calls("d"), _tool("d"), _text("assistant", "ok"),
                     _text("user", "thanks")],
}
CONTRACTS = {
    "pending allowed": {"version": 1, "checks": {
        "provider_validity": {"allow_trailing_pending_call": True},
        "tool_pairs": {"allow_trailing_pending_call": True}}},
    "strict": {"version": 1, "checks": {"provider_validity": True}},
    "chat named": {"version": 1, "checks": {
        "provider_validity": {"profile": "openai-chat", "allow_trailing_pending_call": True},
        "tool_pairs": False, "unique_tool_ids": False, "structure": False}},
}


COMBINATIONS = [(output, contract) for output in sorted(OUTPUTS) for contract in sorted(CONTRACTS)
                # a pending call fails the strict contract: no mutants are made of a failing pair
                if (output, contract) != ("pending tail", "strict")]


@pytest.mark.parametrize(("output_name", "contract_name"), COMBINATIONS)
def test_every_operator_agrees_with_a_full_recheck(output_name: str, contract_name: str) -> None:
    contract = make_contract(CONTRACTS[contract_name])
    messages = OUTPUTS[output_name]
    before, after = load_list(messages), load_list(messages)
    assert check_loaded(before, after, contract).passed
    report = mutate_pair(before, after, contract, sorted(OPERATORS), verify=True)
    assert report.mutants


def test_the_tail_and_headless_cases_are_reached_and_caught() -> None:
    contract = make_contract(CONTRACTS["chat named"])
    caught: set[str] = set()
    for messages in OUTPUTS.values():
        before, after = load_list(messages), load_list(messages)
        report = mutate_pair(before, after, contract, verify=True)
        caught |= {mutant.description for mutant in report.mutants if "provider_validity" in mutant.caught_by}
    assert caught  # provider_validity catches mutants, and the fast path agreed on each
