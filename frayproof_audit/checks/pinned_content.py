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
from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.equivalence import EXACT
from frayproof_audit.model import text_parts
from frayproof_audit.prepared import pin_texts
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded

NAME = "pinned_content"
ROLE_LOST = Condition("PIN-ROLE", "Pinned message is missing from after or was altered.")
TEXT_LOST = Condition("PIN-TEXT", "Pinned text no longer appears in any message content.")


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    if before is None:
        return []
    found: list[Violation] = []
    for pin, facts in zip(contract.pins, before.pins, strict=True):
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


CHECK = Check(
    name=NAME,
    key="pinned_content",
    conditions=(ROLE_LOST, TEXT_LOST),
    find=find,
    summary="Pinned messages and pinned text survive the transformation.",
    needs_before=True,
    active=lambda contract: bool(contract.pins),
    asks_for="pins",
)
