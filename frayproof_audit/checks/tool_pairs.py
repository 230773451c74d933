"""tool_pair_integrity: every tool result answers an earlier call, every call is answered.

Bad:  [assistant calls a] [user "next"]          → call `a` is never answered
Bad:  [tool result a] (no earlier call a)        → orphan result, a provider 400
Good: [assistant calls a, b] [tool b] [tool a]   → parallel results in any order
With `allow_trailing_pending_call`, calls on the final non-tool message may stay unanswered.
"""

from __future__ import annotations

from frayproof_audit.contract import Contract
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import Loaded

NAME = "tool_pair_integrity"
SETTINGS = "tool_pairs"

_ORPHAN = "Tool result answers no earlier assistant tool call."
_UNANSWERED = "Assistant tool call has no tool result after it."
CONDITIONS = {"TP-ORPHAN": _ORPHAN, "TP-UNANSWERED": _UNANSWERED}


def find(after: Loaded, contract: Contract, before: BeforeFacts | None, severity: str) -> list[Violation]:
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
                found.append(
                    Violation(NAME, severity, "after", index, _ORPHAN, code="TP-ORPHAN",
                              tool_call_id=result_id)
                )
    allow_pending = contract.allow_trailing_pending_call
    for call_id, index in registered:
        if call_id in answered or (allow_pending and index == tail):
            continue
        found.append(
            Violation(NAME, severity, "after", index, _UNANSWERED, code="TP-UNANSWERED", tool_call_id=call_id)
        )
    return found
