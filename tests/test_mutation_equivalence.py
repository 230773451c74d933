"""The fast path is the reference path, faster: a property test over generated sessions.

For sessions, outputs and contracts drawn by hypothesis (`sessiongen.strategies`, so a failure
shrinks to a small session) and every registered operator (`frayproof_audit.mutate.OPERATORS`
is iterated, so a new operator is covered without editing this file), each distinct mutant is
judged twice: by the fast path (copy-on-write assembly, reused views and identities, the
incremental evaluator) and by a full recheck, `check_loaded(before, load_list(mutant),
contract)` on a deep-copied, in-place-edited mutant. The groups (sites, index), the verdicts,
the error-finding checks and the whole findings must be equal. Baselines are not consulted, so
failing outputs exercise the evaluator too. Seeded guards check that the generator keeps
producing judged mutants for every operator, so the property cannot pass vacuously. The argument
operators apply only under tool schemas, so a third property draws cases whose calls carry
arguments and whose contract has schemas (`sessiongen.arguments`); the thinking and reasoning
operators only where such blocks are, so a fourth draws cases that carry them
(`sessiongen.reasoning`).
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.contract import Contract
from frayproof_audit.engine import check_loaded, prepare_before
from frayproof_audit.loaded import Loaded
from frayproof_audit.mutate import OPERATORS, mutate_pair
from frayproof_audit.mutate.fastpath import SharedPair, shares_mutable_objects
from frayproof_audit.mutate.operators import Candidate, get_operator, operator_names
from frayproof_audit.mutate.runner import reference_mutants
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.recheck import local
from frayproof_audit.snapshot import load_list
from sessiongen import arguments, reasoning, small
from sessiongen.source import RandomSource
from sessiongen.strategies import DrawSource, clean_mutation_cases, mutation_cases
from tests.helpers import assistant, call, make_contract, result, system, user


@pytest.fixture(autouse=True, scope="module")
def _every_lemma() -> Iterator[None]:
    """Small mutants are rerun in full (`recheck.local.SMALL_MUTANT`), which is the reference
    itself; with the threshold at 0 every mutant here goes through its check's lemma."""
    saved, local.SMALL_MUTANT = local.SMALL_MUTANT, 0
    yield
    local.SMALL_MUTANT = saved


def _candidates(name: str, after: Loaded, contract: Contract, facts: BeforeFacts) -> list[Candidate]:
    """Operator `name`'s candidate edits (the one line that knows how operators are stored)."""
    return get_operator(name).find_sites(after, contract, facts)


def _judge_both_ways(before_raw: list[Any], after_raw: list[Any], contract_doc: Any) -> Counter[str]:
    """Compare both paths for every operator; return how many mutants each operator had.
    `contract_doc` is YAML (text or mapping) or a built `Contract` (one with tool schemas)."""
    contract = contract_doc if isinstance(contract_doc, Contract) else make_contract(contract_doc)
    before, after = load_list(before_raw), load_list(after_raw)
    assert not shares_mutable_objects(after.wire)
    facts = prepare_before(before, contract)
    shared = SharedPair(after, contract, facts)
    judged: Counter[str] = Counter()
    for name in operator_names():
        candidates = _candidates(name, after, contract, facts)
        fast_groups = shared.distinct(candidates)
        slow = reference_mutants(after.wire, candidates)
        assert [(g.sites, g.first.message_index) for g, _ in fast_groups] == [
            (g.sites, g.first.message_index) for g, _ in slow], name
        for (group, mutant), (_, messages) in zip(fast_groups, slow, strict=True):
            assert mutant.loaded.wire == messages, name
            fast = shared.evaluate(group.first, mutant)
            full = check_loaded(before, load_list(messages), contract)
            assert fast.passed == full.passed, name
            assert fast.error_checks() == full.error_checks(), name
            assert fast.violations == full.violations, name
            judged[name] += 1
    return judged


NOISY_EXAMPLES = 150  # docs/mutation.md states both; tests/test_meta.py keeps them equal
CLEAN_EXAMPLES = 60
ARGUMENT_EXAMPLES = 60
REASONING_EXAMPLES = 40


@settings(max_examples=NOISY_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_fast_path_equals_full_recheck(case: small.MutationCase) -> None:
    _judge_both_ways(*case)


@settings(max_examples=CLEAN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clean_mutation_cases())
def test_fast_path_equals_full_recheck_on_clean_outputs(case: small.MutationCase) -> None:
    """Well-formed transcripts under strict contracts: where the evaluator skips most checks."""
    _judge_both_ways(*case)


@st.composite
def argument_cases(draw: st.DrawFn) -> tuple[list[Any], list[Any], Contract]:
    return arguments.argument_case(DrawSource(draw))


@settings(max_examples=ARGUMENT_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argument_cases())
def test_fast_path_equals_full_recheck_with_tool_schemas(
        case: tuple[list[Any], list[Any], Contract]) -> None:
    """Calls with arguments under tool schemas: the argument operators apply, and
    tool_call_integrity (mostly on) compares kept calls."""
    _judge_both_ways(*case)


@st.composite
def reasoning_cases(draw: st.DrawFn) -> small.MutationCase:
    return reasoning.reasoning_case(DrawSource(draw))


@settings(max_examples=REASONING_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(reasoning_cases())
def test_fast_path_equals_full_recheck_with_reasoning(case: small.MutationCase) -> None:
    """Thinking blocks and reasoning items: the thinking and reasoning operators apply, and
    provider_validity (mostly on, under several profiles) judges them."""
    _judge_both_ways(*case)


@functools.cache
def _judged_on_a_seeded_sample() -> Counter[str]:
    src = RandomSource(0)
    judged: Counter[str] = Counter()
    for case in small.mutation_cases(seed=0, count=30):
        judged += _judge_both_ways(*case)
    for _ in range(10):
        judged += _judge_both_ways(*small.clean_mutation_case(src))
    for _ in range(10):
        judged += _judge_both_ways(*arguments.argument_case(src))
    for k in range(16):
        judged += _judge_both_ways(*reasoning.reasoning_case(src, reasoning.STYLES[k % 2]))
    return judged


def test_the_generator_reaches_judged_mutants() -> None:
    """Guard against a generator that silently stops producing work for the properties."""
    assert sum(_judged_on_a_seeded_sample().values()) > 400


@pytest.mark.parametrize("operator", OPERATORS)
def test_every_registered_operator_is_judged(operator: str) -> None:
    assert _judged_on_a_seeded_sample()[operator] >= 3, (
        f"the session generator gives {operator!r} (almost) no mutants: extend sessiongen.small "
        "so the equivalence property covers it")


def test_verify_mode_agrees_on_passing_pairs() -> None:
    checked = 0
    for before_raw, after_raw, contract_yaml in small.mutation_cases(seed=1, count=60):
        before, after = load_list(before_raw), load_list(after_raw)
        report = mutate_pair(before, after, make_contract(contract_yaml), verify=True)
        checked += bool(report.mutants)
    assert checked > 10


@pytest.mark.parametrize("threshold", [0, None])
def test_retention_lemmas_agree_when_a_retained_exchange_occurs_twice(threshold: int | None) -> None:
    """Outputs the generator rarely draws: a retained exchange kept twice (the search must
    move on to its second copy when an edit breaks the first), the latest request inside the
    copies, and both exchanges interleaved. verify=True raises on any difference between the
    fast path (the anchor-loss and skeleton lemmas of retention's re-check) and a full
    recheck; each layout is judged with every lemma (threshold 0) and as by default."""
    first = [user("read a"), call("c1"), result("c1", "alpha " * 6), assistant("a read")]
    second = [user("read b"), call("c2"), result("c2", "beta " * 6), assistant("b read")]
    latest = user("now fix it")
    before = [system(), *first, *second, latest]
    # a copied exchange repeats its ids: unique_tool_ids is off so that the baseline passes
    contract = make_contract({"checks": {"unique_tool_ids": False},
                              "pins": [{"name": "s", "role": "system"}],
                              "retain": {"latest_user_message": "exact", "recent_exchanges": 2,
                                         "tool_results": "complete"}})
    layouts = [
        [system(), *first, *second, *first, *second, latest],
        [system(), *first, *first, *second, latest],
        [system(), *first, *second, *second, latest],
        [system(), *first, latest, *second, latest],
        [system(), *second, *first, *second, latest],
    ]
    saved = local.SMALL_MUTANT
    if threshold is not None:
        local.SMALL_MUTANT = threshold
    try:
        for after in layouts:
            report = mutate_pair(load_list(before), load_list(copy.deepcopy(after)), contract,
                                 verify=True)
            assert report.baseline.passed and report.caught + report.survived > 10
    finally:
        local.SMALL_MUTANT = saved
