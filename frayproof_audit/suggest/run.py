"""`run_suggest`: from pair records to a `Suggestion`, one step after another.

1. Read the records (`pairs.prepare`), select the good ones (`selector`), split off the
   held-out part by a hash of each pair id.
2. Find candidates in the learned-from pairs: instruction texts many sessions share
   (`texts`), tool schemas from the calls (`inferred_tools`).
3. Measure every rule's forms with the engine (`learn.measure`, `learn.measure_windows`) and
   keep the strongest form each supports at `min_support`.
4. Judge the assembled contract on the learned-from pairs; while together the rules pass
   fewer than `min_support` of them, drop the rule that costs the most pairs.
5. Judge it on the held-out and the other pairs; mutate a sample of good pairs with it
   (`mutation`); compare with the current contract if one was given (`compare`).
6. Write the commented contract (`writer`) and read it back: what is written must mean
   exactly the contract that was measured (same fingerprint).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from frayproof_audit.contract import Contract, load_contract, parse_contract
from frayproof_audit.errors import InputError
from frayproof_audit.mutate.operators import operator_names
from frayproof_audit.suggest import learn
from frayproof_audit.suggest.compare import compare
from frayproof_audit.suggest.config import SuggestConfig, SuggestError
from frayproof_audit.suggest.facts import Facts
from frayproof_audit.suggest.families import (
    ROLE_PIN_NAMES,
    Family,
    check_families,
    exchanges_setting,
    retention_families,
    role_pin_families,
    text_pin_families,
)
from frayproof_audit.suggest.inferred_tools import InferredTools, infer_tools
from frayproof_audit.suggest.judge import Judge
from frayproof_audit.suggest.mutation import first_catchers, mutate, sample, score
from frayproof_audit.suggest.pairs import Pair, held_out, prepare
from frayproof_audit.suggest.result import Alternative, Counts, RuleResult, Share, Suggestion, within_promise
from frayproof_audit.suggest.selector import GoodSelector, parse_good
from frayproof_audit.suggest.settings import Setting
from frayproof_audit.suggest.texts import TextCandidate, needed, pin_name, text_candidates
from frayproof_audit.suggest.writer import contract_text, header


def run_suggest(records: Iterable[Any], config: SuggestConfig) -> Suggestion:
    """Suggest the strongest contract the good pairs of `records` keep (see the module docs).

    Raises `SuggestError` (an `InputError`) for a bad selector or contract to compare with,
    unknown operators, or when no good pair is left to learn from.
    """
    selector, (current, current_label) = check_options(config)
    records = list(records)
    pairs, unusable = prepare(records, config.input_format)
    judge = Judge(config.input_format)
    good = [pair for pair in pairs if selector.selects(pair, judge)]
    chosen = {pair.index for pair in good}
    others = [pair for pair in pairs if pair.index not in chosen]
    train = [pair for pair in good if not held_out(pair.key, config.holdout)]
    held = [pair for pair in good if held_out(pair.key, config.holdout)]
    if not train:
        raise SuggestError(f"good selector {config.good!r}: no good pair to learn from ({len(pairs)} usable "
                           f"pair(s), {len(good)} good, {len(held)} held out)")
    facts = {pair.index: pair.facts for pair in pairs}
    learner = _Learner(config, judge, train, facts, records_have_tools=any(p.tools is not None for p in good))
    learner.fit()
    final = learner.final_contract()
    gating = learner.gating()
    owned, failed = _evaluate(judge, pairs, final, gating)

    sampled = sample([pair for pair in good if pair.index not in failed], config.mutation_pairs)
    reports = mutate(sampled, lambda pair: judge.for_pair(final, pair), config.operators, config.max_mutants)
    mutation = score(list(reports.values())) if sampled else None
    credit, applicable = first_catchers(list(reports.values()), gating)

    rules = learner.results(owned, held, others, credit if sampled else None, applicable)
    learned = Share(len(train) - len(failed & _indices(train)), len(train))
    held_share = Share(len(failed & _indices(held)), len(held)) if held else None
    other_share = Share(len(failed & _indices(others)), len(others)) if others else None
    by_compactor = _by_compactor(others, failed)
    counts = Counts(len(records), len(unusable), len(good), len(train), len(held), len(others),
                    len({pair.session for pair in train}))
    comparison = None
    if current is not None:
        comparison = compare(current, current_label, judge, good, others, failed, sampled, reports, final,
                             config.operators, config.max_mutants)
    head = header(config, counts, learned, held_share, within_promise(held_share, config), other_share,
                  mutation)
    text = contract_text(config, head, rules, learner.written(), learner.tools(), learner.tools_note())
    contract = parse_contract(text, "<suggested contract>")
    if contract.fingerprint != final.fingerprint:  # pragma: no cover - a bug in the writer
        raise AssertionError("the written contract does not mean the contract that was measured")
    return Suggestion(config, text, contract, tuple(rules), counts, tuple(unusable), learned, held_share,
                      other_share, by_compactor, mutation, comparison)


def check_options(config: SuggestConfig) -> tuple[GoodSelector, tuple[Contract | None, str]]:
    """The good selector and the contract to compare with (and its label), read, and the
    operators checked: what `run_suggest` refuses before it reads a pair, so a caller with
    logs to read can refuse them before reading them."""
    selector = parse_good(config.good)
    current = _current(config.compare_with)
    if config.operators is not None:
        known = operator_names()
        unknown = [name for name in config.operators if name not in known]
        if unknown:
            raise SuggestError(f"operators: unknown operator(s) {', '.join(unknown)} "
                               f"(known: {', '.join(known)})")
    return selector, current


def _current(value: Any) -> tuple[Contract | None, str]:
    if value is None:
        return None, ""
    if isinstance(value, Contract):
        return value, "<contract>"
    try:
        return load_contract(value), str(value)
    except InputError as problem:
        raise SuggestError(f"compare_with: {problem}") from None


def _indices(pairs: Sequence[Pair]) -> set[int]:
    return {pair.index for pair in pairs}


def _evaluate(judge: Judge, pairs: Sequence[Pair], contract: Contract,
              settings: Sequence[Setting]) -> tuple[dict[str, set[int]], set[int]]:
    """Per setting the pairs it fails, and the pairs failing the contract at all."""
    owned: dict[str, set[int]] = {setting.key: set() for setting in settings}
    failed: set[int] = set()
    for pair in pairs:
        errors = judge.errors(pair, contract)
        if errors:
            failed.add(pair.index)
        for violation in errors:
            for setting in settings:
                if setting.owns(violation):
                    owned[setting.key].add(pair.index)
    return owned, failed


def _by_compactor(others: Sequence[Pair], failed: set[int]) -> tuple[tuple[str, Share], ...]:
    groups: dict[str, list[int]] = {}
    for pair in others:
        groups.setdefault(pair.compactor if pair.compactor is not None else "(none)", []).append(pair.index)
    return tuple((name, Share(sum(index in failed for index in indices), len(indices)))
                 for name, indices in sorted(groups.items()))


class _Learner:
    """Steps 2-4 of the module docstring, and the rule results once everything is measured."""

    def __init__(self, config: SuggestConfig, judge: Judge, train: list[Pair], facts: dict[int, Facts],
                 *, records_have_tools: bool) -> None:
        self.config = config
        self.judge = judge
        self.train = train
        self.facts = facts
        self.total = len(train)
        self.required = needed(config.min_support, self.total)
        self.records_have_tools = records_have_tools
        self.inferred: InferredTools | None = None
        self.entries: list[learn.Measured] = []
        self.text_keys: set[str] = set()
        self.texts: dict[str, str] = {}
        self.dropped: dict[str, str] = {}

    # -- learning

    def fit(self) -> None:
        config, train = self.config, self.train
        if config.infer_tools and not self.records_have_tools:
            self.inferred = infer_tools(((pair.session, name, arguments) for pair in train
                                         for name, arguments in self.facts[pair.index].calls),
                                        config.min_sessions)
        sessions = len({pair.session for pair in train})
        parts = ((pair.session, self.facts[pair.index].instruction_parts) for pair in train)
        candidates = text_candidates(parts, sessions, config.min_support, config.min_sessions)
        taken = set(ROLE_PIN_NAMES.values())
        names = [pin_name(candidate.text, taken) for candidate in candidates]
        text_families = text_pin_families(candidates, names)
        self.texts = {family.key: family.subject for family in text_families}
        self.text_keys = set(self.texts)
        formats = [pair.format for pair in train]
        families: list[Family] = [*check_families(self.records_have_tools, self.inferred, formats),
                                  *role_pin_families(), *text_families, *retention_families()]
        self.entries = learn.evidence(families, train, self.facts)
        learn.measure(self.entries, train, self.judge)
        for entry in self.entries:
            learn.choose(entry, self.total, self.required, config.min_sessions, config.min_support)
        self._keep_widest_texts(candidates)
        self._retention()
        self._repair()

    def _keep_widest_texts(self, candidates: Sequence[TextCandidate]) -> None:
        """Of the supported texts, keep those no longer kept text contains, at most
        `max_text_pins` (most widely shared first), in the order they first appear."""
        by_key = {entry.family.key: entry for entry in self.entries}
        supported = [by_key[key] for key in self.text_keys if by_key[key].chosen is not None]
        supported.sort(key=lambda entry: (-len(entry.family.subject), entry.family.key))
        kept: list[learn.Measured] = []
        for entry in supported:
            if any(entry.family.subject in other.family.subject for other in kept):
                self.entries.remove(entry)  # a line of a pinned paragraph: said already
            else:
                kept.append(entry)
        order = {candidate.text: position for position, candidate in enumerate(candidates)}
        kept.sort(key=lambda entry: order[entry.family.subject])
        for entry in kept[self.config.max_text_pins:]:
            entry.chosen = None
            entry.why = (f"Supported, but only the {self.config.max_text_pins} most widely shared texts "
                         f"are pinned (max_text_pins).")
        first_seen = {candidate.text: candidate.first_seen for candidate in candidates}
        texts = sorted((entry for entry in self.entries if entry.family.key in self.text_keys),
                       key=lambda entry: (entry.chosen is None, first_seen[entry.family.subject]))
        rest = [entry for entry in self.entries if entry.family.key not in self.text_keys]
        at = next(i for i, entry in enumerate(rest) if entry.family.kind == "retention")
        self.entries = [*rest[:at], *texts, *rest[at:]]

    def _retention(self) -> None:
        """`recent_exchanges`, and the one `compare` the retention rules share: exact, unless
        comparing by equivalence keeps more (a longer window, or tool results at all)."""
        config, train = self.config, self.train
        exact = learn.measure_windows(train, self.facts, self.judge, "exact")
        partial = {index for index, kept in exact.kept.items() if kept is not None}
        equivalent = learn.measure_windows(train, self.facts, self.judge, "equivalent", only=partial,
                                           fallback=exact)
        best_exact = exact.best(train, self.required, config.min_sessions)
        best_equivalent = equivalent.best(train, self.required, config.min_sessions)
        by_key = {entry.family.key: entry for entry in self.entries}
        latest, results = by_key["retain.latest_user_message"], by_key["retain.tool_results"]
        by_equivalence = best_equivalent > best_exact or results.chosen == 1
        windows = equivalent if by_equivalence else exact
        window = best_equivalent if by_equivalence else best_exact
        compare = "equivalent" if by_equivalence else "exact"
        if by_equivalence:
            note = (" Compared by equivalence, because recent_exchanges keeps more that way"
                    if best_equivalent > best_exact else
                    " Compared by equivalence, because tool_results passes only that way")
            for entry in (latest, results):
                if entry.chosen == 0:
                    entry.chosen = 1
                    entry.why += note + " (retention rules share one comparison)."
        shown = max(window, 1)  # with no window proposed, what the shortest one would have cost
        family = Family("retain.recent_exchanges", "retention",
                        (f"{shown}, compare: {compare}",), (exchanges_setting(shown, compare),),
                        lambda facts: facts.closed_exchanges > 0)
        entry = learn.evidence([family], train, self.facts)[0]
        entry.fails = [{pair.index for pair in train if not windows.passes(pair.index, shown)}]
        entry.chosen = 0 if window > 0 else None
        entry.why = learn.exchanges_why(window, windows, train, config.min_support, config.min_sessions)
        entry.alternatives = tuple(
            Alternative(f"{size}, compare: {measured.compare}", measured.support(size, train))
            for measured in (exact, equivalent) for size in (window, window + 1) if size > 0)
        at = next(i for i, e in enumerate(self.entries) if e.family.key == "retain.tool_results")
        self.entries.insert(at, entry)

    def _repair(self) -> None:
        """Drop rules until the whole contract passes `min_support` of the learned-from pairs
        (each rule alone does; together their failures may add up)."""
        while True:
            owned, failed = _evaluate(self.judge, self.train, self.final_contract(), self.gating())
            if self.total - len(failed) >= self.required:
                return
            alone = {key: sum(1 for index in pairs if all(index not in owned[other] for other in owned
                                                          if other != key))
                     for key, pairs in owned.items()}
            order = [setting.key for setting in self.gating()]
            if not order:  # pragma: no cover - every error finding belongs to a rule
                return
            victim = max(order, key=lambda key: (alone[key], len(owned[key]), order.index(key)))
            entry = next(e for e in self.entries if e.family.key == victim)
            entry.chosen = None
            entry.why = (f"Dropped: each rule passes at least {100 * self.config.min_support:.2f}% of the "
                         f"learned-from pairs, but together they did not; this one failed "
                         f"{len(owned[victim])} of them ({alone[victim]} that every other rule passes).")
            self.dropped[victim] = entry.why

    # -- the contract

    def chosen_settings(self) -> list[tuple[learn.Measured, Setting]]:
        out = []
        for entry in self.entries:
            if entry.chosen is not None:
                out.append((entry, entry.family.variants[entry.chosen]))
            elif entry.family.off is not None:
                out.append((entry, entry.family.off))
        return out

    def written(self) -> dict[str, Setting]:
        return {entry.family.key: setting for entry, setting in self.chosen_settings()}

    def gating(self) -> list[Setting]:
        return [setting for _, setting in self.chosen_settings() if setting.gates]

    def final_contract(self) -> Contract:
        return self.judge.of([setting for _, setting in self.chosen_settings()], isolated=False)

    def tools(self) -> list[dict[str, Any]]:
        return [tool for setting in self.gating() for tool in setting.tools]

    def tools_note(self) -> str:
        inferred = self.inferred
        if inferred is None:
            return ""
        left = f" Left out, called in fewer than {self.config.min_sessions} sessions: " \
            f"{', '.join(inferred.left_out)}." if inferred.left_out else ""
        return (f"Tool schemas inferred by frayproof-audit from {inferred.calls} call(s) in "
                f"{inferred.sessions} session(s) of the good befores, since no record carries tools: "
                f"the JSON types, required fields and enums (few, repeated values) the calls show. "
                f"Review them, or replace them with your agent's own definitions.{left}")

    # -- results

    def results(self, owned: dict[str, set[int]], held: Sequence[Pair], others: Sequence[Pair],
                credit: dict[str, int] | None, applicable: int) -> list[RuleResult]:
        held_indices, other_indices, train_indices = _indices(held), _indices(others), _indices(self.train)
        out = []
        for entry in self.entries:
            family = entry.family
            setting = None
            if entry.chosen is not None:
                setting = family.variants[entry.chosen]
            elif family.off is not None:
                setting = family.off
            proposed = entry.chosen is not None
            if proposed and setting is not None:
                fails = owned[setting.key]
                support = Share(self.total - len(fails & train_indices), self.total)
                bite_others = Share(len(fails & other_indices), len(other_indices)) if other_indices else None
                held_failures = Share(len(fails & held_indices), len(held_indices)) if held_indices else None
                bite_mutants = Share(credit[setting.key], applicable) if credit is not None else None
                label = family.labels[entry.chosen] if entry.chosen is not None else ""
            else:
                best = len(family.variants) - 1
                support = entry.support(best, self.total) if entry.fails else Share(0, self.total)
                bite_others = bite_mutants = held_failures = None
                label = "off" if family.off is not None else family.labels[-1]
            out.append(RuleResult(
                family.key, family.kind, proposed, label,
                setting.value if setting is not None else None, support,
                entry.evidence_pairs, entry.evidence_sessions, entry.why, entry.alternatives,
                bite_others, bite_mutants, held_failures,
                self.texts.get(family.key)))
        return out
