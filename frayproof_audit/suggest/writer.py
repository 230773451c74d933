"""The suggested contract as a commented YAML file a user can commit as it is.

Rules appear in the order they were measured in (the order "newly caught" counts in): the
`checks` block, then `pins`, then `retain`; inferred tool schemas come last. Each rule carries
its support, bite and reason in a comment above it; the rules not proposed are listed at the
end. Only the evidence shapes the text (no dates, no paths but the user's own selector), so the
same pairs always give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from frayproof_audit.suggest import emit
from frayproof_audit.suggest.config import SuggestConfig
from frayproof_audit.suggest.result import Counts, MutationScore, RuleResult, Share
from frayproof_audit.suggest.settings import Setting

MAX_LISTED_TEXTS = 10
"""Candidate texts not proposed that the closing comment names (the JSON lists all)."""


def _rate(value: float) -> str:
    return f"{100 * value:.2f}%"


def header(config: SuggestConfig, counts: Counts, learned: Share, held_out: Share | None,
           holdout_ok: bool, others: Share | None, mutation: MutationScore | None) -> list[str]:
    lines = [
        "Context contract suggested by frayproof-audit from logged compactions.",
        "",
        (f"Good pairs ({config.good}): {counts.good} of {counts.records - counts.unusable} usable "
         f"pair(s)" + (f" ({counts.unusable} record(s) unusable)" if counts.unusable else "") + "; "
         f"learned from {counts.learned} pair(s) of {counts.sessions} session(s), {counts.held_out} held "
         f"out by a hash of their pair id."),
        (f"Every rule passes at least {_rate(config.min_support)} of the learned-from pairs, and together "
         f"they pass {learned.text()}."),
    ]
    if held_out is None:
        lines.append("Held out: none (holdout 0): false alarms on unseen good pairs were not measured.")
    else:
        lines.append(f"Held out: this contract fails {held_out.count} of {held_out.total} good pair(s) it "
                     f"never saw ({held_out.percent()} false alarms; the support promises at most "
                     f"{_rate(config.allowed_false_alarms)}).")
        if not holdout_ok:
            lines.append("WARNING: more held-out false alarms than the support promises: the contract "
                         "overfits the pairs it learned from. See the rules with held-out failures.")
    if others is None:
        lines.append("Other pairs: none (every usable pair is good), so no bite on them was measured.")
    else:
        lines.append(f"Other pairs: this contract fails {others.text()} of them.")
    if mutation is not None:
        lines.append(f"Mutation: {mutation.applicable} mutant(s) of {mutation.pairs} good pair(s), "
                     f"{mutation.caught} caught ({_score(mutation)}).")
    lines += [
        "",
        ("Per rule: support = learned-from good pairs it passes; bite = other pairs it fails, and "
         "mutants it catches that no rule above it catches; why = the evidence."),
    ]
    out: list[str] = []
    for line in lines:
        out.extend(emit.comment(line))
    return out


def _score(mutation: MutationScore) -> str:
    value = mutation.score_percent
    return "not measured" if value is None else f"{value:.2f}%"


def _rule_comment(rule: RuleResult, indent: int) -> list[str]:
    name = rule.key.split(".", 1)[1]
    if not rule.proposed:
        return emit.comment(f"{name}: off. Why: {rule.why}", indent)
    parts = [f"support {rule.support.text()}"]
    bites = []
    if rule.bite_others is not None:
        bites.append(f"others {rule.bite_others.text()}")
    if rule.bite_mutants is not None:
        bites.append(f"mutants {rule.bite_mutants.text()}")
    if bites:
        parts.append("bite: " + ", ".join(bites))
    if rule.held_out_failures is not None and rule.held_out_failures.count:
        parts.append(f"held-out failures {rule.held_out_failures.count}/{rule.held_out_failures.total}")
    return emit.comment(f"{name} ({rule.label}): {'; '.join(parts)}.", indent) + \
        emit.comment(f"Why: {rule.why}", indent)


def contract_text(config: SuggestConfig, head: list[str], rules: Sequence[RuleResult],
                  written: dict[str, Setting], tools: Sequence[dict[str, Any]], tools_note: str) -> str:
    """The YAML document: `written` maps a rule key to what the contract holds for it."""
    out = [*head, "version: 1", f"format: {emit.string(config.input_format)}"]
    sections: dict[str, list[RuleResult]] = {"checks": [], "pins": [], "retain": []}
    for rule in rules:
        if rule.key in written:
            sections[written[rule.key].section].append(rule)
    if sections["checks"]:
        out.append("checks:")
        for rule in sections["checks"]:
            setting = written[rule.key]
            out += _rule_comment(rule, 2) + emit.entry(setting.field, setting.value, 2)
    if sections["pins"]:
        out.append("pins:")
        for rule in sections["pins"]:
            out += _rule_comment(rule, 2) + emit.list_item(written[rule.key].value, 2)
    if sections["retain"]:
        out.append("retain:")
        compare = None
        for rule in sections["retain"]:
            setting = written[rule.key]
            compare = setting.compare or compare
            out += _rule_comment(rule, 2) + emit.entry(setting.field, setting.value, 2)
        if compare is not None:
            out += emit.comment("How recent_exchanges and tool_results compare messages and contents.", 2)
            out += emit.entry("compare", compare, 2)
    if tools:
        out += [*emit.comment(tools_note), "tools:"]
        for tool in tools:
            out += emit.list_item(tool, 2)
    rest = [rule for rule in rules if rule.key not in written]
    if rest:
        out += ["", *emit.comment("Not proposed:")]
        texts = [rule for rule in rest if rule.text is not None]
        hidden = {rule.key for rule in texts[MAX_LISTED_TEXTS:]}
        for rule in rest:
            if rule.key in hidden:
                continue
            subject = f" {json.dumps(rule.text, ensure_ascii=False)}" if rule.text is not None else ""
            out += emit.comment(f"- {rule.key}{subject}: {rule.why}")
        if len(texts) > MAX_LISTED_TEXTS:
            out += emit.comment(f"- ... and {len(texts) - MAX_LISTED_TEXTS} more candidate text(s).")
    return "\n".join(out) + "\n"
