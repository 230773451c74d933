"""Anthropic Messages: results in the very next message; thinking kept first and unchanged.

Bad:  [assistant tool_use a] [user text] [user tool_result a]   → a is not answered right after
Bad:  [user tool_result b] where the message before calls no b → an unexpected tool_use_id
Bad:  the final assistant turn used thinking, but its message starts with `tool_use`
Bad:  a thinking block of the latest assistant message differs from before by one byte
Good: [assistant thinking, tool_use a, tool_use b] [user tool_result b, tool_result a]

Whether a turn "used thinking" is read from the data: the final assistant message holds a
thinking block, an assistant message of the same turn (since the latest user message) does,
or, with before, the before message holding one of its calls started with one. The request's
own `thinking` setting is not part of a message log.
"""

from __future__ import annotations

from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded
from frayproof_audit.providers.base import (
    Found,
    PriorFacts,
    Profile,
    Rule,
    results_after,
    tail,
)
from frayproof_audit.providers.blocks import (
    block_site,
    block_type,
    content_blocks,
    is_thinking,
    thinking_positions,
    wire_block,
)

RESULT_ORPHAN = Rule(
    "PV-ANTH-RESULT-ORPHAN", "Tool result answers no tool_use of the previous message",
    "a `tool_result` whose `tool_use_id` is not a `tool_use` of the assistant message right "
    "before its user message",
    "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message.", repairable=True)
USE_UNANSWERED = Rule(
    "PV-ANTH-USE-UNANSWERED", "Tool use without a tool_result in the next message",
    "a `tool_use` id with no `tool_result` in the user message right after its message",
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{id}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message.", repairable=True)
THINKING_FIRST = Rule(
    "PV-ANTH-THINKING-FIRST", "Final assistant message of a thinking turn does not start with thinking",
    "the last assistant message has `tool_use` blocks, no user message follows it, its turn "
    "used thinking, and its first block is not `thinking` / `redacted_thinking`",
    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
THINKING_MODIFIED = Rule(
    "PV-ANTH-THINKING-MODIFIED", "Thinking block of the latest assistant message changed",
    "a `thinking` / `redacted_thinking` block of the last assistant message that is not, "
    "byte for byte (as JSON values), a thinking block of before (needs before)",
    "messages.{n}.content.{m}: `thinking` or `redacted_thinking` blocks in the latest assistant "
    "message cannot be modified. These blocks must remain as they were in the original "
    "response.")


def _n(after: Loaded, index: int) -> int:
    """The message index the provider names (the wire's; a mutant's own index otherwise)."""
    found = after.wire_index(index)
    return index if found is None else found


def judge(after: Loaded, prior: PriorFacts | None, allow_pending: bool) -> list[Found]:
    views = after.views
    last = tail(after)
    found: list[Found] = []
    owned: set[str] = set()  # the call ids of the message before the current run of results
    for index, view in enumerate(views):
        if view.role == "tool":
            if view.tool_call_id and view.tool_call_id not in owned:
                block = after.origin(index).block
                found.append(Found(RESULT_ORPHAN, index, after.site("after", index),
                                   {"n": _n(after, index), "m": block or 0,
                                    "id": view.tool_call_id},
                                   tool_call_id=view.tool_call_id))
            continue
        calls = view.calls if view.role == "assistant" else ()
        owned = {call.id for call in calls}
        if calls and not (allow_pending and index == last):
            answered = {views[k].tool_call_id for k in results_after(after, index)}
            for position, call in enumerate(calls):
                if call.id and call.id not in answered:
                    found.append(Found(USE_UNANSWERED, index, after.site("after", index, position),
                                       {"n": _n(after, index), "id": call.id},
                                       tool_call_id=call.id, call=position))
    final = after.last_index("assistant")
    if final is not None:
        found += _thinking_first(after, final, prior)
        if prior is not None:
            found += _thinking_modified(after, final, prior)
    return sorted(found, key=lambda hit: hit.index)


def _thinking_first(after: Loaded, final: int, prior: PriorFacts | None) -> list[Found]:
    views = after.views
    view = views[final]
    if not view.calls or any(v.role == "user" for v in views[final + 1:]):
        return []
    if not _used_thinking(after, final, prior):
        return []
    blocks = content_blocks(view.content)
    if blocks and is_thinking(blocks[0]):
        return []
    # The verdict reads the neutral order (content blocks, then calls), which a mutant has too;
    # the wire order of a loaded snapshot only words the finding (a tool_use block first).
    fields = {"n": _n(after, final)}
    if blocks and wire_block(after, final, 0) == 0:
        return [Found(THINKING_FIRST, final, block_site(after, final, 0),
                      {**fields, "found": block_type(blocks[0]) or "unknown"}, block=0)]
    return [Found(THINKING_FIRST, final, after.site("after", final, 0),
                  {**fields, "found": "tool_use"}, call=0)]


def _used_thinking(after: Loaded, final: int, prior: PriorFacts | None) -> bool:
    """Whether the final turn (the messages since the latest user message) used thinking."""
    views = after.views
    start = final
    while start > 0 and views[start - 1].role != "user":
        start -= 1
    if any(views[k].role == "assistant" and thinking_positions(after.wire[k])
           for k in range(start, final + 1)):
        return True
    return prior is not None and any(call.id in prior.thinking_first for call in views[final].calls)


def _thinking_modified(after: Loaded, final: int, prior: PriorFacts) -> list[Found]:
    blocks = content_blocks(after.wire[final].get("content"))
    found = []
    for position in thinking_positions(after.wire[final]):
        if canonical(blocks[position]) not in prior.thinking:
            found.append(Found(THINKING_MODIFIED, final, block_site(after, final, position),
                               {"n": _n(after, final), "m": wire_block(after, final, position)},
                               block=position))
    return found


PROFILE = Profile("anthropic", "Anthropic Messages",
                  (RESULT_ORPHAN, USE_UNANSWERED, THINKING_FIRST, THINKING_MODIFIED), judge,
                  formats=("anthropic",))
