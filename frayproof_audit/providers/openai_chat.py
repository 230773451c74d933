"""OpenAI Chat Completions: tool messages answer the assistant message right before them.

Bad:  [assistant calls a] [user "next"] [tool a]   → the tool message follows a user message
Bad:  [assistant calls a] [tool b]                 → b is no call of the message before it
Bad:  [assistant calls a, b] [tool a] [user ...]    → b has no tool message right after
Good: [assistant calls a, b] [tool b] [tool a]     → any order inside the run of tool messages
"""

from __future__ import annotations

from frayproof_audit.loaded import Loaded
from frayproof_audit.providers.base import (
    Found,
    PriorFacts,
    Profile,
    Rule,
    results_after,
    tail,
)

TOOL_ORPHAN = Rule(
    "PV-CHAT-TOOL-ORPHAN", "Tool message not right after an assistant message with tool_calls",
    "a `tool` message whose nearest earlier non-tool message is not an assistant message with "
    "`tool_calls`",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.", repairable=True)
TOOL_UNKNOWN_ID = Rule(
    "PV-CHAT-TOOL-UNKNOWN-ID", "Tool message answers no call of the assistant message before it",
    "a `tool` message whose `tool_call_id` is not among the `tool_calls` of the assistant "
    "message its run of tool messages follows",
    "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
    repairable=True)
CALL_UNANSWERED = Rule(
    "PV-CHAT-CALL-UNANSWERED", "Tool call not answered by the tool messages right after it",
    "an assistant `tool_calls` id with no `tool` message in the run of tool messages directly "
    "after it",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {id}", repairable=True)


def judge(after: Loaded, prior: PriorFacts | None, allow_pending: bool) -> list[Found]:
    views = after.views
    last = tail(after)
    found: list[Found] = []
    owned: set[str] | None = None  # the call ids of the nearest earlier non-tool message,
    # if it is an assistant message with calls (what a tool message may answer)
    for index, view in enumerate(views):
        if view.role == "tool":
            if owned is None:
                found.append(Found(TOOL_ORPHAN, index, after.site("after", index), {},
                                   tool_call_id=view.tool_call_id))
            elif view.tool_call_id and view.tool_call_id not in owned:
                found.append(Found(TOOL_UNKNOWN_ID, index, after.site("after", index),
                                   {"id": view.tool_call_id}, tool_call_id=view.tool_call_id))
            continue
        calls = view.calls if view.role == "assistant" else ()
        owned = {call.id for call in calls} if calls else None
        if calls and not (allow_pending and index == last):
            answered = {views[k].tool_call_id for k in results_after(after, index)}
            for position, call in enumerate(calls):
                if call.id and call.id not in answered:
                    found.append(Found(CALL_UNANSWERED, index, after.site("after", index, position),
                                       {"id": call.id}, tool_call_id=call.id, call=position))
    return found


PROFILE = Profile("openai-chat", "OpenAI Chat Completions",
                  (TOOL_ORPHAN, TOOL_UNKNOWN_ID, CALL_UNANSWERED), judge,
                  formats=("openai", "otel-genai"))
