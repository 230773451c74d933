"""pinned_content: pinned messages and pinned text survive the transformation.

Role pin `system`: every before system message must still exist, identical (metadata too), in
after; order may change, each after copy answers one before copy.
Contains pin "Never write to production": if some before text part contains it, some after text
part must too (any role).
Bad:  before [system "Never write to production"] → after [system "Be brief"]  → both fail
Good: the system message kept verbatim, the exchange summarised.
"""

from __future__ import annotations

from frayproof_audit.contract import Contract
from frayproof_audit.model import text_parts
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import Loaded

NAME = "pinned_content"
SETTINGS = "pinned_content"

_ROLE_LOST = "Pinned message is missing from after or was altered."
_TEXT_LOST = "Pinned text no longer appears in any message content."
CONDITIONS = {"PIN-ROLE": _ROLE_LOST, "PIN-TEXT": _TEXT_LOST}


def find(after: Loaded, contract: Contract, before: BeforeFacts | None, severity: str) -> list[Violation]:
    if before is None:
        return []
    found: list[Violation] = []
    views = after.views
    for pin, facts in zip(contract.pins, before.pins, strict=True):
        pin_severity = pin.severity or severity
        if pin.role is not None:
            available: dict[bytes, int] = {}
            for index, view in enumerate(views):
                if view.role == pin.role:
                    identity = after.identity(index)
                    available[identity] = available.get(identity, 0) + 1
            for before_index, identity in facts.role_messages:
                if available.get(identity, 0) > 0:
                    available[identity] -= 1
                else:
                    found.append(Violation(NAME, pin_severity, "before", before_index, _ROLE_LOST,
                                           code="PIN-ROLE", pin=pin.name))
        elif (
            facts.text_index is not None
            and pin.contains is not None
            and not any_text_contains(after, pin.contains)
        ):
            found.append(Violation(NAME, pin_severity, "before", facts.text_index, _TEXT_LOST,
                                       code="PIN-TEXT", pin=pin.name))
    return found


def any_text_contains(snapshot: Loaded, text: str) -> bool:
    for view in snapshot.views:
        content = view.content
        if type(content) is str:
            if text in content:
                return True
        elif content and any(text in part for part in text_parts(content)):
            return True
    return False
