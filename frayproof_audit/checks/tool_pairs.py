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
    from frayproof_audit.loaded import Loaded
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "tool_pair_integrity"
ORPHAN = Condition("TP-ORPHAN", "Tool result answers no earlier assistant tool call.", repairable=True)
UNANSWERED = Condition("TP-UNANSWERED", "Assistant tool call has no tool result after it.",
                       repairable=True)
ALLOW_PENDING = "allow_trailing_pending_call"
PAIR_ROLES = frozenset({"assistant", "tool"})


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
        role = view.role
        if role == "assistant":
            for call in view.calls:
                call_id = call.id
                if call_id:
                    registered.append((call_id, index))
                    called.add(call_id)
        elif role == "tool":
            result_id = view.tool_call_id
            if not result_id:
                continue
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


class _Recheck:
    """Mutation's re-check (O = original output, M = mutant; "clean" = no finding on O).

    The check depends only on the ordered assistant/tool messages (roles, call and result ids)
    and, with the trailing-pending allowance, on which message is the last non-tool one. So:
    - an edit that only changes call arguments keeps every view: M's findings are O's, clean
      or not;
    - O clean: text or content-block edits and repeating a call in its own message (same id,
      same message: answered or excused alike) change nothing; deleting messages that are
      neither assistant nor tool keeps that subsequence, and the last non-tool message it may
      change only excuses more; moving such messages to the end keeps it, and matters only
      under the allowance;
    - otherwise, O clean: the check judges each id on its own, so M's findings are those of the
      ids the edit touches, on the messages carrying them and the tail (`recheck.local`).
    """

    __slots__ = ("allow_pending", "check", "contract", "found", "pair", "settings")

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> None:
        self.pair, self.check, self.settings, self.found = pair, check, settings, found
        self.contract = pair.contract
        self.allow_pending = bool(settings.option(ALLOW_PENDING))

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        if effects.only_arguments:
            return self.found
        if self.found:
            return None
        if self._unchanged(effects):
            return self.found
        return self.pair.carriers.id_local(self.check.find, effects, mutant, self.contract,
                                           self.pair.facts, self.settings, with_tail=True)

    def _unchanged(self, effects: Effects) -> bool:
        roles = self.pair.roles
        if effects.call_dropped or effects.swapped:
            return False
        if any(roles[i] in PAIR_ROLES for i in effects.deleted):
            return False
        # Text edits and repeated calls change nothing; moves matter only as said above.
        return not (effects.moved_to_end and (
            self.allow_pending or any(roles[i] in PAIR_ROLES for i in effects.moved_to_end)))


CHECK = Check(
    name=NAME,
    key="tool_pairs",
    conditions=(ORPHAN, UNANSWERED),
    find=find,
    summary="Every tool result answers an earlier call; every call is answered.",
    options=(Flag(ALLOW_PENDING, False),),
    recheck=_Recheck,
)
