"""structure: roles, instruction placement, result placement and the shape of every message.

Bad:  [user] [system]            → late instruction under `system_messages: leading_only`
Bad:  [assistant calls a] [user] [tool a]  → the result sits outside its call's batch
Bad:  [assistant, no content, no calls]    → empty assistant message
Good: [system] [user] [assistant calls a, b] [tool b] [tool a] [assistant "done"]
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition, OneOf
from frayproof_audit.model import INSTRUCTION_ROLES, ROLES, has_content
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded, MessageView

NAME = "structure"
SYSTEM_MESSAGES = "system_messages"
SYSTEM_POLICIES = ("leading_only", "anywhere", "forbidden")

ROLE = Condition("ST-ROLE", "Message role is missing or not supported.")
INSTR_FORBIDDEN = Condition("ST-INSTR-FORBIDDEN",
                            "The contract forbids instruction (system/developer) messages.")
INSTR_LATE = Condition("ST-INSTR-LATE", "Instruction message appears after the conversation has started.")
TOOL_NOID = Condition("ST-TOOL-NOID", "Tool result has no tool_call_id.")
TOOL_OUTSIDE = Condition("ST-TOOL-OUTSIDE", "Tool result is not inside the batch that follows its call.")
TOOL_NOCONTENT = Condition("ST-TOOL-NOCONTENT", "Tool result has null content.")
STRAY_ID = Condition("ST-STRAY-ID", "Only tool results may carry a tool_call_id.")
CALLS_ROLE = Condition("ST-CALLS-ROLE", "Only assistant messages may carry tool calls.")
EMPTY_ASSISTANT = Condition("ST-EMPTY-ASSISTANT", "Assistant message has no content, tool calls or refusal.")
NO_CONTENT = Condition("ST-NO-CONTENT", "Message content is null.")
CALL_ID = Condition("ST-CALL-ID", "Tool call id is empty or blank.")
CALL_FUNC = Condition("ST-CALL-FUNC", "Tool call must be of type 'function' with a non-blank name.")


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    views = after.views
    called = {call.id for view in views if view.role == "assistant" for call in view.calls if call.id}
    return scan(enumerate(views), settings.severity, settings.option(SYSTEM_MESSAGES), called)


def scan(
    indexed: Iterable[tuple[int, MessageView]],
    severity: str,
    policy: str,
    called: AbstractSet[str],
    *,
    leading: bool = True,
    active: AbstractSet[str] = frozenset(),
) -> list[Violation]:
    """The findings of the messages `indexed` (position, view), in order, given the state the
    scan has on reaching the first of them: `called` (every call id of the snapshot), `leading`
    (no non-instruction message yet) and `active` (the call ids of the current batch).
    `find` scans the whole snapshot from the initial state; mutation scans a window of a
    mutant from the original's state (`mutate.local`)."""
    found: list[Violation] = []

    def add(index: int, condition: Condition) -> None:
        found.append(condition.violation(NAME, severity, "after", index))

    for index, view in indexed:
        role = view.role
        if role not in ROLES:
            add(index, ROLE)
        if role in INSTRUCTION_ROLES:
            if policy == "forbidden":
                add(index, INSTR_FORBIDDEN)
            elif policy == "leading_only" and not leading:
                add(index, INSTR_LATE)
        else:
            leading = False
        if role == "tool":
            result_id = view.tool_call_id
            if not result_id:
                add(index, TOOL_NOID)
            elif result_id in called and result_id not in active:
                add(index, TOOL_OUTSIDE)
            if view.content is None:
                add(index, TOOL_NOCONTENT)
        else:
            active = {call.id for call in view.calls if call.id} if role == "assistant" else set()
            if view.tool_call_id is not None:
                add(index, STRAY_ID)
        if view.calls and role != "assistant":
            add(index, CALLS_ROLE)
        if role == "assistant":
            refusal = view.refusal
            if not (view.calls or has_content(view.content) or (refusal and refusal.strip())):
                add(index, EMPTY_ASSISTANT)
        elif role != "tool" and view.content is None:
            add(index, NO_CONTENT)
        for call in view.calls:
            if not call.id.strip():
                add(index, CALL_ID)
            if call.type != "function" or not call.name.strip():
                add(index, CALL_FUNC)
    return found


CHECK = Check(
    name=NAME,
    key="structure",
    conditions=(ROLE, INSTR_FORBIDDEN, INSTR_LATE, TOOL_NOID, TOOL_OUTSIDE, TOOL_NOCONTENT, STRAY_ID,
                CALLS_ROLE, EMPTY_ASSISTANT, NO_CONTENT, CALL_ID, CALL_FUNC),
    find=find,
    summary="Roles, instruction placement, result placement and the shape of every message.",
    options=(OneOf(SYSTEM_MESSAGES, SYSTEM_POLICIES, "leading_only"),),
)
