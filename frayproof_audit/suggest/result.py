"""The values `suggest` returns: every rule with its support, bite and reason, the held-out
verdict, the mutation measurement and the comparison with a current contract.

`Suggestion.to_dict()` is the `--format json` document (schema_version 1, keys in a fixed
order, rates rounded to six places), `Suggestion.contract_text` the commented YAML contract.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.suggest.config import SuggestConfig
from frayproof_audit.suggest.pairs import Unusable

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Share:
    """`count` of `total` (a rate; None when there is nothing to count)."""

    count: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.count / self.total if self.total else None

    def percent(self) -> str:
        rate = self.rate
        return "n/a" if rate is None else f"{100 * rate:.2f}%"

    def text(self) -> str:
        return f"{self.percent()} ({self.count}/{self.total})"

    def to_dict(self) -> dict[str, Any]:
        rate = self.rate
        return {"count": self.count, "total": self.total,
                "rate": None if rate is None else round(rate, 6)}


def _share(value: Share | None) -> dict[str, Any] | None:
    return None if value is None else value.to_dict()


@dataclass(frozen=True, slots=True)
class Alternative:
    """A form of the rule that was measured: what it would say and the support it has."""

    label: str
    support: Share

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "support": self.support.to_dict()}


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule considered, proposed or not."""

    key: str
    """`checks.tool_pairs`, `pins.<name>`, `retain.recent_exchanges`, ..."""
    kind: str
    """`check`, `pin`, `retention` or `tools`."""
    proposed: bool
    label: str
    """What the rule says (`allow_trailing_pending_call: true`, `role: system, match: exact`)."""
    value: Any
    """What the contract holds for it (None: nothing is written)."""
    support: Share
    """Learned-from good pairs the rule passes (in the whole contract when proposed)."""
    evidence_pairs: int
    evidence_sessions: int
    """Learned-from pairs (and their distinct sessions) the rule has something to check in."""
    why: str
    alternatives: tuple[Alternative, ...] = ()
    bite_others: Share | None = None
    """Other (not good) pairs the rule fails."""
    bite_mutants: Share | None = None
    """Mutants the rule catches and no rule before it does, of every applicable mutant."""
    held_out_failures: Share | None = None
    """Held-out good pairs the rule fails (its share of the false alarms)."""
    text: str | None = None
    """The text of a `contains` pin (proposed or not)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "proposed": self.proposed,
            "label": self.label,
            "text": self.text,
            "value": self.value,
            "support": self.support.to_dict(),
            "evidence": {"pairs": self.evidence_pairs, "sessions": self.evidence_sessions},
            "bite": {"others": _share(self.bite_others), "mutants": _share(self.bite_mutants)},
            "held_out_failures": _share(self.held_out_failures),
            "why": self.why,
            "alternatives": [alternative.to_dict() for alternative in self.alternatives],
        }


@dataclass(frozen=True, slots=True)
class OperatorScore:
    name: str
    caught: int
    survived: int
    skipped: int

    @property
    def applicable(self) -> int:
        return self.caught + self.survived

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "caught": self.caught, "survived": self.survived,
                "skipped": self.skipped, "applicable": self.applicable,
                "score_percent": _score(self.caught, self.applicable)}


def _score(caught: int, applicable: int) -> float | None:
    """The mutation runner's score: `round(100 * caught / applicable, 2)`, None when unmeasured."""
    return round(100 * caught / applicable, 2) if applicable else None


@dataclass(frozen=True, slots=True)
class MutationScore:
    """A contract's mutants over a sample of pairs, by operator (the runner's counts)."""

    pairs: int
    """Pairs mutated (their baseline passed)."""
    operators: tuple[OperatorScore, ...]

    @property
    def caught(self) -> int:
        return sum(operator.caught for operator in self.operators)

    @property
    def survived(self) -> int:
        return sum(operator.survived for operator in self.operators)

    @property
    def applicable(self) -> int:
        return self.caught + self.survived

    @property
    def score_percent(self) -> float | None:
        return _score(self.caught, self.applicable)

    def operator(self, name: str) -> OperatorScore | None:
        return next((operator for operator in self.operators if operator.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "caught": self.caught, "survived": self.survived,
                "applicable": self.applicable, "score_percent": self.score_percent,
                "operators": [operator.to_dict() for operator in self.operators]}


@dataclass(frozen=True, slots=True)
class Difference:
    """A place where the two contracts say different things (None: that contract is silent)."""

    path: str
    current: Any
    suggested: Any

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "current": self.current, "suggested": self.suggested}


@dataclass(frozen=True, slots=True)
class Comparison:
    """The current contract and the suggested one on the same pairs."""

    current: str
    """Where the current contract came from (its path, or `<contract>`)."""
    good_failures: tuple[Share, Share]
    """Good pairs failing (false alarms), (current, suggested), over every good pair."""
    other_failures: tuple[Share, Share]
    """Other pairs failing, (current, suggested)."""
    mutation: tuple[MutationScore, MutationScore] | None
    """Mutation of the sampled good pairs both contracts pass, (current, suggested)."""
    differences: tuple[Difference, ...]

    def to_text(self) -> str:
        """Side by side: false alarms, bite on the others, mutation per operator, differences."""
        good, other = self.good_failures, self.other_failures
        lines = [
            f"COMPARED with {self.current} (current -> suggested):",
            f"  good pairs failing (false alarms): {good[0].text()} -> {good[1].text()}",
            f"  other pairs failing: {other[0].text()} -> {other[1].text()}",
        ]
        if self.mutation is not None:
            current, suggested = self.mutation
            lines.append(f"  mutation on {current.pairs} good pair(s): {_percent(current)} -> "
                         f"{_percent(suggested)}")
            for operator in suggested.operators:
                before = current.operator(operator.name)
                old = f"{before.caught}/{before.applicable}" if before is not None else "-"
                lines.append(f"    {operator.name}: {old} -> {operator.caught}/{operator.applicable}")
        for difference in self.differences:
            lines.append(f"  {difference.path}: {_shown(difference.current)} -> "
                         f"{_shown(difference.suggested)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        def pair(values: tuple[Any, Any]) -> dict[str, Any]:
            return {"current": values[0].to_dict(), "suggested": values[1].to_dict()}

        return {
            "current": self.current,
            "good_failures": pair(self.good_failures),
            "other_failures": pair(self.other_failures),
            "mutation": None if self.mutation is None else pair(self.mutation),
            "differences": [difference.to_dict() for difference in self.differences],
        }


def _percent(score: MutationScore) -> str:
    value = score.score_percent
    return f"{score.caught}/{score.applicable} ({'not measured' if value is None else f'{value:.2f}%'})"


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:79] + "…"


@dataclass(frozen=True, slots=True)
class Counts:
    records: int
    unusable: int
    good: int
    learned: int
    held_out: int
    others: int
    sessions: int
    """Distinct sessions among the learned-from pairs."""

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "unusable": self.unusable, "good": self.good,
                "learned": self.learned, "held_out": self.held_out, "others": self.others,
                "sessions": self.sessions}


def within_promise(false_alarms: Share | None, config: SuggestConfig) -> bool:
    """Held-out false alarms at most `1 - min_support` (none measured: nothing broken)."""
    rate = None if false_alarms is None else false_alarms.rate
    return rate is None or rate <= config.allowed_false_alarms + 1e-12


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested contract and the evidence for each of its rules."""

    config: SuggestConfig
    contract_text: str
    contract: Contract
    rules: tuple[RuleResult, ...]
    counts: Counts
    unusable: tuple[Unusable, ...]
    learned: Share
    """Learned-from good pairs the whole contract passes."""
    held_out: Share | None
    """Held-out good pairs the whole contract fails (false alarms); None without a holdout."""
    others: Share | None
    """Other pairs the whole contract fails; None when every pair is good."""
    others_by_compactor: tuple[tuple[str, Share], ...]
    mutation: MutationScore | None
    comparison: Comparison | None

    @property
    def proposed(self) -> tuple[RuleResult, ...]:
        return tuple(rule for rule in self.rules if rule.proposed)

    @property
    def holdout_ok(self) -> bool:
        """The held-out false-alarm rate is within what the support promises (1 - min_support)."""
        return within_promise(self.held_out, self.config)

    @property
    def exit_code(self) -> int:
        """0, or 1 when the held-out false alarms break the support's promise (the contract
        overfits): it is still written, but a command must not report success."""
        return 0 if self.holdout_ok else 1

    def rule(self, key: str) -> RuleResult | None:
        return next((rule for rule in self.rules if rule.key == key), None)

    def to_text(self) -> str:
        """A terminal summary: the totals, then one line per rule (proposed first)."""
        counts = self.counts
        lines = [
            f"SUGGESTED: {len(self.proposed)} rule(s) from {counts.learned} good pair(s) of "
            f"{counts.sessions} session(s) ({self.config.good}); {counts.held_out} held out, "
            f"{counts.others} other, {counts.unusable} unusable.",
            f"LEARNED: the contract passes {self.learned.text()} of the pairs it learned from.",
        ]
        if self.held_out is not None:
            verdict = "ok" if self.holdout_ok else "OVERFITS"
            lines.append(f"HELD OUT: {self.held_out.count}/{self.held_out.total} false alarm(s) "
                         f"({self.held_out.percent()}, at most {100 * self.config.allowed_false_alarms:.2f}% "
                         f"promised): {verdict}.")
        if self.others is not None:
            lines.append(f"OTHERS: the contract fails {self.others.text()}.")
        if self.mutation is not None:
            score = self.mutation.score_percent
            lines.append(f"MUTATION: {self.mutation.caught}/{self.mutation.applicable} caught "
                         f"({'not measured' if score is None else f'{score:.2f}%'}) on "
                         f"{self.mutation.pairs} good pair(s).")
        for rule in sorted(self.rules, key=lambda rule: not rule.proposed):
            if rule.proposed:
                bite = ", ".join(f"{name} {share.percent()}" for name, share in
                                 (("others", rule.bite_others), ("mutants", rule.bite_mutants))
                                 if share is not None)
                lines.append(f"RULE {rule.key} [{rule.label}]: support {rule.support.text()}"
                             + (f"; bite {bite}" if bite else "") + ".")
            else:
                lines.append(f"NOT PROPOSED {rule.key}: {rule.why}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "suggestion",
            "config": self.config.to_dict(),
            "counts": self.counts.to_dict(),
            "learned": self.learned.to_dict(),
            "held_out": {
                "false_alarms": _share(self.held_out),
                "allowed_rate": round(self.config.allowed_false_alarms, 6),
                "ok": self.holdout_ok,
            },
            "others": {
                "failed": _share(self.others),
                "by_compactor": {name: share.to_dict() for name, share in self.others_by_compactor},
            },
            "rules": [rule.to_dict() for rule in self.rules],
            "mutation": None if self.mutation is None else self.mutation.to_dict(),
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "unusable": [problem.to_dict() for problem in self.unusable],
            "contract": self.contract_text,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)
