"""The current contract beside the suggested one: false alarms, bite, mutants, differences.

Both are judged on the same pairs by the same engine. Mutation is compared on the sampled good
pairs whose baseline both contracts pass (a contract failing a pair measures nothing on it), so
the per-operator scores share their pairs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.mutate import MutationReport
from frayproof_audit.suggest.judge import Judge
from frayproof_audit.suggest.mutation import mutate, score
from frayproof_audit.suggest.pairs import Pair
from frayproof_audit.suggest.result import Comparison, Difference, Share


def compare(current: Contract, label: str, judge: Judge, good: Sequence[Pair], others: Sequence[Pair],
            suggested_failed: set[int], sampled: Sequence[Pair],
            suggested_reports: dict[int, MutationReport], suggested: Contract,
            operators: tuple[str, ...] | None, max_mutants: int | None) -> Comparison:
    failed = {pair.index for pair in (*good, *others) if judge.errors(pair, current)}

    def shares(pairs: Sequence[Pair]) -> tuple[Share, Share]:
        indices = {pair.index for pair in pairs}
        return (Share(len(failed & indices), len(indices)),
                Share(len(suggested_failed & indices), len(indices)))

    mutation = None
    if sampled:
        reports = mutate(sampled, lambda pair: judge.for_pair(current, pair), operators, max_mutants)
        common = [pair.index for pair in sampled
                  if reports[pair.index].baseline.passed and suggested_reports[pair.index].baseline.passed]
        mutation = (score([reports[index] for index in common]),
                    score([suggested_reports[index] for index in common]))
    return Comparison(label, shares(good), shares(others), mutation,
                      tuple(differences(current.normalised(), suggested.normalised())))


def _plain(value: Any) -> Any:
    """JSON values, with an option held as (name, value) pairs (`tool_arguments.rules`) shown
    as the mapping the contract spells."""
    value = json.loads(json.dumps(value, default=list))
    return _mappings(value)


def _mappings(value: Any) -> Any:
    if isinstance(value, dict):
        return {name: _mappings(item) for name, item in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                         for item in value):
            return {item[0]: _mappings(item[1]) for item in value}
        return [_mappings(item) for item in value]
    return value


def _pin_text(pin: dict[str, Any]) -> str:
    what = f"role: {pin['role']}" if pin.get("role") is not None else \
        f"contains: {json.dumps(pin.get('contains'), ensure_ascii=False)}"
    severity = f", severity: {pin['severity']}" if pin.get("severity") is not None else ""
    return f"{what}, match: {pin.get('match', 'exact')}{severity}"


def differences(current: dict[str, Any], suggested: dict[str, Any]) -> list[Difference]:
    """What the two contracts (their `normalised()` forms) say differently, path by path. Pins
    are matched by what they keep, not by name."""
    current, suggested = _plain(current), _plain(suggested)
    found: list[Difference] = []
    if current["format"] != suggested["format"]:
        found.append(Difference("format", current["format"], suggested["format"]))
    checks_c, checks_s = current["checks"], suggested["checks"]
    for key in sorted(set(checks_c) | set(checks_s)):
        one, other = checks_c.get(key), checks_s.get(key)
        if one is None or other is None:
            found.append(Difference(f"checks.{key}", "on" if one else "off", "on" if other else "off"))
            continue
        if one["severity"] != other["severity"]:
            found.append(Difference(f"checks.{key}.severity", one["severity"], other["severity"]))
        for option in sorted(set(one["options"]) | set(other["options"])):
            if one["options"].get(option) != other["options"].get(option):
                found.append(Difference(f"checks.{key}.{option}", one["options"].get(option),
                                        other["options"].get(option)))
    pins_c = [_pin_text(pin) for pin in current["pins"]]
    pins_s = [_pin_text(pin) for pin in suggested["pins"]]
    found += [Difference("pins", text, None) for text in pins_c if text not in pins_s]
    found += [Difference("pins", None, text) for text in pins_s if text not in pins_c]
    for name in sorted(set(current["retain"]) | set(suggested["retain"])):
        one, other = current["retain"].get(name), suggested["retain"].get(name)
        if one != other:
            found.append(Difference(f"retain.{name}", one, other))
    tools_c = {tool["name"]: tool["parameters"] for tool in current["tools"]}
    tools_s = {tool["name"]: tool["parameters"] for tool in suggested["tools"]}
    for name in sorted(set(tools_c) | set(tools_s)):
        if tools_c.get(name) != tools_s.get(name):
            found.append(Difference(f"tools.{name}", tools_c.get(name), tools_s.get(name)))
    return found
