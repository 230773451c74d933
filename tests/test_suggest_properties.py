"""Property: the suggested contract passes the pairs it learned from at the stated support.

Logs are drawn with sessiongen's small builders (noisy sessions and plausible compactions, so
rules fail on some pairs and hold on others), over a few shared sessions; the verdicts are
recomputed with `check` on the contract as written.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit import check
from frayproof_audit.suggest import SuggestError, held_out, record_key, suggest
from frayproof_audit.suggest.texts import needed
from sessiongen import small
from sessiongen.strategies import DrawSource


@st.composite
def logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    source = DrawSource(draw)
    records = []
    for number in range(draw(st.integers(1, 6))):
        before = small.noisy_session(source) if draw(st.booleans()) else small.agent_session(source)
        after = small.plausible_compaction(source, before)
        records.append({"pair_id": f"p{number}", "session_id": f"s{draw(st.integers(0, 3))}",
                        "before": before, "after": after})
    return records


@settings(max_examples=40, deadline=None)
@given(logs(), st.sampled_from([0.5, 0.75, 0.9, 1.0]), st.sampled_from([0.0, 0.3]), st.booleans())
def test_the_contract_passes_its_learned_pairs_at_the_stated_support(
        records: list[dict[str, Any]], min_support: float, holdout: float, mutate: bool) -> None:
    learned = [r for r in records if not held_out(record_key(r), holdout)]
    try:
        found = suggest(records, min_support=min_support, holdout=holdout,
                        mutation_pairs=1 if mutate else 0, max_mutants=20)
    except SuggestError as problem:
        assert not learned and "no good pair to learn from" in str(problem)
        return
    assert found.counts.unusable == 0 and found.counts.learned == len(learned)
    passing = sum(check(r["before"], r["after"], found.contract).passed for r in learned)
    assert passing == found.learned.count >= needed(min_support, len(learned))
    for rule in found.proposed:
        assert rule.support.count >= needed(min_support, len(learned)), rule.key
    if found.mutation is not None:
        assert sum(rule.bite_mutants.count for rule in found.proposed if rule.bite_mutants) == \
            found.mutation.caught
