"""Google Gemini: a function call turn is answered by as many responses, right after it.

Bad:  [model calls a, b] [function response a]          → two calls, one response
Bad:  [model "thinking aloud"] [model calls a]          → a call turn after a model turn
Good: [user] [model calls a, b] [response b] [response a] [model "done"]

Gemini pairs by count and adjacency (ids are optional on its wire), so these rules count: the
neutral tool messages directly after an assistant message with calls are its response turn.
System and developer messages are Gemini's `systemInstruction`, outside the turns.
"""

from __future__ import annotations

from frayproof_audit.loaded import Loaded
from frayproof_audit.model import INSTRUCTION_ROLES
from frayproof_audit.providers.base import (
    Found,
    PriorFacts,
    Profile,
    Rule,
    previous_non_tool,
    results_after,
    tail,
)

RESPONSE_COUNT = Rule(
    "PV-GEM-RESPONSE-COUNT", "Function responses do not match the calls of their call turn",
    "the run of tool messages directly after an assistant message with calls holds a different "
    "number of responses than it has calls (a call turn followed by anything else, or last, "
    "has none), or a run of tool messages follows no call turn",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.", repairable=True)
CALL_POSITION = Rule(
    "PV-GEM-CALL-POSITION", "Function call turn not after a user turn or a function response turn",
    "an assistant message with calls whose previous message (system messages aside) is neither "
    "a user message nor a tool message",
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn.")


def judge(after: Loaded, prior: PriorFacts | None, allow_pending: bool) -> list[Found]:
    views = after.views
    last = tail(after)
    found: list[Found] = []
    for index, view in enumerate(views):
        if view.role == "tool":
            owner = previous_non_tool(after, index)
            if owner == index - 1 and (owner < 0 or views[owner].role != "assistant"
                                       or not views[owner].calls):
                found.append(Found(RESPONSE_COUNT, index, after.site("after", index), {},
                                   tool_call_id=view.tool_call_id))
            continue
        if view.role != "assistant" or not view.calls:
            continue
        before = index - 1
        while before >= 0 and views[before].role in INSTRUCTION_ROLES:
            before -= 1
        if before < 0 or views[before].role not in ("user", "tool"):
            found.append(Found(CALL_POSITION, index, after.site("after", index), {}))
        responses = len(results_after(after, index))
        if responses != len(view.calls) and not (responses == 0 and allow_pending and index == last):
            found.append(Found(RESPONSE_COUNT, index, after.site("after", index), {}))
    return found


PROFILE = Profile("gemini", "Gemini", (RESPONSE_COUNT, CALL_POSITION), judge, formats=("gemini",))
