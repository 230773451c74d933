"""Mutation stays linear in the record's length (issue #9), and its shortcuts stay exact.

- `Shape` (a mutant as a layout over the original) answers every question the evaluator asks
  (positions, views, the last non-tool message, the class hash) exactly as the assembled mutant
  would: a hypothesis property over every operator's candidates.
- `SharedPair.distinct` merges mutants by comparing class sequences, never by the hash alone: with
  every hash forced equal it still gives the reference groups.
- The cost per mutant does not grow with the record. Not timed: a counting hook adds up how many
  messages the checks are handed (the whole mutant when a check is rerun in full) and how long
  the class sequences compared for dedupe are; per mutant, both stay flat from 150 to 1,200
  messages, so the total grows linearly.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.huge_mutate import CONTRACTS, huge_session
from frayproof_audit.checks import CHECKS
from frayproof_audit.contract import parse_contract
from frayproof_audit.engine import prepare_before
from frayproof_audit.formats import get_format
from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded
from frayproof_audit.mutate import OPERATORS, mutate_pair
from frayproof_audit.mutate import shape as shape_module
from frayproof_audit.mutate.fastpath import SharedPair
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.mutate.runner import reference_mutants
from frayproof_audit.snapshot import load_list, load_wire, parse_snapshot_bytes
from sessiongen import small
from sessiongen.responses_items import representable, to_items
from sessiongen.strategies import clean_mutation_cases, mutation_cases
from tests.helpers import make_contract


def _shared(case: small.MutationCase) -> tuple[SharedPair, Loaded, Any, Any]:
    before_raw, after_raw, contract_doc = case
    contract = make_contract(contract_doc)
    before, after = load_list(before_raw), load_list(after_raw)
    facts = prepare_before(before, contract)
    return SharedPair(after, contract, facts), after, contract, facts


def _shape_agrees(case: small.MutationCase) -> None:
    shared, after, contract, facts = _shared(case)
    for name in OPERATORS:
        for candidate in get_operator(name).find_sites(after, contract, facts):
            mutant = shared.shape(candidate.edit)
            whole = mutant.loaded
            assert mutant.length == len(whole)
            assert [view for _, view in mutant.views_between(0, mutant.length)] == whole.views
            tail = max((k for k, view in enumerate(whole.views) if view.role != "tool"), default=-1)
            assert mutant.tail() == tail
            for index in range(len(after)):
                position = mutant.position(index)
                if position is not None:
                    assert whole.wire[position] is after.wire[index]
            classes = mutant.classes()
            assert classes == [shared.original.class_of(message) for message in whole.wire]
            expected = 0
            for view in whole.views:
                item = shape_module.weak_class(view)
                expected = (expected * shape_module.BASE + item) % shape_module.MODULUS
            assert mutant.class_hash() == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_shape_answers_as_the_assembled_mutant(case: small.MutationCase) -> None:
    _shape_agrees(case)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clean_mutation_cases())
def test_shape_answers_as_the_assembled_mutant_on_clean_outputs(case: small.MutationCase) -> None:
    _shape_agrees(case)


@settings(max_examples=150, deadline=None)
@given(mutation_cases())
def test_equal_classes_have_equal_weak_classes(case: small.MutationCase) -> None:
    """Dedupe buckets by weak classes: two messages of one class (equal canonical JSON) must
    have one weak class, or equal mutants could land in two buckets and never merge."""
    _, after, _, _ = _shared(case)
    # the same messages with their keys in the other order: equal canonical JSON
    copies = load_list([{key: message[key] for key in reversed(message)}
                        for message in copy.deepcopy(after.wire)])
    for view, twin in zip(after.views, copies.views, strict=True):
        assert shape_module.weak_class(view) == shape_module.weak_class(twin)
    by_class: dict[bytes, set[int]] = {}
    for message, view in zip(after.wire, after.views, strict=True):
        by_class.setdefault(canonical(message), set()).add(shape_module.weak_class(view))
    assert all(len(weak) == 1 for weak in by_class.values())


def test_dedupe_never_trusts_the_hash_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hash equal: groups still come from comparing the class sequences."""
    monkeypatch.setattr(shape_module.Shape, "class_hash", lambda self: 0)
    compared = 0
    for case in small.mutation_cases(seed=3, count=40):
        shared, after, contract, facts = _shared(case)
        for name in OPERATORS:
            candidates = get_operator(name).find_sites(after, contract, facts)
            fast = shared.distinct(candidates) if candidates else []
            slow = reference_mutants(after.wire, candidates)
            assert [(g.sites, g.first.message_index) for g, _ in fast] == [
                (g.sites, g.first.message_index) for g, _ in slow]
            compared += len(candidates)
    assert compared > 100


# ------------------------------------------------------------------ linear cost, counted

@contextmanager
def _counting(totals: dict[str, int]) -> Iterator[None]:
    """Count messages handed to every check and class-sequence lengths compared in dedupe."""
    originals = {check.name: check.find for check in CHECKS}
    original_classes = shape_module.Shape.classes

    def wrap(name: str) -> Any:
        find = originals[name]

        def counted(after: Loaded, *args: Any) -> Any:
            totals["check_messages"] += len(after)
            return find(after, *args)

        return counted

    def classes(self: shape_module.Shape) -> list[int]:
        found = original_classes(self)
        totals["key_items"] += len(found)
        return found

    for check in CHECKS:
        object.__setattr__(check, "find", wrap(check.name))
    shape_module.Shape.classes = classes  # type: ignore[method-assign]
    try:
        yield
    finally:
        for check in CHECKS:
            object.__setattr__(check, "find", originals[check.name])
        shape_module.Shape.classes = original_classes  # type: ignore[method-assign]


def _cost_per_mutant(size: int, contract_text: str) -> tuple[float, float, int]:
    contract = parse_contract(contract_text, "<test>")
    blob = orjson.dumps(huge_session(size))
    totals = {"check_messages": 0, "key_items": 0}
    with _counting(totals):
        report = mutate_pair(load_wire(parse_snapshot_bytes(blob)),
                             load_wire(parse_snapshot_bytes(blob)), contract)
    judged = report.caught + report.survived
    assert report.baseline.passed and judged > size
    return totals["check_messages"] / judged, totals["key_items"] / judged, judged


_OPT_IN = CONTRACTS["audit"].replace(
    "  structure:\n    system_messages: leading_only\n",
    "  structure:\n    system_messages: leading_only\n"
    "  provider_validity:\n    allow_trailing_pending_call: true\n  tool_call_integrity: true\n")
LINEAR_CONTRACTS = {
    **CONTRACTS,
    # the opt-in checks, each with its own lemma (their re-checks, in `checks/`)
    "audit + tool_call_integrity + provider_validity (openai-chat)": _OPT_IN,
    # the other profiles the batch lemma covers, judging the same Chat data
    **{f"audit + provider_validity ({profile})": _OPT_IN.replace(
        "  provider_validity:\n", f"  provider_validity:\n    profile: {profile}\n")
       for profile in ("anthropic", "gemini", "openai-responses")},
}


def test_the_opt_in_contracts_turn_both_checks_on() -> None:
    for name, text in LINEAR_CONTRACTS.items():
        if "provider_validity" in name:
            contract = parse_contract(text, "<test>")
            assert contract.settings("tool_call_integrity").enabled
            assert contract.settings("provider_validity").enabled
            named = contract.settings("provider_validity").option("profile")
            assert (named or "openai-chat") in name


@pytest.mark.parametrize("contract", sorted(LINEAR_CONTRACTS))
def test_work_per_mutant_does_not_grow_with_the_record(contract: str) -> None:
    small_cost = _cost_per_mutant(150, LINEAR_CONTRACTS[contract])
    large_cost = _cost_per_mutant(1_200, LINEAR_CONTRACTS[contract])
    assert large_cost[2] > 7 * small_cost[2]  # eight times the record, about eight times the mutants
    # Checks see a few messages per mutant; the few full reruns (edits inside the retained
    # exchanges) are a constant number of O(n) passes, i.e. O(1) per mutant on average.
    assert large_cost[0] <= 1.5 * small_cost[0] + 5
    assert large_cost[1] <= 1.5 * small_cost[1] + 5


def _responses_cost_per_mutant(size: int) -> tuple[float, int]:
    """Responses items with a reasoning item in front of every assistant turn, judged by their
    format's profile with every opt-in check (reasoning items are dropped and kept)."""
    messages = representable(huge_session(size))
    assert messages is not None
    items = to_items(messages, reasoning=True).items
    contract = parse_contract(_OPT_IN.replace("format: openai\n", "format: openai-responses\n"), "<test>")
    fmt = get_format("openai-responses")
    totals = {"check_messages": 0, "key_items": 0}
    with _counting(totals):
        report = mutate_pair(fmt.load(items), fmt.load(items), contract)
    judged = report.caught + report.survived
    assert report.baseline.passed and judged > size
    assert any(mutant.operator == "drop_reasoning_item" for mutant in report.mutants)
    return totals["check_messages"] / judged, judged


def test_work_per_mutant_does_not_grow_with_a_reasoning_record() -> None:
    """Reasoning items: their drops are block edits (declared), and the Responses profile's
    reasoning rules are judged on windows, so this stays linear too."""
    small = _responses_cost_per_mutant(150)
    large = _responses_cost_per_mutant(1_200)
    assert large[1] > 7 * small[1]
    assert large[0] <= 1.5 * small[0] + 5


def test_huge_records_have_the_requested_length_and_the_benchmark_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import bench_mutate

    for size in (3, 10, 57, 400):
        session = huge_session(size)
        assert len(session) == size and session[-1]["role"] == "user"
    assert bench_mutate.main(["--huge", "150,300", "--budget", "100"]) == 0
    out = capsys.readouterr().out
    assert "jobs 1" in out and "per-mutant cost 300 / 150 messages" in out
    assert "skipped" in out and "us/mutant" in out
