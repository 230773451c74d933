"""tool_call_integrity beyond its YAML cases: the finding texts, opt-in parity, validate, and
the argument operators' place in a run (only under tool schemas) and in the fast path."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from frayproof_audit import InputError, check, validate
from frayproof_audit.checks import CHECKS
from frayproof_audit.checks.tool_call_integrity import ABSENT, arguments_difference
from frayproof_audit.contract import Contract
from frayproof_audit.engine import prepare_before
from frayproof_audit.mutate import OPERATORS, mutate_pair
from frayproof_audit.mutate.edits import SetArguments
from frayproof_audit.mutate.fastpath import SharedPair
from frayproof_audit.mutate.operators import select_operators
from frayproof_audit.mutate.target import MutateRequest, run_request
from frayproof_audit.snapshot import load_list
from frayproof_audit.toolargs.schemas import ToolSchema
from tests.helpers import make_contract, result, user

ON = {"checks": {"tool_call_integrity": True}}
WEATHER = ToolSchema("get_weather", {
    "type": "object", "required": ["location"],
    "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}})
FRAYPROOFS_NINE = OPERATORS[:9]


def weather(call_id: str, arguments: str, name: str = "get_weather") -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def pair(arguments: str, name: str = "get_weather") -> tuple[list[Any], list[Any]]:
    before = [user("go"), weather("a", '{"location": "Paris", "days": 3}'), result("a", "12 C"),
              user("thanks")]
    after = copy.deepcopy(before)
    after[1] = weather("a", arguments, name)
    return before, after


def messages(before: list[Any], after: list[Any], document: Any = None) -> list[str]:
    return [v.message for v in check(before, after, make_contract(document or ON)).violations]


# --- finding texts ----------------------------------------------------------------------

@pytest.mark.parametrize(("arguments", "message"), [
    ('{"location": "Lyon", "days": 3}',
     'Kept tool call changed its arguments at $.location: before "Paris", after "Lyon".'),
    ('{"location": "Paris"}',
     "Kept tool call changed its arguments at $.days: before 3, after (absent)."),
    ('{"location": "Paris", "days": 3, "unit": ["c", "f"]}',
     'Kept tool call changed its arguments at $.unit: before (absent), after ["c","f"].'),
    ('{"location": "Paris", "days": 3.0}',
     "Kept tool call changed its arguments at $.days: before 3, after 3.0."),
    ('{"location": "Par',
     'Kept tool call changed its arguments at $: before "{\\"location\\": \\"Paris\\", \\"days\\": 3}", '
     'after "{\\"location\\": \\"Par".'),
    ("[]", 'Kept tool call changed its arguments at $: before {"location":"Paris","days":3}, after [].'),
])
def test_the_first_difference_is_named_with_both_values(arguments: str, message: str) -> None:
    assert messages(*pair(arguments)) == [message]


def test_renamed_call_names_both_tools() -> None:
    found = messages(*pair('{"location":"Paris","days":3}', "weather"))
    assert found == ['Kept tool call changed its tool name: before "get_weather", after "weather".']


def test_long_values_are_cut_and_long_texts_shown_where_they_part() -> None:
    text = "Paris, the capital of France, on the Seine, " * 3
    before, after = pair("{}")
    before[1] = weather("a", json.dumps({"location": text + "north"}))
    after[1] = weather("a", json.dumps({"location": text + "south"}))
    [message] = messages(before, after)
    assert message == ('Kept tool call changed its arguments at $.location: before "…he Seine, '
                       'north", after "…he Seine, south".')
    after[1] = weather("a", json.dumps({"location": [text]}))
    [message] = messages(before, after)
    assert message.endswith('before "Paris, the capital of France, on the Sei…", '
                            'after ["Paris, the capital of France, on the S….')
    assert len(message) < 200


@pytest.mark.parametrize(("before", "after", "expected"), [
    ('{"a": {"b": [1, 2, {"c": 3}]}}', '{"a": {"b": [1, 2, {"c": 4}]}}', ("$.a.b[2].c", 3, 4)),
    ('{"a": [1, 2]}', '{"a": [1]}', ("$.a[1]", 2, ABSENT)),
    ('{"a": [1]}', '{"a": [1, 2]}', ("$.a[1]", ABSENT, 2)),
    ('{"two words": 1}', '{"two words": 2}', ('$["two words"]', 1, 2)),
    ('{"x": true}', '{"x": 1}', ("$.x", True, 1)),
    ('{"x": null}', '{"x": false}', ("$.x", None, False)),
    ('{"b": 1, "a": 2}', '{ "a" : 2 ,"b":1 }', None),
    ("", "", None),
    ("", "{}", ("$", "", "{}")),
    ('{"x": 1, "x": 1}', '{"x": 1}', ("$", '{"x": 1, "x": 1}', '{"x": 1}')),  # duplicate keys: not JSON
])
def test_arguments_difference(before: str, after: str, expected: Any) -> None:
    assert arguments_difference(before, after) == expected


def test_a_result_without_an_id_is_shown_as_none() -> None:
    before = [user("go"), weather("a", "{}"), result("a", "12 C")]
    after = [user("go"), weather("a", "{}"), {"role": "tool", "content": "12 C"}]
    report = check(before, after, make_contract(ON))
    found = [(v.code, v.message_index, v.tool_call_id, v.message) for v in report.violations
             if v.check == "tool_call_integrity"]
    assert found == [("TC-RESULT-ID", 2, "a", "Result of a kept tool call now carries another id: (none).")]


# --- opt-in: frayproof's verdicts unchanged -----------------------------------------------

def test_off_by_default_and_its_record_says_so() -> None:
    [record] = [c for c in CHECKS if c.name == "tool_call_integrity"]
    assert record.enabled_by_default is False and record.needs_before
    assert Contract().settings("tool_call_integrity").enabled is False
    assert make_contract({}).settings("tool_call_integrity").enabled is False
    assert make_contract(ON).settings("tool_call_integrity").enabled is True
    mapping = make_contract({"checks": {"tool_call_integrity": {"severity": "warning"}}})
    assert mapping.settings("tool_call_integrity").enabled is True  # a block opts in
    assert check(*pair("{}", "weather")).passed


def test_validate_refuses_it_like_pins() -> None:
    with pytest.raises(InputError, match=r"kept-call rules \(checks.tool_call_integrity\).*use check"):
        validate([user()], make_contract(ON))
    assert validate([user()], make_contract({"checks": {"tool_call_integrity": False}})).passed


# --- the argument operators join a run only under tool schemas -------------------------------

def test_without_tool_schemas_a_run_has_frayproofs_nine_operators() -> None:
    # The reasoning operators (last) are part of every run but give no entry on Chat data.
    reasoning = ("drop_reasoning_item", "alter_thinking_block")
    assert select_operators(None, Contract()) == (*FRAYPROOFS_NINE, *reasoning)
    with_tools = replace(Contract(), tools=(WEATHER,))
    assert select_operators(None, with_tools) == OPERATORS
    assert OPERATORS[9:] == ("drop_required_argument", "retype_argument", *reasoning)
    before, after = pair('{"location": "Paris", "days": 3}')
    plain = mutate_pair(load_list(before), load_list(after), make_contract(ON))
    assert tuple(plain.operators) == FRAYPROOFS_NINE


def test_the_mutate_command_path_keeps_frayproofs_nine(tmp_path: Any) -> None:
    before, _ = pair("{}")
    (tmp_path / "in.json").write_text(json.dumps(before), encoding="utf-8")
    report = run_request(MutateRequest(input=str(tmp_path / "in.json"),
                                       after=str(tmp_path / "in.json")))
    assert tuple(report.operators) == FRAYPROOFS_NINE


def test_argument_mutants_are_caught_by_tool_call_integrity_and_hint_otherwise() -> None:
    before, after = pair('{"location": "Paris", "days": 3}')
    contract = replace(make_contract(ON), tools=(WEATHER,))
    report = mutate_pair(load_list(before), load_list(after), contract, verify=True)
    argument = [m for m in report.mutants if m.operator in OPERATORS[9:]]
    assert [(m.operator, m.sites, m.status, m.caught_by) for m in argument] == [
        ("drop_required_argument", ("after[1].tool_calls[0].arguments.location",), "caught",
         ("tool_arguments", "tool_call_integrity")),
        ("retype_argument", ("after[1].tool_calls[0].arguments.location",), "caught",
         ("tool_arguments", "tool_call_integrity")),
        ("retype_argument", ("after[1].tool_calls[0].arguments.days",), "caught",
         ("tool_arguments", "tool_call_integrity")),
    ]
    off = replace(make_contract({"checks": {"tool_arguments": False}}), tools=(WEATHER,))
    survived = mutate_pair(load_list(before), load_list(after), off)
    hints = {m.reason for m in survived.mutants if m.operator in OPERATORS[9:]}
    assert all("tool_arguments" in hint and "tool_call_integrity" in hint for hint in hints)


def test_an_arguments_edit_reruns_only_the_checks_that_read_arguments() -> None:
    """The lemma: view-only checks keep the original's findings, even when it has some."""
    before, after = pair('{"location": "Paris", "days": 3}')
    after.append({"role": "system", "content": "late"})  # a structure finding on the original
    contract = replace(make_contract({**ON, "retain": {"latest_user_message": "exact"}}),
                       tools=(WEATHER,))
    loaded_before, loaded_after = load_list(before), load_list(after)
    shared = SharedPair(loaded_after, contract, prepare_before(loaded_before, contract))
    ran: list[str] = []
    originals = {c.name: c.find for c in CHECKS}
    for registered in CHECKS:
        object.__setattr__(registered, "find", _counting(registered.find, registered.name, ran))
    try:
        edit = SetArguments(1, 0, '{"days":3}')
        mutant = shared.shape(edit)
        report = shared.evaluator.evaluate(edit, mutant)
    finally:
        for registered in CHECKS:
            object.__setattr__(registered, "find", originals[registered.name])
    # tool_arguments reads arguments and reruns; tool_call_integrity judges the new message alone
    # (its re-check, `KeptCalls`: its find does not run); the view-only checks and retention (the
    # skeleton is kept) do not run; format_notes' findings on a mutant are the pair's, computed
    # once (it reads the snapshots' notes only)
    assert set(ran) == {"tool_arguments"}
    full = check(before, mutant.loaded.wire, contract)
    assert report.violations == full.violations
    assert {v.code for v in report.violations} == {"ST-INSTR-LATE", "TA-REQUIRED", "TC-ARGS"}


def _counting(find: Any, name: str, calls: list[str]) -> Any:
    def counted(*args: Any) -> Any:
        calls.append(name)
        return find(*args)
    return counted
