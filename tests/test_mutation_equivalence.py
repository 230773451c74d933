"""The fast path is the reference path, faster: a property test over random sessions.

For random sessions, outputs and contracts (see `tests/mutation_sessions.py`) and every
operator, each distinct mutant is judged twice: by the fast path (copy-on-write assembly,
reused views and identities, the incremental evaluator) and by a full recheck,
`check_loaded(before, load_list(mutant), contract)` on a deep-copied, in-place-edited mutant.
The groups (sites, index), the verdicts, the error-finding checks and the whole findings must
be equal. Baselines are not consulted, so failing outputs exercise the evaluator too.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.engine import check_loaded
from frayproof_audit.mutate import OPERATORS, mutate_pair
from frayproof_audit.mutate.fastpath import Mutant, SharedPair, shares_mutable_objects
from frayproof_audit.mutate.operators import Candidate, dedupe, get_operator
from frayproof_audit.mutate.runner import reference_mutants
from frayproof_audit.prepared import prepare_before
from frayproof_audit.snapshot import load_list
from tests import mutation_sessions
from tests.helpers import make_contract


def _judge_both_ways(before_raw: list[Any], after_raw: list[Any], contract_doc: Any) -> int:
    contract = make_contract(contract_doc)
    before, after = load_list(before_raw), load_list(after_raw)
    assert not shares_mutable_objects(after.wire)
    facts = prepare_before(before, contract)
    shared = SharedPair(after, contract, facts)
    judged = 0
    for name in OPERATORS:
        candidates = get_operator(name).find_sites(after, contract, facts)
        cache: dict[int, Mutant] = {}

        def key(candidate: Candidate, cache: dict[int, Mutant] = cache) -> Hashable:
            return shared.key(candidate, cache)

        fast_groups = dedupe(candidates, key)
        slow = reference_mutants(after.wire, candidates)
        assert [(g.sites, g.first.message_index) for g in fast_groups] == [
            (g.sites, g.first.message_index) for g, _ in slow]
        for group, (_, messages) in zip(fast_groups, slow, strict=True):
            mutant = cache.get(id(group.first)) or shared.assemble(group.first.edit)[0]
            assert mutant.loaded.wire == messages
            fast = shared.evaluate(group.first, mutant)
            full = check_loaded(before, load_list(messages), contract)
            assert fast.passed == full.passed
            assert fast.error_checks() == full.error_checks()
            assert fast.violations == full.violations
            judged += 1
    return judged


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_fast_path_equals_full_recheck(seed: int) -> None:
    before, after, contract_yaml = mutation_sessions.case(seed)
    _judge_both_ways(before, after, contract_yaml)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_fast_path_equals_full_recheck_on_clean_outputs(seed: int) -> None:
    """Well-formed transcripts under strict contracts: where the evaluator skips most checks."""
    rng = random.Random(seed)
    before = mutation_sessions.clean_session(rng)
    after = mutation_sessions.compaction(before, rng)
    document = {"pins": [{"name": "system", "role": "system"},
                         {"name": "text", "contains": rng.choice(mutation_sessions.LITERALS)}],
                "retain": {"latest_user_message": "exact",
                           "recent_exchanges": rng.randint(1, 3),
                           "tool_results": "complete"}}
    if rng.random() < 0.5:
        document["checks"] = {"tool_pairs": {"allow_trailing_pending_call": True},
                              "structure": {"system_messages": "anywhere"}}
    _judge_both_ways(before, after, mutation_sessions.contract_yaml(document))


def test_the_generator_reaches_judged_mutants() -> None:
    """Guard against a generator that silently stops producing work for the properties."""
    judged = sum(_judge_both_ways(*mutation_sessions.case(seed)) for seed in range(40))
    assert judged > 400


def test_verify_mode_agrees_on_passing_pairs() -> None:
    checked = 0
    for seed in range(60):
        before_raw, after_raw, contract_yaml = mutation_sessions.case(seed)
        before, after = load_list(before_raw), load_list(after_raw)
        report = mutate_pair(before, after, make_contract(contract_yaml), verify=True)
        checked += bool(report.mutants)
    assert checked > 10
