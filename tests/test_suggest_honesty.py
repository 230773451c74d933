"""Held-out honesty and the whole contract's support: what `suggest` promises about its rules."""

from __future__ import annotations

import copy
import json

from frayproof_audit import check
from frayproof_audit.suggest import held_out, suggest
from frayproof_audit.suggest.texts import needed
from tests.helpers import history


def _summarised(before: list[dict], keep: int) -> list[dict]:
    """The system prompt, a summary, the last `keep` closed exchanges and the latest request."""
    users = [i for i, m in enumerate(before) if m["role"] == "user"]
    start = users[-1 - keep]
    return [before[0], {"role": "system", "content": "Summary of earlier turns."}, *before[start:]]


def _session(number: int) -> list[dict]:
    before = history(5)
    for message in before:  # ids and texts of one session only
        if message.get("tool_calls"):
            for call in message["tool_calls"]:
                call["id"] = f"{call['id']}-{number}"
        if message["role"] == "tool":
            message["tool_call_id"] = f"{message['tool_call_id']}-{number}"
    return before


def test_a_contract_that_overfits_the_pairs_it_learned_from_says_so() -> None:
    # Every learned-from pair keeps its last three exchanges; the held-out ones keep two. The
    # window learned from the first is wrong for the second, and the held-out rate shows it.
    records = []
    for number in range(60):
        key = f"pair-{number:03d}"
        before = _session(number)
        keep = 2 if held_out(key, 0.25) else 3
        records.append({"pair_id": key, "session_id": f"s{number}", "before": before,
                        "after": _summarised(before, keep)})
    found = suggest(records, holdout=0.25, mutation_pairs=0)
    held = [r for r in records if held_out(r["pair_id"], 0.25)]
    assert 5 <= len(held) < 30
    assert found.rule("retain.recent_exchanges").value == 3
    assert found.held_out is not None
    assert (found.held_out.count, found.held_out.total) == (len(held), len(held))
    assert not found.holdout_ok and found.exit_code == 1
    assert f"HELD OUT: {len(held)}/{len(held)} false alarm(s) (100.00%, at most 1.00% promised): OVERFITS." \
        in found.to_text().splitlines()
    assert "WARNING: more held-out false alarms than the support promises" in found.contract_text
    rule = found.rule("retain.recent_exchanges")
    assert rule.held_out_failures is not None and rule.held_out_failures.count == len(held)
    assert "held-out failures" in found.contract_text
    assert json.loads(found.to_json())["held_out"]["ok"] is False
    # Learning from every pair instead finds the window both kinds keep.
    assert suggest(records, holdout=0, mutation_pairs=0).rule("retain.recent_exchanges").value == 2


def test_the_whole_contract_keeps_the_stated_support_when_rules_fail_different_pairs() -> None:
    # 200 pairs; three rules each fail one different pair: each passes 199/200 >= 198, but
    # together only 197 pass. The contract must still pass 198, so one rule is dropped.
    records = []
    for number in range(200):
        before = _session(number)
        after = copy.deepcopy(before)
        if number == 0:
            after[0]["content"] = "You are a different agent."
        elif number == 1:
            after.pop()  # the latest request
        elif number == 2:
            after[3]["content"] = "data 0 …"  # the first exchange's tool result
        records.append({"pair_id": f"p{number:03d}", "session_id": f"s{number}", "before": before,
                        "after": after})
    found = suggest(records, holdout=0, mutation_pairs=0)
    passing = sum(check(r["before"], r["after"], found.contract).passed for r in records)
    assert passing == found.learned.count >= needed(0.99, 200) == 198
    dropped = [rule for rule in found.rules if rule.why.startswith("Dropped")]
    assert len(dropped) == 1
    assert dropped[0].key in ("pins.system-prompt", "retain.latest_user_message")
    for rule in found.proposed:
        assert rule.support.count >= 198, rule.key
    strict = suggest(records, holdout=0, mutation_pairs=0, min_support=1.0)
    assert strict.learned.count == 200
    assert strict.rule("pins.system-prompt").proposed is False
    assert strict.rule("retain.latest_user_message").proposed is False
    assert strict.rule("retain.tool_results").proposed is False
