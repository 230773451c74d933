"""Facts of the before snapshot that the rules comparing with it need, taken in one pass."""

from __future__ import annotations

from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded
from frayproof_audit.providers.base import PriorFacts
from frayproof_audit.providers.blocks import content_blocks, is_thinking
from frayproof_audit.providers.openai_responses import required_reasoning


def prior_facts(before: Loaded) -> PriorFacts:
    """Before's thinking blocks, which of its calls sat in a message starting with thinking,
    and which reasoning items each Responses item requires."""
    thinking: set[bytes] = set()
    first: set[str] = set()
    for view in before.views:
        if view.role != "assistant":
            continue
        blocks = content_blocks(view.content)
        thinking.update(canonical(block) for block in blocks if is_thinking(block))
        if blocks and is_thinking(blocks[0]):
            first.update(call.id for call in view.calls if call.id)
    return PriorFacts(frozenset(thinking), frozenset(first), required_reasoning(before))
