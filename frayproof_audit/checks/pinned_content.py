"""pinned_content: pinned messages and pinned text survive the transformation.

Role pin `system`: every before system message must still exist, identical (metadata too), in
after; order may change, each after copy answers one before copy.
Contains pin "Never write to production": if some before text part contains it, some after text
part must too (any role).
`match: equivalent`: a role pin accepts the message re-serialized (`equivalence`), a contains
pin searches text parts joined.
Bad:  before [system "Never write to production"] → after [system "Be brief"]  → both fail
Good: the system message kept verbatim, the exchange summarised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.equivalence import EXACT, text_runs
from frayproof_audit.model import text_parts
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import Loaded, MessageView
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "pinned_content"
KEY = "pinned_content"
ROLE_LOST = Condition("PIN-ROLE", "Pinned message is missing from after or was altered.")
TEXT_LOST = Condition("PIN-TEXT", "Pinned text no longer appears in any message content.")


def pin_texts(content: Any, match: str) -> list[str]:
    """The texts a contains pin searches: each text part under `exact` (parts never joined,
    as in frayproof), each run of text parts joined under `equivalent`."""
    return text_parts(content) if match == EXACT else text_runs(content)


@dataclass(frozen=True, slots=True)
class PinFacts:
    """For a role pin: the index of each before message of that role, and their keys (each
    message's identity, or its neutral form under `match: equivalent`), computed on first use:
    a check that compares by equality first never needs them.
    For a contains pin: the first before index whose text contains it (None: inactive)."""

    role_indexes: tuple[int, ...] = ()
    role_keys: Sequence[bytes] = ()
    text_index: int | None = None


def prepare(before: Loaded, contract: Contract) -> tuple[PinFacts, ...]:
    """The check's before facts, one per pin, whether or not the check is on: the
    `remove_pinned_text` operator reads them too."""
    views = before.views
    pins = []
    for pin in contract.pins:
        if pin.role is not None:
            indexes = tuple(index for index, view in enumerate(views) if view.role == pin.role)
            pins.append(PinFacts(indexes, before.keys_of(indexes, pin.match)))
        else:
            text = pin.contains or ""
            first = next(
                (index for index, view in enumerate(views)
                 if any(text in part for part in pin_texts(view.content, pin.match))),
                None,
            )
            pins.append(PinFacts(text_index=first))
    return tuple(pins)


def pin_facts(before: BeforeFacts) -> tuple[PinFacts, ...]:
    """The prepared facts of each pin of the contract, in its order."""
    return cast("tuple[PinFacts, ...]", before.of(KEY))


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    if before is None:
        return []
    found: list[Violation] = []
    for pin, facts in zip(contract.pins, pin_facts(before), strict=True):
        pin_severity = pin.severity or severity
        if pin.role is not None:
            for before_index in _unmatched(after, pin.role, pin.match, facts.role_indexes,
                                           facts.role_keys, before.snapshot):
                found.append(ROLE_LOST.violation(NAME, pin_severity, "before", before_index,
                                                 pin=pin.name))
        elif (
            facts.text_index is not None
            and pin.contains is not None
            and not any_text_contains(after, pin.contains, pin.match)
        ):
            found.append(TEXT_LOST.violation(NAME, pin_severity, "before", facts.text_index,
                                             pin=pin.name))
    return found


_PAIRWISE = 64
"""Up to this many (before, after) pairs of pinned-role messages, each before message looks for
an unused equal after message (equality first); above, after's keys are counted once."""


def _unmatched(after: Loaded, role: str, match: str, wanted: tuple[int, ...],
               keys: Sequence[bytes], before: Loaded | None) -> list[int]:
    """The before indexes `wanted` (whose keys are `keys`) that no after message of `role`
    answers, each after copy answering one before copy (matching equal keys one to one)."""
    candidates = [index for index, view in enumerate(after.views) if view.role == role]
    lost: list[int] = []
    if before is not None and len(candidates) * len(wanted) <= _PAIRWISE:
        for before_index in wanted:
            for position, index in enumerate(candidates):
                if after.same_key(index, before, before_index, match):
                    del candidates[position]
                    break
            else:
                lost.append(before_index)
        return lost
    available: dict[bytes, int] = {}
    for index in candidates:
        identity = after.key(index, match)
        available[identity] = available.get(identity, 0) + 1
    for before_index, identity in zip(wanted, keys, strict=True):
        if available.get(identity, 0) > 0:
            available[identity] -= 1
        else:
            lost.append(before_index)
    return lost


def any_text_contains(snapshot: Loaded, text: str, match: str = EXACT) -> bool:
    if match != EXACT:
        return any(text in run for view in snapshot.views for run in pin_texts(view.content, match))
    for view in snapshot.views:
        content = view.content
        if type(content) is str:
            if text in content:
                return True
        elif content and any(text in part for part in text_parts(content)):
            return True
    return False


class _Recheck:
    """Mutation's re-check: findings never depend on positions (they point into before), so a
    mutant's findings equal the original's, findings or not, unless the edit deletes or alters
    a message of a pinned role or one whose text holds an active contains literal (or creates
    such text); reordering never matters. Whether a pin compares exactly or by equivalence
    changes only how a message's key or text is read, never which messages a pin can see, so
    this holds for both (text is read as the pin reads it: parts, or joined runs)."""

    __slots__ = ("found", "literals", "pinned_roles", "relevant")

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> None:
        self.found = found
        contract = pair.contract
        if any(pin.role is not None for pin in contract.pins):
            pair.keep_identities()  # a rerun compares the mutant's pinned-role messages by key
        self.pinned_roles = {pin.role for pin in contract.pins if pin.role is not None}
        self.literals = [
            (pin.contains, pin.match)
            for pin, facts in zip(contract.pins, pin_facts(pair.facts), strict=True)
            if pin.contains is not None and facts.text_index is not None
        ]
        self.relevant = [self._relevant(view) for view in pair.after.views]

    def _relevant(self, view: MessageView) -> bool:
        """A message of a pinned role, or one whose text (as its pin reads text: parts, or
        joined runs under `equivalent`) holds an active literal."""
        if view.role in self.pinned_roles:
            return True
        return any(literal in text for literal, match in self.literals
                   for text in pin_texts(view.content, match))

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        return None if self._touches(effects, mutant) else self.found

    def _touches(self, effects: Effects, mutant: Mutant) -> bool:
        if effects.permutes:
            return False  # pins never depend on positions
        relevant = self.relevant
        return (
            any(relevant[i] for i in effects.deleted)
            or any(relevant[i] for i in effects.rewritten)
            or any(self._relevant(view) for _, _, view in mutant.fresh)
        )


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=(ROLE_LOST, TEXT_LOST),
    find=find,
    summary="Pinned messages and pinned text survive the transformation.",
    needs_before=True,
    active=lambda contract: bool(contract.pins),
    asks_for="pins",
    prepare=prepare,
    recheck=_Recheck,
)
