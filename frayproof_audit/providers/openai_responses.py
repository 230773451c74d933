"""OpenAI Responses: outputs pair with calls by `call_id`; reasoning items pair with their item.

Bad:  [function_call a] [user "next"]                → no output for a
Bad:  [function_call_output b] (no earlier call b)   → an output answering nothing
Bad:  [reasoning rs_1] [user "next"]                 → rs_1 without the item it came with
Bad:  before [reasoning rs_1] [function_call fc_1], after [function_call fc_1]
                                                     → fc_1 without its reasoning item
Good: [reasoning rs_1] [function_call a] [message] [function_call_output a]
      (outputs may come later, not only directly after their calls)

A reasoning item and the model item right after it were produced together, and the provider
takes them only together. The item after a reasoning item needs that reasoning item when it has
an `id` (the provider then knows it as one of its own outputs); which reasoning items an item
needs is read from before, so that direction is judged only with a before snapshot.
"""

from __future__ import annotations

from frayproof_audit.formats.responses import REASONING, ItemRef, items_of
from frayproof_audit.loaded import Loaded
from frayproof_audit.providers.base import Found, PriorFacts, Profile, Rule, tail
from frayproof_audit.providers.blocks import block_site, reasoning_positions

CALL_UNANSWERED = Rule(
    "PV-RESP-CALL-UNANSWERED", "Function call without a function_call_output after it",
    "a `function_call` whose `call_id` no later `function_call_output` answers",
    "No tool output found for function call {id}.", repairable=True)
OUTPUT_ORPHAN = Rule(
    "PV-RESP-OUTPUT-ORPHAN", "Function call output without an earlier function_call",
    "a `function_call_output` whose `call_id` no earlier `function_call` has",
    "No tool call found for function call output with call_id {id}.", repairable=True)
REASONING_ALONE = Rule(
    "PV-RESP-REASONING-ALONE", "Reasoning item without the item it came with",
    "a `reasoning` item not directly followed by a model item (a message, a call or another "
    "item the model produced): followed by a user message, an output, or nothing",
    "Item '{id}' of type 'reasoning' was provided without its required following item.")
REASONING_MISSING = Rule(
    "PV-RESP-REASONING-MISSING", "Item without the reasoning item it came with",
    "an item with an `id` that in before came directly after reasoning items, kept without "
    "one of them directly before it (needs before)",
    "Item '{id}' of type '{kind}' was provided without its required 'reasoning' item: "
    "'{reasoning}'.")


def flat_items(loaded: Loaded) -> list[tuple[int, ItemRef]]:
    """Every item of the snapshot, in order, with the neutral message it belongs to."""
    return [(index, item) for index, message in enumerate(loaded.wire) for item in items_of(message)]


def reasoning_runs(items: list[tuple[int, ItemRef]]) -> list[tuple[int, int]]:
    """[start, stop) of every maximal run of reasoning items."""
    runs = []
    start = 0
    while start < len(items):
        if items[start][1].kind != REASONING:
            start += 1
            continue
        stop = start
        while stop < len(items) and items[stop][1].kind == REASONING:
            stop += 1
        runs.append((start, stop))
        start = stop
    return runs


def required_reasoning(loaded: Loaded) -> dict[str, tuple[str, ...]]:
    """Item id → the ids of the reasoning items directly before it (what it requires)."""
    items = flat_items(loaded)
    required: dict[str, tuple[str, ...]] = {}
    for start, stop in reasoning_runs(items):
        if stop < len(items):
            follower = items[stop][1]
            ids = tuple(item.id for _, item in items[start:stop] if item.id)
            if follower.id and follower.produced and ids:
                required.setdefault(follower.id, ids)
    return required


def _site(after: Loaded, index: int, item: ItemRef) -> str:
    if item.call is not None:
        return after.site("after", index, item.call)
    if item.block is not None:
        return block_site(after, index, item.block)
    return after.site("after", index)


def judge(after: Loaded, prior: PriorFacts | None, allow_pending: bool) -> list[Found]:
    views = after.views
    last = tail(after)
    found: list[Found] = []
    called: set[str] = set()
    for index, view in enumerate(views):
        if view.role == "tool" and view.tool_call_id:
            if view.tool_call_id not in called:
                found.append(Found(OUTPUT_ORPHAN, index, after.site("after", index),
                                   {"id": view.tool_call_id}, tool_call_id=view.tool_call_id))
        elif view.role == "assistant":
            called.update(call.id for call in view.calls if call.id)
    last_output = _last_outputs(after)
    for index, view in enumerate(views):
        if view.role != "assistant" or not view.calls or (allow_pending and index == last):
            continue
        for position, call in enumerate(view.calls):
            if call.id and last_output.get(call.id, -1) < index:
                found.append(Found(CALL_UNANSWERED, index, after.site("after", index, position),
                                   {"id": call.id}, tool_call_id=call.id, call=position))
    found += _reasoning(after, prior)
    return sorted(found, key=lambda hit: hit.index)


def _last_outputs(after: Loaded) -> dict[str, int]:
    """Call id → index of the last tool message answering it."""
    return {view.tool_call_id: index for index, view in enumerate(after.views)
            if view.role == "tool" and view.tool_call_id}


def _reasoning(after: Loaded, prior: PriorFacts | None) -> list[Found]:
    if not (prior is not None and prior.reasoning_of) and not any(
            view.role == "assistant" and type(view.content) is list
            and reasoning_positions(after.wire[index])
            for index, view in enumerate(after.views)):
        return []  # no reasoning item, and none required: nothing to pair (Chat data)
    items = flat_items(after)
    found: list[Found] = []
    runs = reasoning_runs(items)
    for _start, stop in runs:
        if stop == len(items) or not items[stop][1].produced:
            index, item = items[stop - 1]
            found.append(Found(REASONING_ALONE, index, _site(after, index, item),
                               {"id": item.id or ""}, item_id=item.id, block=item.block))
    if prior is None or not prior.reasoning_of:
        return found
    run_before: dict[int, set[str]] = {
        stop: {item.id for _, item in items[start:stop] if item.id} for start, stop in runs}
    for position, (index, item) in enumerate(items):
        required = prior.reasoning_of.get(item.id) if item.id else None
        if not required:
            continue
        present = run_before.get(position, set())
        missing = [reasoning for reasoning in required if reasoning not in present]
        if missing:
            found.append(Found(REASONING_MISSING, index, _site(after, index, item),
                               {"id": item.id, "kind": item.kind, "reasoning": missing[0]},
                               tool_call_id=_call_id(after, index, item), item_id=item.id,
                               call=item.call, block=item.block))
    return found


def _call_id(after: Loaded, index: int, item: ItemRef) -> str | None:
    if item.call is None:
        return None
    return after.views[index].calls[item.call].id or None


PROFILE = Profile("openai-responses", "OpenAI Responses",
                  (CALL_UNANSWERED, OUTPUT_ORPHAN, REASONING_ALONE, REASONING_MISSING), judge,
                  formats=("openai-responses",))
