"""Running a check on the few messages of a mutant its edit can affect, for the re-checks whose
lemmas say those findings are all of the mutant's (the lemmas are stated with their checks).

- `window` makes some of a mutant's messages a snapshot of their own, each labelled by its
  mutant position, and `placed` maps the findings of a check run on it back to the mutant.
- `IdCarriers` serves the *id-local* checks (`tool_pair_integrity`, `unique_tool_ids`, the
  Responses profile's call rules). Let D be the ids (call ids and result ids) on every message
  the edit deletes, rewrites, moves or swaps (`touched`), on its new messages, and, with the
  tail, on the original's and the mutant's last non-tool messages. A check that judges each id
  on its own, on a clean original, finds on the mutant exactly the findings of the ids in D,
  and `carriers_of` picks the mutant's messages that carry them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frayproof_audit.loaded import Loaded, MessageView, Origin
from frayproof_audit.recheck.mutant import Effects, Mutant, Output
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.checks.base import CheckSettings, Find
    from frayproof_audit.contract import Contract
    from frayproof_audit.formats.base import Format
    from frayproof_audit.prepared import BeforeFacts


SMALL_MUTANT = 48
"""A mutant of at most this many messages is judged by an id-local check's own `find` over all
of it rather than on the messages carrying the edit's ids: below this length the window's
bookkeeping costs more than the pass it saves (`tool_pair_integrity` on the realistic
benchmark pairs: 7 / 9 / 14 / 17 us for a pass over 0-19 / 20-39 / 40-59 / 60-79 messages, 11-13
us for the window at any length). Both are exact; the property tests set it to 0 so that
every lemma is exercised."""


def ids_of(view: MessageView) -> Iterable[str]:
    """Every call id and result id a message carries (whatever its role)."""
    for call in view.calls:
        if call.id:
            yield call.id
    if view.tool_call_id:
        yield view.tool_call_id


def touched(effects: Effects) -> tuple[int, ...]:
    """Original positions the edit deletes, rewrites, moves or swaps."""
    return effects.deleted + effects.rewritten + effects.moved_to_end + (effects.swapped or ())


def window(fmt: Format, positions: Sequence[int], messages: Sequence[dict[str, Any]],
           views: Sequence[MessageView]) -> Loaded:
    """Some of a mutant's messages as a snapshot of their own, each labelled (its `site`) by its
    position in the mutant, so a check run on it names the places the whole mutant would."""
    return Loaded(list(messages), list(views), fmt, origins=tuple(Origin(p) for p in positions))


def placed(violations: Iterable[Violation], positions: Sequence[int] | Mapping[int, int]) -> list[Violation]:
    """Findings of a check run on a window of a mutant, indexed by their mutant positions
    (`positions[i]` is where the window's message i sits)."""
    return [
        at_index(violation, positions[violation.message_index])
        if violation.message_index is not None and violation.snapshot == "after" else violation
        for violation in violations
    ]


def at_index(violation: Violation, index: int) -> Violation:
    """`dataclasses.replace(violation, message_index=index)`, without its field-by-field
    introspection (a re-check moves findings of every caught mutant)."""
    return Violation(violation.check, violation.severity, violation.snapshot, index,
                     violation.message, violation.tool_call_id, violation.pin, violation.rule,
                     violation.code)


def new_messages_only(find: Find, mutant: Mutant, contract: Contract, facts: BeforeFacts,
                      settings: CheckSettings) -> list[Violation]:
    """A per-message check's findings on the mutant's new messages alone, at their positions."""
    fresh = mutant.fresh
    if not fresh:
        return []
    positions = [position for position, _, _ in fresh]
    small = window(mutant.original.format, positions, [message for _, message, _ in fresh],
                   [view for _, _, view in fresh])
    return placed(find(small, contract, facts, settings), positions)


class IdCarriers:
    """Per pair: which original messages carry each id, for the id-local checks."""

    __slots__ = ("carriers", "ids", "output", "tail_ids")

    def __init__(self, output: Output) -> None:
        self.output = output
        carriers: dict[str, list[int]] = {}
        self.ids: list[tuple[str, ...]] = [tuple(ids_of(view)) for view in output.views]
        """Each original message's ids (`ids_of`), kept: every mutant reads some."""
        for index, items in enumerate(self.ids):
            for item in items:
                places = carriers.setdefault(item, [])
                if not places or places[-1] != index:
                    places.append(index)
        self.carriers = carriers
        tail = output.prev_nontool[-1] if output.views else -1
        self.tail_ids: tuple[str, ...] = self.ids[tail] if tail >= 0 else ()
        """The ids of the original's last non-tool message."""

    def id_local(self, find: Find, effects: Effects, mutant: Mutant, contract: Contract,
                 facts: BeforeFacts, settings: CheckSettings, with_tail: bool) -> list[Violation]:
        """The mutant's findings of an id-local check (original clean), from the messages
        carrying ids in D, their other ids masked out, in the check's own order (or, for a
        small mutant, from all of it: `SMALL_MUTANT`)."""
        if mutant.length <= SMALL_MUTANT:
            return find(mutant.loaded, contract, facts, settings)
        wanted, chosen = self.carriers_of(effects, mutant, with_tail)
        if not chosen:
            return []
        positions = sorted(chosen)
        masked = [_mask(chosen[position], wanted) for position in positions]
        small = Loaded([{}] * len(positions), masked, self.output.format)
        found = find(small, contract, facts, settings)
        return placed(found, positions) if found else found

    def carriers_of(self, effects: Effects, mutant: Mutant,
                    with_tail: bool) -> tuple[set[str], dict[int, MessageView]]:
        """D, and the mutant's messages that carry an id in D or are new (with the mutant's last
        non-tool message when `with_tail`), by mutant position."""
        views, ids = self.output.views, self.ids
        wanted: set[str] = set()
        for index in touched(effects):
            wanted.update(ids[index])
        fresh = mutant.fresh
        for _, _, view in fresh:
            wanted.update(ids_of(view))
        if with_tail:
            wanted.update(self.tail_ids)
        chosen: dict[int, MessageView] = {}
        carriers, position_of = self.carriers, mutant.position
        for item in wanted:
            for index in carriers.get(item, ()):
                position = position_of(index)
                if position is not None:
                    chosen[position] = views[index]
        for position, _, view in fresh:
            chosen[position] = view
        if with_tail:
            tail = mutant.tail()
            if tail >= 0 and tail not in chosen:
                chosen[tail] = mutant.view_at(tail)
        return wanted, chosen


def _mask(view: MessageView, wanted: set[str]) -> MessageView:
    """The view with every id outside `wanted` removed (a call dropped, a result id unset)."""
    calls = tuple(call for call in view.calls if call.id in wanted)
    result = view.tool_call_id if view.tool_call_id in wanted else None
    if len(calls) == len(view.calls) and result == view.tool_call_id:
        return view
    return view._replace(calls=calls, tool_call_id=result)
