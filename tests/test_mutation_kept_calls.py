"""`tool_call_integrity` on mutants from the messages an edit affects (its re-check, `KeptCalls`),
against a full recheck of every mutant (`verify=True` raises on any difference), on the cases
the generated sessions rarely reach: a result that becomes another kept call's once the result
that had that call's content is dropped, and a mutant that keeps a call the original did not."""

from __future__ import annotations

from typing import Any

import pytest

from frayproof_audit.checks.tool_call_integrity import KeptCalls, kept_call_facts
from frayproof_audit.engine import check_loaded, prepare_before
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.snapshot import load_list
from tests.helpers import make_contract

CONTRACT = make_contract({"version": 1, "checks": {
    "tool_call_integrity": True, "tool_pairs": False, "unique_tool_ids": False}})


def _call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _tool(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


BEFORE = [
    {"role": "user", "content": "weather in Paris and Oslo?"},
    _assistant(_call("a", "weather", '{"city": "Paris"}'), _call("b", "weather", '{"city": "Oslo"}')),
    _tool("a", "12 C"),
    _tool("b", "3 C"),
    {"role": "assistant", "content": "Paris 12 C, Oslo 3 C."},
    {"role": "user", "content": "and tomorrow?"},
]
# b answered twice, once with a's content: clean, since a's own "12 C" is still there. Dropping
# a's result (or rewriting it) makes the second b result carry a's: TC-RESULT-ID.
AFTER = [
    {"role": "user", "content": "weather in Paris and Oslo?"},
    _assistant(_call("a", "weather", '{"city": "Paris"}'), _call("b", "weather", '{"city": "Oslo"}')),
    _tool("a", "12 C"),
    _tool("b", "3 C"),
    _tool("b", "12 C"),
    {"role": "assistant", "content": "Paris 12 C, Oslo 3 C."},
    {"role": "user", "content": "and tomorrow?"},
]


def test_the_original_is_clean_and_a_dropped_result_flags_the_other_one() -> None:
    before, after = load_list(BEFORE), load_list(AFTER)
    assert check_loaded(before, after, CONTRACT).passed
    report = mutate_pair(before, after, CONTRACT, verify=True)  # raises on any difference
    caught_by = {mutant.description: mutant.caught_by for mutant in report.mutants}
    flagged = [text for text, checks in caught_by.items() if "tool_call_integrity" in checks]
    assert flagged, caught_by  # the lemma's "lost pair" case is reached, and agrees


@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_every_operator_agrees_with_a_full_recheck(operator: str) -> None:
    before, after = load_list(BEFORE), load_list(AFTER)
    mutate_pair(before, after, CONTRACT, [operator], verify=True)


def test_an_edit_whose_new_messages_keep_a_new_call_is_left_to_the_full_recheck() -> None:
    earlier = [_assistant(_call("d", "weather", '{"city": "Rome"}')), _tool("d", "20 C")]
    before, after = load_list(earlier + BEFORE), load_list(AFTER)  # after keeps no call d
    facts = prepare_before(before, CONTRACT)
    assert kept_call_facts(facts) is not None
    kept = KeptCalls(after.views, kept_call_facts(facts))

    from types import SimpleNamespace

    from frayproof_audit.checks.base import CheckSettings
    from frayproof_audit.recheck.mutant import Effects

    mutant = SimpleNamespace(fresh=[(1, {}, load_list([_assistant(_call("d", "weather"))]).views[0])])
    assert kept.findings(Effects(text_edited=(1,)), mutant, CheckSettings()) is None  # type: ignore[arg-type]
