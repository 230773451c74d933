"""tool_pair_integrity: every tool result answers an earlier call, every call is answered.

Bad:  [assistant calls a] [user "next"]          → call `a` is never answered
Bad:  [tool result a] (no earlier call a)        → orphan result, a provider 400
Good: [assistant calls a, b] [tool b] [tool a]   → parallel results in any order
With `allow_trailing_pending_call`, calls on the final non-tool message may stay unanswered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition, Flag
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded

NAME = "tool_pair_integrity"
ORPHAN = Condition("TP-ORPHAN", "Tool result answers no earlier assistant tool call.")
UNANSWERED = Condition("TP-UNANSWERED", "Assistant tool call has no tool result after it.")
ALLOW_PENDING = "allow_trailing_pending_call"


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    views = after.views
    tail = -1
    for index in range(len(views) - 1, -1, -1):
        if views[index].role != "tool":
            tail = index
            break
    registered: list[tuple[str, int]] = []
    called: set[str] = set()
    answered: set[str] = set()
    found: list[Violation] = []
    for index, view in enumerate(views):
        if view.role == "assistant":
            for call in view.calls:
                if call.id:
                    registered.append((call.id, index))
                    called.add(call.id)
        elif view.role == "tool" and view.tool_call_id:
            result_id = view.tool_call_id
            if result_id in called:
                answered.add(result_id)
            else:
                found.append(ORPHAN.violation(NAME, severity, "after", index, tool_call_id=result_id))
    allow_pending = settings.option(ALLOW_PENDING)
    for call_id, index in registered:
        if call_id in answered or (allow_pending and index == tail):
            continue
        found.append(UNANSWERED.violation(NAME, severity, "after", index, tool_call_id=call_id))
    return found


CHECK = Check(
    name=NAME,
    key="tool_pairs",
    conditions=(ORPHAN, UNANSWERED),
    find=find,
    summary="Every tool result answers an earlier call; every call is answered.",
    options=(Flag(ALLOW_PENDING, False),),
)
