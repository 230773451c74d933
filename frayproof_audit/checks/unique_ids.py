"""unique_tool_ids: a call id is used by one call, and answered by one result.

Bad:  [assistant calls a] [tool a] [assistant calls a]  → id `a` reused (finding at 2)
Bad:  [assistant calls a] [tool a] [tool a]             → two results for `a` (finding at 2)
Good: ids unique among calls and among results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded

NAME = "unique_tool_ids"
REUSED = Condition("UID-REUSED", "Tool call id is already used by an earlier call.")
MULTI = Condition("UID-MULTI", "Tool call id already has an earlier tool result.")


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    seen_calls: set[str] = set()
    seen_results: set[str] = set()
    found: list[Violation] = []
    for index, view in enumerate(after.views):
        if view.role == "assistant":
            for call in view.calls:
                if not call.id:
                    continue
                if call.id in seen_calls:
                    found.append(REUSED.violation(NAME, severity, "after", index, tool_call_id=call.id))
                else:
                    seen_calls.add(call.id)
        elif view.role == "tool" and view.tool_call_id:
            if view.tool_call_id in seen_results:
                found.append(MULTI.violation(NAME, severity, "after", index,
                                             tool_call_id=view.tool_call_id))
            else:
                seen_results.add(view.tool_call_id)
    return found


CHECK = Check(
    name=NAME,
    key="unique_tool_ids",
    conditions=(REUSED, MULTI),
    find=find,
    summary="A call id is used by one call and answered by one result.",
)
