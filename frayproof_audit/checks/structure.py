"""structure: roles, instruction placement, result placement and the shape of every message.

Bad:  [user] [system]            → late instruction under `system_messages: leading_only`
Bad:  [assistant calls a] [user] [tool a]  → the result sits outside its call's batch
Bad:  [assistant, no content, no calls]    → empty assistant message
Good: [system] [user] [assistant calls a, b] [tool b] [tool a] [assistant "done"]
"""

from __future__ import annotations

from frayproof_audit.contract import Contract
from frayproof_audit.model import INSTRUCTION_ROLES, ROLES, has_content
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import Loaded

NAME = "structure"
SETTINGS = "structure"

_ROLE = "Message role is missing or not supported."
_FORBIDDEN = "The contract forbids instruction (system/developer) messages."
_LATE = "Instruction message appears after the conversation has started."
_NO_ID = "Tool result has no tool_call_id."
_OUTSIDE = "Tool result is not inside the batch that follows its call."
_NO_RESULT_CONTENT = "Tool result has null content."
_STRAY = "Only tool results may carry a tool_call_id."
_CALLS_ROLE = "Only assistant messages may carry tool calls."
_EMPTY = "Assistant message has no content, tool calls or refusal."
_NO_CONTENT = "Message content is null."
_CALL_ID = "Tool call id is empty or blank."
_CALL_FUNC = "Tool call must be of type 'function' with a non-blank name."
CONDITIONS = {
    "ST-ROLE": _ROLE,
    "ST-INSTR-FORBIDDEN": _FORBIDDEN,
    "ST-INSTR-LATE": _LATE,
    "ST-TOOL-NOID": _NO_ID,
    "ST-TOOL-OUTSIDE": _OUTSIDE,
    "ST-TOOL-NOCONTENT": _NO_RESULT_CONTENT,
    "ST-STRAY-ID": _STRAY,
    "ST-CALLS-ROLE": _CALLS_ROLE,
    "ST-EMPTY-ASSISTANT": _EMPTY,
    "ST-NO-CONTENT": _NO_CONTENT,
    "ST-CALL-ID": _CALL_ID,
    "ST-CALL-FUNC": _CALL_FUNC,
}
"""The finding conditions of this check (ids as in the spec) and their fixed messages."""
_CODES = {message: code for code, message in CONDITIONS.items()}


def find(after: Loaded, contract: Contract, before: BeforeFacts | None, severity: str) -> list[Violation]:
    views = after.views
    policy = contract.system_messages
    called = {call.id for view in views if view.role == "assistant" for call in view.calls if call.id}
    leading = True
    active: set[str] = set()
    found: list[Violation] = []

    def add(index: int, message: str) -> None:
        found.append(Violation(NAME, severity, "after", index, message, code=_CODES[message]))

    for index, view in enumerate(views):
        role = view.role
        if role not in ROLES:
            add(index, _ROLE)
        if role in INSTRUCTION_ROLES:
            if policy == "forbidden":
                add(index, _FORBIDDEN)
            elif policy == "leading_only" and not leading:
                add(index, _LATE)
        else:
            leading = False
        if role == "tool":
            result_id = view.tool_call_id
            if not result_id:
                add(index, _NO_ID)
            elif result_id in called and result_id not in active:
                add(index, _OUTSIDE)
            if view.content is None:
                add(index, _NO_RESULT_CONTENT)
        else:
            active = {call.id for call in view.calls if call.id} if role == "assistant" else set()
            if view.tool_call_id is not None:
                add(index, _STRAY)
        if view.calls and role != "assistant":
            add(index, _CALLS_ROLE)
        if role == "assistant":
            refusal = view.refusal
            if not (view.calls or has_content(view.content) or (refusal and refusal.strip())):
                add(index, _EMPTY)
        elif role != "tool" and view.content is None:
            add(index, _NO_CONTENT)
        for call in view.calls:
            if not call.id.strip():
                add(index, _CALL_ID)
            if call.type != "function" or not call.name.strip():
                add(index, _CALL_FUNC)
    return found
