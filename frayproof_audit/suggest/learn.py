"""Measuring every candidate rule on the learned-from pairs and choosing the strongest forms.

Measuring is a few engine runs per pair, not one per rule: the strongest form of every family
goes into one contract, each error finding is attributed to the rule that owns it, and only the
pairs a form fails are judged again with the next weaker form (a pair passing `tool_pairs`
strictly passes it with a trailing batch allowed; `contains` pins, whose equivalent form may
apply where the exact one does not, are measured on every pair). `recent_exchanges` is found
per pair by bisection (keeping the last N+1 exchanges implies keeping the last N).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from frayproof_audit.suggest.facts import Facts
from frayproof_audit.suggest.families import Family, exchanges_setting
from frayproof_audit.suggest.judge import Judge
from frayproof_audit.suggest.pairs import Pair
from frayproof_audit.suggest.result import Alternative, Share
from frayproof_audit.suggest.texts import needed


@dataclass
class Measured:
    """A family's forms and what the learned-from pairs say of each."""

    family: Family
    fails: list[set[int]] = field(default_factory=list)
    """Per form, the learned-from pairs it fails (measured in isolation)."""
    evidence_pairs: int = 0
    evidence_sessions: int = 0
    chosen: int | None = None
    why: str = ""
    alternatives: tuple[Alternative, ...] = ()

    def support(self, variant: int, total: int) -> Share:
        return Share(total - len(self.fails[variant]), total)


def evidence(families: Sequence[Family], pairs: Sequence[Pair], facts: dict[int, Facts]) -> list[Measured]:
    measured = []
    for family in families:
        entry = Measured(family)
        if family.evidence is None:
            entry.evidence_pairs = len(pairs)
            entry.evidence_sessions = len({pair.session for pair in pairs})
        else:
            applying = [pair for pair in pairs if family.evidence(facts[pair.index])]
            entry.evidence_pairs = len(applying)
            entry.evidence_sessions = len({pair.session for pair in applying})
        measured.append(entry)
    return measured


def measure(measured: Sequence[Measured], pairs: Sequence[Pair], judge: Judge) -> None:
    """Fill in `fails` for every form of every family (see the module docstring)."""
    every = {pair.index for pair in pairs}
    rounds = max((len(entry.family.variants) for entry in measured), default=0)
    for form in range(rounds):
        active: list[tuple[Measured, set[int]]] = []
        for entry in measured:
            if len(entry.family.variants) <= form:
                continue
            need = every if form == 0 or not entry.family.implied else entry.fails[form - 1]
            if need:
                active.append((entry, need))
            else:
                entry.fails.append(set())
        if not active:
            continue
        wanted = set().union(*(need for _, need in active))
        settings = [entry.family.variants[form] for entry, _ in active]
        contract = judge.of(settings, isolated=True)
        failed = judge.failing([pair for pair in pairs if pair.index in wanted], contract, settings)
        for (entry, need), setting in zip(active, settings, strict=True):
            entry.fails.append(failed[setting.key] & need)


def choose(entry: Measured, total: int, required: int, min_sessions: int, min_support: float) -> None:
    """The strongest supported form (or none), with the reason."""
    family = entry.family
    if family.evidence is not None and entry.evidence_sessions < min_sessions:
        entry.chosen = None
        entry.why = (f"No evidence: it has something to check in {entry.evidence_pairs} good pair(s) of "
                     f"{entry.evidence_sessions} session(s), and a rule needs {min_sessions} sessions.")
        return
    entry.alternatives = tuple(Alternative(label, entry.support(index, total))
                               for index, label in enumerate(family.labels))
    for index in range(len(family.variants)):
        if total - len(entry.fails[index]) >= required:
            entry.chosen = index
            break
    else:
        entry.chosen = None
    entry.why = explain(entry, total, min_support)


def _pct(share: float) -> str:
    return f"{100 * share:.2f}%"


def explain(entry: Measured, total: int, min_support: float) -> str:
    """Why the family is proposed in its form, or not at all."""
    family, chosen = entry.family, entry.chosen
    best = entry.support(len(family.variants) - 1, total)
    strongest = entry.support(0, total)
    floor = _pct(min_support)
    key, subject = family.key, family.subject
    if chosen is None:
        if key == "checks.tool_arguments" and subject == "inferred":
            return (f"The schemas inferred from the good befores' calls pass only {best.text()} of the good "
                    f"afters (below {floor}): the afters change the calls they keep.")
        form = f"Even its weakest form, {family.labels[-1]}," if len(family.variants) > 1 else "It"
        return (f"{form} passes only {best.text()} of the good pairs, below {floor}"
                + ("; turned off, since it would otherwise stay on." if family.off else "."))
    if chosen > 0:
        lost = total - strongest.count
        weaker = _WEAKER.get(key, "").format(subject=subject)
        return f"The {family.labels[0]} form would fail {lost} of the {total} good pairs.{weaker}"
    where = (f" It has something to check in {entry.evidence_pairs} good pair(s) of "
             f"{entry.evidence_sessions} session(s).") if family.evidence is not None else ""
    text = _STRONGEST.get(key, _STRONGEST.get(family.kind + ":" + _subject_kind(family), ""))
    return text.format(subject=subject) + where


def _subject_kind(family: Family) -> str:
    if family.kind == "pin":
        return "role" if family.subject in ("system", "developer") else "text"
    return family.subject


_STRONGEST = {
    "checks.tool_pairs": "Every call in the good afters is answered and every result follows its call.",
    "checks.unique_tool_ids": "No good after uses a call id twice or answers one twice.",
    "checks.structure": ("Every good after keeps its instructions before the first other message, and every "
                         "message is well-formed."),
    "checks.tool_call_integrity": ("Every call a good after keeps from before keeps its name and arguments, "
                                   "and its result still answers it."),
    "checks.provider_validity": ("Every good after is a request its provider would accept, judged by the "
                                 "profile of each pair's format ({subject})."),
    "tools:records": ("The records carry their agents' tools, and every call of the good afters matches "
                      "its schema."),
    "tools:inferred": ("No record carries tool schemas, so the schemas under `tools` are inferred from the "
                       "good befores' calls, and every call of the good afters matches them. "
                       "`unknown_tool` is off: a tool the logs never called is not an error."),
    "pin:role": "Every {subject} message of the good befores is kept byte for byte.",
    "pin:text": ("Present verbatim in the instructions of nearly every good session, and kept by every good "
                 "after whose before has it."),
    "retain.latest_user_message": ("Every good after keeps the before's latest user request, unchanged, as "
                                   "its last request."),
    "retain.tool_results": "No good after changes the content of a tool result it keeps.",
}
_WEAKER = {
    "checks.tool_pairs": (" In those the last message's calls are still waiting for results, as when "
                          "compaction runs in the middle of a tool batch."),
    "checks.structure": " Those place an instruction (a summary, say) after the conversation began.",
    "checks.provider_validity": (" In those the last message's calls are still waiting for results. Each "
                                 "pair is judged by the profile of its format ({subject})."),
    "pins.system-prompt": " Those keep the system prompt re-serialized (equivalence forgives only spelling).",
    "pins.developer-instructions": (" Those keep the developer message re-serialized (equivalence forgives "
                                    "only spelling)."),
    "retain.latest_user_message": " Those keep the latest request re-serialized.",
    "retain.tool_results": " Those keep results re-serialized.",
}


def window_for(pair: Pair, facts: Facts, judge: Judge, compare: str) -> int | None:
    """The most recent exchanges the pair keeps (None: all of them, whatever the window)."""
    cap = facts.closed_exchanges
    if cap == 0 or _keeps(pair, cap, judge, compare):
        return None
    low, high = 0, cap - 1  # N = 0 always holds; N = cap does not
    while low < high:
        middle = (low + high + 1) // 2
        if _keeps(pair, middle, judge, compare):
            low = middle
        else:
            high = middle - 1
    return low


def _keeps(pair: Pair, window: int, judge: Judge, compare: str) -> bool:
    setting = exchanges_setting(window, compare)
    return not any(setting.owns(v) for v in judge.errors(pair, judge.of([setting], isolated=True)))


@dataclass
class Windows:
    """`recent_exchanges` measured under one comparison."""

    compare: str
    kept: dict[int, int | None]
    """Per pair, `window_for`."""
    exchanges: dict[int, int]
    """Per pair, its before's closed exchanges."""

    def passes(self, index: int, window: int) -> bool:
        kept = self.kept[index]
        return kept is None or kept >= window

    def support(self, window: int, pairs: Sequence[Pair]) -> Share:
        return Share(sum(self.passes(pair.index, window) for pair in pairs), len(pairs))

    def evidence(self, window: int, pairs: Sequence[Pair]) -> int:
        """Sessions with a pair that has `window` exchanges and keeps them."""
        return len({pair.session for pair in pairs
                    if self.exchanges[pair.index] >= window and self.passes(pair.index, window)})

    def best(self, pairs: Sequence[Pair], required: int, min_sessions: int) -> int:
        top = max((self.exchanges[pair.index] for pair in pairs), default=0)
        best = 0
        for window in range(1, top + 1):
            if self.support(window, pairs).count < required or self.evidence(window, pairs) < min_sessions:
                break
            best = window
        return best


def measure_windows(pairs: Sequence[Pair], facts: dict[int, Facts], judge: Judge, compare: str,
                    only: set[int] | None = None, fallback: Windows | None = None) -> Windows:
    """Windows of every pair; with `only`, just those pairs are measured, the rest copied from
    `fallback` (a pair keeping all its exchanges exactly keeps them equivalently too)."""
    kept: dict[int, int | None] = {}
    for pair in pairs:
        if only is not None and pair.index not in only and fallback is not None:
            kept[pair.index] = fallback.kept[pair.index]
        else:
            kept[pair.index] = window_for(pair, facts[pair.index], judge, compare)
    return Windows(compare, kept, {pair.index: facts[pair.index].closed_exchanges for pair in pairs})


def exchanges_why(window: int, windows: Windows, pairs: Sequence[Pair], min_support: float,
                  min_sessions: int) -> str:
    above = windows.support(window + 1, pairs)
    evidence_above = windows.evidence(window + 1, pairs)
    compare = " (compared by equivalence)" if windows.compare == "equivalent" else ""
    if window == 0:
        one = windows.support(1, pairs)
        if one.count < needed(min_support, one.total):
            return (f"Not even the last closed exchange is kept verbatim{compare} by enough good pairs: "
                    f"{one.text()}, below {_pct(min_support)}.")
        return f"Fewer than {min_sessions} sessions have a closed exchange and keep it."
    tail = (f"{window + 1} is kept by {above.text()}" if evidence_above >= min_sessions
            else f"fewer than {min_sessions} sessions have {window + 1} exchanges and keep them")
    return f"The good afters keep their last {window} closed exchange(s) verbatim{compare}; {tail}."

