"""The contract fingerprint: equal for equal meaning, different for any change of meaning."""

from __future__ import annotations

import pytest

from frayproof_audit.contract import Contract, parse_contract

BASE = """
version: 1
checks:
  tool_pairs: {enabled: true}
pins:
  - {name: sys, role: system}
retain:
  latest_user_message: exact
"""

SAME_MEANING = [
    "# a comment\nversion: 1\nretain: {latest_user_message: exact}\npins: [{role: system, name: sys}]\n",
    BASE.replace("{enabled: true}", "{enabled: true, severity: error}"),
    BASE + "\n\n# trailing comment\n",
]

OTHER_MEANING = [
    BASE.replace("{enabled: true}", "{enabled: false}"),
    BASE.replace("{enabled: true}", "{severity: warning}"),
    BASE.replace("role: system", "contains: Never"),
    BASE.replace("latest_user_message: exact", "recent_exchanges: 2"),
    BASE + "format: anthropic\n",
]


@pytest.mark.parametrize("text", SAME_MEANING)
def test_same_meaning_same_fingerprint(text: str) -> None:
    base = parse_contract(BASE)
    other = parse_contract(text)
    assert other.sha256 != base.sha256
    assert other.fingerprint == base.fingerprint


@pytest.mark.parametrize("text", OTHER_MEANING)
def test_other_meaning_other_fingerprint(text: str) -> None:
    assert parse_contract(text).fingerprint != parse_contract(BASE).fingerprint


def test_disabled_checks_do_not_count() -> None:
    """An opt-in check a later release adds (disabled by default) keeps old fingerprints."""
    contract = parse_contract(BASE)
    assert "tool_call_integrity" not in contract.normalised()["checks"]
    assert Contract().fingerprint == parse_contract("version: 1\n").fingerprint
