"""`suggest` on a corpus mixing good and buggy compactors (issue 31's Tests section).

The corpus (tests/suggest_support.py) uses sessiongen's three good compactors and its six buggy
ones, each bug class kept out of the good compactors. Every verdict asserted here is recomputed
with the public engine (`check`) on the contract as written, not read back from the suggestion.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from frayproof_audit import check, load_contract
from frayproof_audit.contract import parse_contract
from frayproof_audit.suggest import Suggestion, held_out, record_key, suggest
from frayproof_audit.suggest.texts import needed
from sessiongen.realistic import BUGGY_COMPACTORS, GOOD_COMPACTORS
from tests.helpers import EXAMPLES
from tests.suggest_support import POLICY, account_line, make_records

GOOD = "compactor=" + ",".join(GOOD_COMPACTORS)
OPTIONS = {"mutation_pairs": 6, "max_mutants": None}  # no budget: per-operator scores compare


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return make_records(7, 60, 5)


@pytest.fixture(scope="module")
def suggestion(records: list[dict]) -> Suggestion:
    return suggest(records, good=GOOD, compare_with=str(EXAMPLES / "mutation_contract.yaml"), **OPTIONS)


def _fails(record: dict, contract: object) -> bool:
    return not check(record["before"], record["after"], contract).passed


def test_it_passes_every_good_pair_it_learned_from_and_the_held_out_ones(
        records: list[dict], suggestion: Suggestion) -> None:
    contract = parse_contract(suggestion.contract_text)
    good = [r for r in records if r["compactor"] in GOOD_COMPACTORS]
    learned = [r for r in good if not held_out(record_key(r), 0.2)]
    held = [r for r in good if held_out(record_key(r), 0.2)]
    assert learned and held
    assert not [r["pair_id"] for r in learned if _fails(r, contract)]
    held_failures = sum(_fails(r, contract) for r in held)
    assert held_failures <= len(held) - needed(0.99, len(held))
    assert suggestion.learned.count == suggestion.learned.total == len(learned)
    assert suggestion.held_out is not None and suggestion.held_out.count == held_failures
    assert suggestion.holdout_ok and suggestion.exit_code == 0


@pytest.mark.parametrize("bug", sorted(BUGGY_COMPACTORS))
def test_it_fails_every_pair_of_every_planted_bug_class(
        records: list[dict], suggestion: Suggestion, bug: str) -> None:
    contract = parse_contract(suggestion.contract_text)
    pairs = [r for r in records if r["compactor"] == bug]
    assert pairs
    assert [r["pair_id"] for r in pairs if not _fails(r, contract)] == []
    assert dict(suggestion.others_by_compactor)[bug].count == len(pairs)


def test_it_scores_at_least_the_hand_written_mutation_contract(suggestion: Suggestion) -> None:
    comparison = suggestion.comparison
    assert comparison is not None and comparison.mutation is not None
    current, suggested = comparison.mutation
    assert current.pairs == suggested.pairs >= 3
    assert current.applicable > 0 and suggested.applicable > 0
    assert suggested.score_percent is not None and current.score_percent is not None
    assert suggested.score_percent >= current.score_percent
    for operator in current.operators:
        mine = suggested.operator(operator.name)
        assert mine is not None, operator.name
        assert mine.caught * operator.applicable >= operator.caught * mine.applicable, operator.name
    assert comparison.good_failures[1].count == 0


def test_the_comparison_names_the_rules_that_differ(suggestion: Suggestion) -> None:
    comparison = suggestion.comparison
    assert comparison is not None
    paths = {difference.path for difference in comparison.differences}
    # mutation_contract.yaml has strict pairing, no developer or text pin, no inferred tools.
    assert "checks.tool_pairs.allow_trailing_pending_call" in paths
    assert "checks.tool_call_integrity" in paths
    assert any(d.path == "pins" and d.current is None and "role: developer" in d.suggested
               for d in comparison.differences)
    assert not any(d.path == "pins" and d.current is not None for d in comparison.differences)
    current_bad, suggested_bad = comparison.other_failures
    assert suggested_bad.count >= current_bad.count


def test_the_shared_policy_is_pinned_and_no_pin_holds_a_string_of_one_session(
        records: list[dict], suggestion: Suggestion) -> None:
    contract = parse_contract(suggestion.contract_text)
    texts = [pin.contains for pin in contract.pins if pin.contains is not None]
    assert POLICY in texts
    assert {pin.role for pin in contract.pins if pin.role} == {"system", "developer"}
    for text in texts:
        sessions = {r["session_id"] for r in records if any(
            isinstance(m.get("content"), str) and text in m["content"] for m in r["before"])}
        assert len(sessions) >= 2, text
    assert not any(text.startswith("Customer account") for text in texts)


def test_a_string_of_one_session_is_never_pinned_even_at_a_low_support(records: list[dict]) -> None:
    # At 1% a string of one session among ~50 passes the share, and the sessions logged twice
    # repeat it in several pairs: only the rule of two distinct sessions keeps it out.
    twice = [r for r in records if r["pair_id"].endswith(":1")]
    assert twice, "the corpus logs some sessions twice"
    options = {"good": GOOD, "min_support": 0.01, "mutation_pairs": 0, "max_text_pins": 1000}
    found = suggest(records, **options)
    texts = [pin.contains for pin in found.contract.pins if pin.contains is not None]
    assert POLICY in texts
    assert not [t for t in texts if "Customer account" in t]
    single = suggest(records, min_sessions=1, **options)
    assert any(account_line(r["session_id"]) in (pin.contains or "")
               for r in twice for pin in single.contract.pins), "with min_sessions=1 it would be"


def test_the_same_inputs_give_the_same_contract_byte_for_byte(
        records: list[dict], suggestion: Suggestion) -> None:
    shuffled = list(records)
    random.Random(3).shuffle(shuffled)
    again = suggest(shuffled, good=GOOD, compare_with=str(EXAMPLES / "mutation_contract.yaml"), **OPTIONS)
    assert again.contract_text == suggestion.contract_text
    first, second = suggestion.to_dict(), again.to_dict()
    assert first["rules"] == second["rules"] and first["mutation"] == second["mutation"]
    assert first["comparison"] == second["comparison"]


def test_every_rule_carries_support_bite_and_why(suggestion: Suggestion) -> None:
    text = suggestion.contract_text
    for rule in suggestion.proposed:
        assert rule.support.rate is not None and rule.support.rate >= 0.99, rule.key
        assert rule.bite_others is not None and rule.bite_mutants is not None, rule.key
        assert rule.why, rule.key
        assert f"{rule.key.split('.', 1)[1]} ({rule.label}): support {rule.support.text()}" in text
    assert suggestion.mutation is not None and suggestion.mutation.pairs == 6
    # Every caught mutant is credited to exactly one rule: the first that rejects it.
    assert sum(rule.bite_mutants.count for rule in suggestion.proposed if rule.bite_mutants) == \
        suggestion.mutation.caught
    keys = [rule.key for rule in suggestion.proposed]
    assert keys[:3] == ["checks.tool_pairs", "checks.unique_tool_ids", "checks.structure"]
    assert suggestion.rule("retain.recent_exchanges").value == 2
    assert "# Tool schemas inferred by frayproof-audit" in text
    assert "Inferred by frayproof-audit suggest from" in text


def test_the_json_document_holds_the_contract_and_every_rule(suggestion: Suggestion) -> None:
    document = suggestion.to_dict()
    assert document["schema_version"] == 1 and document["kind"] == "suggestion"
    assert document["contract"] == suggestion.contract_text
    assert [rule["key"] for rule in document["rules"]] == [rule.key for rule in suggestion.rules]
    assert document["held_out"]["ok"] is True
    assert document["others"]["failed"]["count"] == document["others"]["failed"]["total"] == 30
    assert json.loads(suggestion.to_json()) == document


def test_the_written_contract_is_one_the_audit_reads(tmp_path: Path, records: list[dict],
                                                     suggestion: Suggestion) -> None:
    import orjson

    from frayproof_audit.corpus import audit

    path = tmp_path / "contract.yaml"
    path.write_text(suggestion.contract_text, encoding="utf-8")
    assert load_contract(str(path)).fingerprint == suggestion.contract.fingerprint
    logs = tmp_path / "logs.jsonl"
    logs.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    summary = audit([str(logs)], str(path), str(tmp_path / "out"), jobs=1, mutate=False, fail_on=())
    expected = sum(_fails(record, suggestion.contract) for record in records)
    assert (summary.pairs, summary.failed, summary.input_errors) == (len(records), expected, 0)
    assert expected == 30
