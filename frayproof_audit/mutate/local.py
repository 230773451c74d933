"""Rerun a check on the few messages an edit can affect, instead of on the whole mutant.

The incremental evaluator's lemmas (`incremental`) say when a check's findings on a mutant are
the original's. When they are not, the check used to be rerun over the whole mutant, which made
mutation quadratic in the record's length (every mutant of an n-message output cost O(n)). The
lemmas here cover the common edits by running the check's own registered `find`, or its own
scan, on a small part of the mutant whose findings are provably all of the mutant's. They hold
when the original is *clean* for the check (no finding at all); otherwise the caller reruns it.

Let D be the ids (call ids and result ids) on every message the edit deletes, rewrites, moves
or swaps (as declared by its `Effects`), on its new messages, and, for `tool_pair_integrity`,
on the original's and the mutant's last non-tool messages.

- **Id-local** (`tool_pair_integrity`, `unique_tool_ids`). Both checks judge each id on its own:
  whether a result is an orphan, a call unanswered, an id reused or answered twice depends only
  on the order of the calls and results carrying that id (and, for an unanswered call under
  `allow_trailing_pending_call`, on whether it sits on the last non-tool message). Our edits
  keep the relative order of every message they do not touch, so for an id outside D those
  events are as in the original. Its findings are the original's, i.e. none. The one exception
  would be a call excused on the original's last non-tool message that is no longer last: its
  ids are in D. So the mutant's findings are the findings of the ids in D, and running `find`
  on the sub-list of the mutant's messages that carry them (their other ids masked out),
  together with the mutant's last non-tool message, gives exactly those, in the same order
  (orphans by position, then unanswered calls in call order; reuses in scan order), once
  each index is mapped back to the mutant.
- **Per message** (`tool_arguments`): its findings are those of each call on its own, labelled
  by the call's position, plus before's findings (prepared once). On a clean original every
  message kept from it has none, so the mutant's findings are its new messages', judged by
  `find` on a snapshot of just those, each labelled and indexed by its mutant position.
- **Swap window** (`structure`, an edit that only swaps positions i < r). Each message's
  findings depend on its own view, on whether a non-instruction message precedes it, on the
  call ids of the last non-tool message before it (the batch) and on the set of all call ids.
  Before i the mutant is the original. A swap keeps the set of calls and, from the first
  non-tool message after r on (call it e), the batch and the messages before it as a set, so
  findings from e on are the original's: none. Scanning [i, e) from the original's state at i
  (`structure.scan`) therefore gives every finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from frayproof_audit.checks import structure
from frayproof_audit.checks.base import Check, CheckSettings
from frayproof_audit.contract import Contract
from frayproof_audit.formats.base import Format
from frayproof_audit.loaded import Origin
from frayproof_audit.model import INSTRUCTION_ROLES
from frayproof_audit.mutate.edits import Effects
from frayproof_audit.mutate.shape import Original, Shape
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import Loaded, MessageView


def ids_of(view: MessageView) -> Iterable[str]:
    """Every call id and result id a message carries (whatever its role)."""
    for call in view.calls:
        if call.id:
            yield call.id
    if view.tool_call_id:
        yield view.tool_call_id


def window(fmt: Format, positions: Sequence[int], messages: Sequence[dict[str, Any]],
           views: Sequence[MessageView]) -> Loaded:
    """Some of a mutant's messages as a snapshot of their own, each labelled (its `site`) by its
    position in the mutant, so a check run on it names the places the whole mutant would."""
    return Loaded(list(messages), list(views), fmt, origins=tuple(Origin(p) for p in positions))


def placed(violations: Iterable[Violation], positions: Sequence[int] | Mapping[int, int]) -> list[Violation]:
    """Findings of a check run on a window of a mutant, indexed by their mutant positions
    (`positions[i]` is where the window's message i sits)."""
    return [
        replace(violation, message_index=positions[violation.message_index])
        if violation.message_index is not None and violation.snapshot == "after" else violation
        for violation in violations
    ]


class LocalFacts:
    """Per-pair tables the local reruns read: which original messages carry each id, and the
    state `structure` has at each position."""

    __slots__ = ("called", "carriers", "first_other", "original")

    def __init__(self, original: Original) -> None:
        self.original = original
        carriers: dict[str, list[int]] = {}
        called: set[str] = set()
        first_other = len(original.views)
        for index, view in enumerate(original.views):
            for item in ids_of(view):
                places = carriers.setdefault(item, [])
                if not places or places[-1] != index:
                    places.append(index)
            if view.role == "assistant":
                called.update(call.id for call in view.calls if call.id)
            if view.role not in INSTRUCTION_ROLES and first_other == len(original.views):
                first_other = index
        self.carriers = carriers
        self.called = frozenset(called)
        self.first_other = first_other
        """The first position whose role is not an instruction role (len: none)."""

    def touched(self, effects: Effects) -> tuple[int, ...]:
        """Original positions the edit deletes, rewrites, moves or swaps."""
        return (effects.deleted + effects.rewritten + effects.moved_to_end
                + (effects.swapped or ()))

    def id_local(self, check: Check, effects: Effects, mutant: Shape, contract: Contract,
                 facts: BeforeFacts, settings: CheckSettings, with_tail: bool) -> list[Violation]:
        """The mutant's findings of an id-local check, from the messages carrying ids in D."""
        wanted, chosen = self.carriers_of(effects, mutant, with_tail)
        if not chosen:
            return []
        positions = sorted(chosen)
        masked = [_mask(chosen[position], wanted) for position in positions]
        small = Loaded([{} for _ in positions], masked, self.original.format)
        return placed(check.find(small, contract, facts, settings), positions)

    def carriers_of(self, effects: Effects, mutant: Shape,
                    with_tail: bool) -> tuple[set[str], dict[int, MessageView]]:
        """D, and the mutant's messages that carry an id in D or are new (with the mutant's last
        non-tool message when `with_tail`), by mutant position."""
        views = self.original.views
        wanted: set[str] = set()
        for index in self.touched(effects):
            wanted.update(ids_of(views[index]))
        for _, _, view in mutant.fresh:
            wanted.update(ids_of(view))
        tail = -1
        if with_tail:
            original_tail = self.original.prev_nontool[-1] if views else -1
            if original_tail >= 0:
                wanted.update(ids_of(views[original_tail]))
            tail = mutant.tail()
        chosen: dict[int, MessageView] = {}
        for item in wanted:
            for index in self.carriers.get(item, ()):
                position = mutant.position(index)
                if position is not None:
                    chosen[position] = views[index]
        for position, _, view in mutant.fresh:
            chosen[position] = view
        if tail >= 0 and tail not in chosen:
            chosen[tail] = mutant.view_at(tail)
        return wanted, chosen

    def per_message(self, check: Check, mutant: Shape, contract: Contract, facts: BeforeFacts,
                    settings: CheckSettings) -> list[Violation]:
        """The mutant's findings of a per-message check, from its new messages alone."""
        fresh = mutant.fresh
        if not fresh:
            return []
        positions = [position for position, _, _ in fresh]
        small = window(self.original.format, positions, [message for _, message, _ in fresh],
                       [view for _, _, view in fresh])
        return placed(check.find(small, contract, facts, settings), positions)

    def swap_window(self, first: int, second: int, mutant: Shape,
                    settings: CheckSettings) -> list[Violation]:
        """`structure` findings of a mutant that swaps `first` < `second` (original clean)."""
        views = self.original.views
        stop = second + 1
        while stop < len(views) and views[stop].role == "tool":
            stop += 1
        before = self.original.prev_nontool[first - 1] if first > 0 else -1
        active: frozenset[str] = frozenset()
        if before >= 0 and views[before].role == "assistant":
            active = frozenset(call.id for call in views[before].calls if call.id)
        return structure.scan(mutant.views_between(first, stop), settings.severity,
                              settings.option(structure.SYSTEM_MESSAGES), self.called,
                              leading=self.first_other >= first, active=active)


def _mask(view: MessageView, wanted: set[str]) -> MessageView:
    """The view with every id outside `wanted` removed (a call dropped, a result id unset)."""
    calls = tuple(call for call in view.calls if call.id in wanted)
    result = view.tool_call_id if view.tool_call_id in wanted else None
    if len(calls) == len(view.calls) and result == view.tool_call_id:
        return view
    return view._replace(calls=calls, tool_call_id=result)
