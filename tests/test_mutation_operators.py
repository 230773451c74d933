"""Every operator's eligibility, sites, labels, edits and dedupe, from `tests/cases/mutation/`.

Each YAML file names one operator and lists cases: an `after` (and optionally a `before`, which
defaults to the after, a `contract`, and `tools`: `{name, parameters}` tool schemas given to the
contract, also settable for a whole file), and either `skipped` or the distinct mutants in
order, each with its sites, message index and optionally the exact mutant list. Both mutant
builders are held to the same expectations: the copy-on-write fast path and the deep-copy
reference path.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from frayproof_audit.contract import Contract
from frayproof_audit.engine import check_loaded, prepare_before
from frayproof_audit.mutate import OPERATORS, build_mutants
from frayproof_audit.mutate.fastpath import SharedPair
from frayproof_audit.mutate.operators import OPERATOR_TABLE, get_operator
from frayproof_audit.snapshot import load_list
from frayproof_audit.toolargs.schemas import ToolSchema
from tests.helpers import expand, history, make_contract

CASES = Path(__file__).parent / "cases" / "mutation"


def _load_cases() -> list[Any]:
    found = []
    for path in sorted(CASES.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in document["cases"]:
            if "tools" in document:
                case = {"tools": document["tools"], **case}
            found.append(pytest.param(document["operator"], case,
                                      id=f"{document['operator']}:{case['id']}"))
    return found


ALL_CASES = _load_cases()


def _messages(shorthand: list[Any]) -> list[Any]:
    return [expand(copy.deepcopy(message)) for message in shorthand]


def _contract(case: dict[str, Any]) -> Contract:
    """The case's contract with its tool schemas (the YAML `tools:` key is not parsed here)."""
    contract = make_contract(case.get("contract"))
    tools = tuple(ToolSchema(tool["name"], tool["parameters"]) for tool in case.get("tools", ()))
    return replace(contract, tools=tools) if tools else contract


def test_every_operator_has_cases() -> None:
    covered = {param.values[0] for param in ALL_CASES}
    assert covered == set(OPERATORS)


@pytest.mark.parametrize(("operator", "case"), ALL_CASES)
def test_operator_case(operator: str, case: dict[str, Any]) -> None:
    after_raw = _messages(case["after"])
    before_raw = _messages(case.get("before", case["after"]))
    contract = _contract(case)
    before, after = load_list(before_raw), load_list(after_raw)
    pristine = copy.deepcopy(after.wire)

    reference = build_mutants(before, after, contract, [operator])
    fast = _fast_mutants(operator, before_raw, after_raw, case)
    assert after.wire == pristine, "building mutants must not touch the output"

    expected = case["expect"]
    if expected == "skipped":
        assert reference == []
        assert fast == []
        return
    assert [(m.sites, m.message_index) for m in reference] == [
        (tuple(entry["sites"]), entry["index"]) for entry in expected
    ]
    assert fast == [(m.sites, m.message_index, m.messages) for m in reference]
    for mutant, entry in zip(reference, expected, strict=True):
        assert mutant.operator == operator
        if "mutant" in entry:
            assert mutant.messages == _messages(entry["mutant"])
        if "description" in entry:
            assert mutant.description == entry["description"]
        assert mutant.messages != after.wire, "a mutant never equals its source"


def _fast_mutants(operator: str, before_raw: list[Any], after_raw: list[Any],
                  case: dict[str, Any]) -> list[tuple[tuple[str, ...], int, list[Any]]]:
    contract = _contract(case)
    before, after = load_list(before_raw), load_list(after_raw)
    facts = prepare_before(before, contract)
    shared = SharedPair(after, contract, facts)
    candidates = get_operator(operator).find_sites(after, contract, facts)
    found = []
    for group, mutant in shared.distinct(candidates):
        found.append((group.sites, group.first.message_index, mutant.loaded.wire))
    return found


def test_every_operator_is_documented_with_its_hint_and_skip_reason() -> None:
    guide = (Path(__file__).parent.parent / "docs" / "mutation.md").read_text(encoding="utf-8")
    for operator in OPERATOR_TABLE:
        assert f"| `{operator.name}` |" in guide, f"{operator.name} missing from the operator table"
        assert operator.survivor_hint and operator.skip_reason and operator.label
    assert [operator.name for operator in OPERATOR_TABLE] == list(OPERATORS)


# --- edits declare their effects; an undeclared edit is re-checked in full -------------------

def test_every_edit_of_every_operator_declares_its_effects() -> None:
    from frayproof_audit.recheck.mutant import Effects
    before = history(3)
    for message in before:
        for call in message.get("tool_calls", ()):
            call["function"]["arguments"] = '{"path": "notes.txt"}'
    contract = replace(
        make_contract({"pins": [{"name": "sys", "role": "system"},
                                {"name": "data", "contains": "data 1"}],
                       "retain": {"recent_exchanges": 1}}),
        tools=(ToolSchema("read", {"type": "object", "required": ["path"],
                                   "properties": {"path": {"type": "string"}}}),))
    loaded_before, after = load_list(before), load_list(before)
    facts = prepare_before(loaded_before, contract)
    for operator in OPERATOR_TABLE:
        candidates = operator.find_sites(after, contract, facts)
        if operator.quiet:  # reasoning operators: no site in Chat data (tests/test_provider_mutation.py)
            assert not candidates, operator.name
            continue
        assert candidates, operator.name
        for candidate in candidates:
            effects = candidate.edit.effects()
            assert isinstance(effects, Effects) and effects.declared, (operator.name, candidate)


def test_an_edit_that_declares_nothing_is_rechecked_by_every_check() -> None:
    from dataclasses import dataclass

    from frayproof_audit.checks import CHECKS
    from frayproof_audit.mutate.edits import DeleteMessage
    from frayproof_audit.recheck.mutant import Effects

    @dataclass(frozen=True)
    class Opaque:
        """Deletes a message but tells the evaluator nothing about it."""

        inner: DeleteMessage

        def apply_in_place(self, messages: list[Any]) -> None:
            self.inner.apply_in_place(messages)

        def segments(self, wire: list[dict[str, Any]]) -> list[Any]:
            return self.inner.segments(wire)

        def effects(self) -> Effects:
            return Effects()

    calls: list[str] = []
    contract = make_contract({"retain": {"latest_user_message": "exact"},
                              "checks": {check.key: True for check in CHECKS}})
    before = after = load_list(history(2))
    shared = SharedPair(after, contract, prepare_before(before, contract))
    originals = {check.name: check.find for check in CHECKS}
    for check in CHECKS:
        object.__setattr__(check, "find", _counting(check.find, check.name, calls))
    try:
        for edit in (DeleteMessage(2), Opaque(DeleteMessage(2))):
            calls.clear()
            mutant = shared.shape(edit)
            report = shared.evaluator.evaluate(edit, mutant)
            ran = set(calls)
            assert report.violations == check_loaded(before, mutant.loaded, contract).violations
            if isinstance(edit, Opaque):
                assert ran == {check.name for check in CHECKS}  # nothing skipped
            else:
                assert ran < {check.name for check in CHECKS}  # the lemmas spared some
    finally:
        for check in CHECKS:
            object.__setattr__(check, "find", originals[check.name])


def _counting(find: Any, name: str, calls: list[str]) -> Any:
    def counted(*args: Any) -> Any:
        calls.append(name)
        return find(*args)
    return counted
