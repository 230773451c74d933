"""Every operator's eligibility, sites, labels, edits and dedupe, from `tests/cases/mutation/`.

Each YAML file names one operator and lists cases: an `after` (and optionally a `before`, which
defaults to the after, and a `contract`), and either `skipped` or the distinct mutants in
order, each with its sites, message index and optionally the exact mutant list. Both mutant
builders are held to the same expectations: the copy-on-write fast path and the deep-copy
reference path.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from frayproof_audit.mutate import OPERATORS, build_mutants
from frayproof_audit.mutate.fastpath import Mutant, SharedPair
from frayproof_audit.mutate.operators import OPERATOR_TABLE, dedupe, get_operator
from frayproof_audit.prepared import prepare_before
from frayproof_audit.snapshot import load_list
from tests.helpers import expand, make_contract

CASES = Path(__file__).parent / "cases" / "mutation"


def _load_cases() -> list[Any]:
    found = []
    for path in sorted(CASES.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in document["cases"]:
            found.append(pytest.param(document["operator"], case,
                                      id=f"{document['operator']}:{case['id']}"))
    return found


ALL_CASES = _load_cases()


def _messages(shorthand: list[Any]) -> list[Any]:
    return [expand(copy.deepcopy(message)) for message in shorthand]


def test_every_operator_has_cases() -> None:
    covered = {param.values[0] for param in ALL_CASES}
    assert covered == set(OPERATORS)


@pytest.mark.parametrize(("operator", "case"), ALL_CASES)
def test_operator_case(operator: str, case: dict[str, Any]) -> None:
    after_raw = _messages(case["after"])
    before_raw = _messages(case.get("before", case["after"]))
    contract = make_contract(case.get("contract"))
    before, after = load_list(before_raw), load_list(after_raw)
    pristine = copy.deepcopy(after.wire)

    reference = build_mutants(before, after, contract, [operator])
    fast = _fast_mutants(operator, before_raw, after_raw, case.get("contract"))
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
                  contract_doc: Any) -> list[tuple[tuple[str, ...], int, list[Any]]]:
    contract = make_contract(contract_doc)
    before, after = load_list(before_raw), load_list(after_raw)
    facts = prepare_before(before, contract)
    shared = SharedPair(after, contract, facts)
    cache: dict[int, Mutant] = {}
    candidates = get_operator(operator).find_sites(after, contract, facts)
    found = []
    for group in dedupe(candidates, lambda c: shared.key(c, cache)):
        mutant = cache.get(id(group.first)) or shared.assemble(group.first.edit)[0]
        found.append((group.sites, group.first.message_index, mutant.loaded.wire))
    return found


def test_every_operator_is_documented_with_its_hint_and_skip_reason() -> None:
    guide = (Path(__file__).parent.parent / "docs" / "mutation.md").read_text(encoding="utf-8")
    for operator in OPERATOR_TABLE:
        assert f"| `{operator.name}` |" in guide, f"{operator.name} missing from the operator table"
        assert operator.survivor_hint and operator.skip_reason and operator.label
    assert [operator.name for operator in OPERATOR_TABLE] == list(OPERATORS)
