"""`provider_validity` (openai-chat, anthropic, gemini) on mutants from the batches an edit can
change (`checks.provider_validity`'s re-check), against a full recheck of every mutant: `verify=True` raises
on any difference. The outputs are built to reach what generated sessions rarely do: a tool run
left at the very start, a pending call that stops being the tail, results that lose their call,
instruction messages between a call turn and what it follows (Gemini's call position), and a
final turn that used thinking (Anthropic's thinking rules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from frayproof_audit.checks.base import CheckSettings
from frayproof_audit.checks.provider_validity import RULES, batch_rules
from frayproof_audit.engine import check_loaded, prepare_before
from frayproof_audit.formats import get_format
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.incremental import IncrementalEvaluator
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.providers import PROFILES, profile_for
from frayproof_audit.snapshot import load_list
from sessiongen.anthropic_wire import to_anthropic
from sessiongen.responses_items import representable, to_items
from tests.helpers import make_contract


def _calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}
        for call_id in ids]}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": f"result of {call_id}"}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


def _thinking(text: str, *ids: str) -> dict[str, Any]:
    """An assistant message that starts with a thinking block, with calls `ids`."""
    return {**_calls(*ids), "content": [{"type": "thinking", "thinking": text, "signature": f"sig-{text}"},
                                        {"type": "text", "text": f"about {text}"}]}


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
    # instruction messages between a call turn and what it follows: deleting or moving the
    # user message, or the instruction, changes what Gemini reads as the previous turn
    "instructions between": [_text("system", "agent"), _text("user", "go"), _text("developer", "note"),
                             _calls("a"), _tool("a"), _text("assistant", "done"), _text("user", "again"),
                             _text("system", "policy"), _text("developer", "more"), _calls("b", "c"),
                             _tool("b"), _tool("c"), _text("assistant", "ok"), _text("user", "last")],
    # two instruction messages right after the latest user message: dropping it leaves a call
    # turn whose previous turn is a model turn, two batches past the edit
    "instructions after the latest user": [_text("system", "agent"), _text("user", "go"), _calls("a"),
                                           _tool("a"), _text("assistant", "done"), _text("user", "again"),
                                           _text("system", "policy"), _text("developer", "more"),
                                           _calls("b"), _tool("b"), _text("assistant", "ok")],
    # the last turn used thinking: Anthropic wants its final assistant message to start with
    # thinking, unchanged; dropping the last user message makes that turn the final one
    "thinking turn": [_text("system", "agent"), _text("user", "go"), _thinking("plan", "a"), _tool("a"),
                      _thinking("next", "b"), _tool("b"), _text("assistant", "found it"),
                      _text("user", "now fix it"), _thinking("fix", "c", "d"), _tool("d"), _tool("c")],
    "thinking then user": [_text("user", "go"), _thinking("plan", "a"), _tool("a"), _text("user", "go on"),
                           _thinking("more", "b"), _tool("b"), _text("user", "stop")],
    # reasoning items kept with what they came with, one of them across a message boundary
    # (an assistant message of reasoning alone, then the call turn it led to)
    "reasoning item": [_text("user", "go"), {**_calls("a"), "content": [
        {"type": "reasoning", "id": "rs_1", "summary": []}]}, _tool("a"), _text("assistant", "done"),
        _text("user", "next"), {"role": "assistant", "content": [
            {"type": "reasoning", "id": "rs_2", "summary": []}]}, _calls("b"), _tool("b"),
        _text("user", "last")],
    # a run of reasoning items over two messages that a call item requires whole (read from
    # before): dropping the latest user message leaves the run's first message at a piece's
    # start, dropping a call rewrites the item that needs both
    "reasoning across messages": [
        _text("system", "agent"), _text("user", "go"),
        {"role": "assistant", "content": [{"type": "reasoning", "id": "rs_1", "summary": []}]},
        {"role": "assistant", "content": [{"type": "reasoning", "id": "rs_2", "summary": []}]},
        {**_calls("b", "c"), "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"},
             "item": {"id": f"fc_{call_id}"}} for call_id in ("b", "c")]},
        _tool("b"), _tool("c"), _text("assistant", "done")],
    # a thinking turn whose last call turn does not start with thinking: fine while a user
    # message follows; dropping it makes that call turn the final message
    "plain calls after thinking": [_text("user", "go"), _thinking("plan", "a"), _tool("a"), _calls("b"),
                                   _tool("b"), _text("user", "next")],
}
CONTRACTS = {
    "pending allowed": {"version": 1, "checks": {
        "provider_validity": {"allow_trailing_pending_call": True},
        "tool_pairs": {"allow_trailing_pending_call": True}}},
    "strict": {"version": 1, "checks": {"provider_validity": True}},
    "chat named": {"version": 1, "checks": {
        "provider_validity": {"profile": "openai-chat", "allow_trailing_pending_call": True},
        "tool_pairs": False, "unique_tool_ids": False, "structure": False}},
    "anthropic named": {"version": 1, "checks": {
        "provider_validity": {"profile": "anthropic", "allow_trailing_pending_call": True},
        "tool_pairs": False, "unique_tool_ids": False, "structure": False}},
    "anthropic strict": {"version": 1, "checks": {"provider_validity": {"profile": "anthropic"}}},
    "gemini named": {"version": 1, "checks": {
        "provider_validity": {"profile": "gemini", "allow_trailing_pending_call": True},
        "tool_pairs": False, "unique_tool_ids": False, "structure": False}},
    "gemini strict": {"version": 1, "checks": {"provider_validity": {"profile": "gemini"}}},
    "responses named": {"version": 1, "checks": {
        "provider_validity": {"profile": "openai-responses", "allow_trailing_pending_call": True},
        "tool_pairs": False, "unique_tool_ids": False, "structure": False}},
    "responses strict": {"version": 1, "checks": {"provider_validity": {"profile": "openai-responses"}}},
}


def _passes(output: str, contract: str) -> bool:
    messages = OUTPUTS[output]
    return check_loaded(load_list(messages), load_list(messages), make_contract(CONTRACTS[contract])).passed


# a pair that fails its contract gets no mutants (a pending call under a strict contract, a
# call turn after a model turn for Gemini): those combinations are left out, and the test
# below says exactly which they are
COMBINATIONS = [(output, contract) for output in sorted(OUTPUTS) for contract in sorted(CONTRACTS)
                if _passes(output, contract)]


def test_only_the_expected_combinations_are_left_out() -> None:
    left_out = {(output, contract) for output in OUTPUTS for contract in CONTRACTS} - set(COMBINATIONS)
    assert left_out == {("pending tail", "strict"), ("pending tail", "anthropic strict"),
                        ("pending tail", "gemini strict"), ("pending tail", "responses strict"),
                        # Gemini wants a user turn before the first call turn
                        ("leading batch", "gemini named"), ("leading batch", "gemini strict"),
                        # and a call turn after a user turn, not after a model turn of reasoning
                        *(("reasoning item" if turn else "reasoning across messages", f"gemini {kind}")
                          for turn in (True, False) for kind in ("named", "strict")),
                        # a system message after the first user message breaks `structure`
                        *((output, name) for output in ("instructions between",
                                                        "instructions after the latest user")
                          for name in ("strict", "pending allowed", "anthropic strict", "gemini strict",
                                       "responses strict"))}


@pytest.mark.parametrize(("output_name", "contract_name"), COMBINATIONS)
def test_every_operator_agrees_with_a_full_recheck(output_name: str, contract_name: str) -> None:
    contract = make_contract(CONTRACTS[contract_name])
    messages = OUTPUTS[output_name]
    before, after = load_list(messages), load_list(messages)
    report = mutate_pair(before, after, contract, sorted(OPERATORS), verify=True)
    assert report.mutants


def _responses_items(messages: list[dict[str, Any]], reasoning: bool) -> list[dict[str, Any]]:
    written = representable(messages)
    assert written is not None
    return to_items(written, reasoning=reasoning).items


WIRE: dict[str, tuple[str, Callable[[list[dict[str, Any]]], Any]]] = {
    # results as tool_result blocks of user messages, split into neutral tool messages
    "anthropic": ("anthropic", lambda messages: to_anthropic(messages, top_system=True)[0]),
    # calls and outputs as items of their own
    "responses items": ("openai-responses", lambda messages: _responses_items(messages, False)),
    "responses items with reasoning": ("openai-responses",
                                       lambda messages: _responses_items(messages, True)),
}


@pytest.mark.parametrize("output_name", ["leading batch", "pending tail", "long batches"])
@pytest.mark.parametrize("wire_name", sorted(WIRE))
def test_wire_data_agrees_with_a_full_recheck(wire_name: str, output_name: str) -> None:
    """Real wire data of a format, judged by its format's own profile (through the lemma)."""
    format_name, write = WIRE[wire_name]
    fmt = get_format(format_name)
    contract = make_contract({"version": 1, "format": format_name, "checks": {
        "provider_validity": {"allow_trailing_pending_call": True},
        "tool_pairs": {"allow_trailing_pending_call": True}}})
    wire = write(OUTPUTS[output_name])
    before, after = fmt.load(wire), fmt.load(wire)
    assert check_loaded(before, after, contract).passed
    evaluator = IncrementalEvaluator(after, contract, prepare_before(before, contract))
    assert evaluator.rechecks["provider_validity"].rules is RULES[profile_for(format_name)]
    report = mutate_pair(before, after, contract, sorted(OPERATORS), verify=True)
    assert report.mutants


def test_every_rule_of_a_covered_profile_is_judged_somewhere() -> None:
    """A rule left out of every code set would silently never be reported on a mutant."""
    assert set(RULES) == set(PROFILES)
    for name, rules in RULES.items():
        codes = {rule.code for rule in PROFILES[name].rules}
        judged = [rules.batch_codes, rules.final_codes, rules.id_codes, rules.reasoning_codes]
        assert sum(len(part) for part in judged) == len(set().union(*judged))
        assert set().union(*judged) == codes
    responses = CheckSettings(options={"profile": "openai-responses", "allow_trailing_pending_call": False})
    assert batch_rules(responses, "openai") is RULES["openai-responses"]


def test_the_reasoning_rules_are_reached_on_items_in_verify_mode() -> None:
    """Reasoning items in Chat-shaped data judged by the Responses profile: its reasoning rules
    catch mutants (dropping the item a reasoning item came with, or the reasoning an item
    needs), and the windows agreed with the full recheck on each."""
    contract = make_contract(CONTRACTS["responses named"])
    caught: set[str] = set()
    for output in ("reasoning item", "reasoning across messages"):
        messages = OUTPUTS[output]
        before, after = load_list(messages), load_list(messages)
        evaluator = IncrementalEvaluator(after, contract, prepare_before(before, contract))
        assert evaluator.rechecks["provider_validity"] is not None
        report = mutate_pair(before, after, contract, verify=True)
        caught |= {v.code for mutant in report.mutants if mutant.report for v in mutant.report.violations}
    assert {"PV-RESP-REASONING-ALONE", "PV-RESP-REASONING-MISSING"} <= caught


@pytest.mark.parametrize(("contract_name", "codes"), [
    ("gemini named", {"PV-GEM-CALL-POSITION", "PV-GEM-RESPONSE-COUNT"}),
    ("anthropic named", {"PV-ANTH-THINKING-FIRST", "PV-ANTH-THINKING-MODIFIED",
                         "PV-ANTH-RESULT-ORPHAN", "PV-ANTH-USE-UNANSWERED"}),
    ("responses named", {"PV-RESP-CALL-UNANSWERED", "PV-RESP-OUTPUT-ORPHAN"}),
])
def test_context_and_final_turn_rules_catch_mutants(contract_name: str, codes: set[str]) -> None:
    """The outputs reach the rules beyond a batch: every rule of the profile catches some mutant
    (and the fast path agreed with the full recheck on each)."""
    contract = make_contract(CONTRACTS[contract_name])
    seen: set[str] = set()
    for output in ("instructions between", "instructions after the latest user", "thinking turn",
                   "thinking then user",
                   "plain calls after thinking"):
        messages = OUTPUTS[output]
        before, after = load_list(messages), load_list(messages)
        if not check_loaded(before, after, contract).passed:
            continue
        report = mutate_pair(before, after, contract, verify=True)
        for mutant in report.mutants:
            if mutant.report is not None:
                seen |= {v.code for v in mutant.report.violations if v.code.startswith("PV-")}
    assert codes <= seen


def test_the_tail_and_headless_cases_are_reached_and_caught() -> None:
    contract = make_contract(CONTRACTS["chat named"])
    caught: set[str] = set()
    for messages in OUTPUTS.values():
        before, after = load_list(messages), load_list(messages)
        report = mutate_pair(before, after, contract, verify=True)
        caught |= {mutant.description for mutant in report.mutants if "provider_validity" in mutant.caught_by}
    assert caught  # provider_validity catches mutants, and the fast path agreed on each
