"""The provider blocks the rules look at inside neutral content, and where they sit in the wire.

Formats keep thinking (`thinking`, `redacted_thinking`) and reasoning (`reasoning`) blocks
verbatim in a neutral message's content, so the rules and the mutation operators find them
there. Their wire place is the format's business: a format that can name one content block
(`block_site`) spells it (`after[4].content[1]` for Anthropic, the reasoning item's own index
for Responses); for the others a block is named by its message's site and content position.
"""

from __future__ import annotations

from typing import Any

from frayproof_audit.loaded import Loaded

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
"""Anthropic's thinking blocks: passed back unchanged, their signatures cover every byte."""
REASONING_TYPE = "reasoning"
"""An OpenAI Responses reasoning item, kept as a content block of the turn it precedes."""


def block_type(block: Any) -> str | None:
    kind = block.get("type") if type(block) is dict else None
    return kind if type(kind) is str else None


def is_thinking(block: Any) -> bool:
    return block_type(block) in THINKING_TYPES


def is_reasoning(block: Any) -> bool:
    return block_type(block) == REASONING_TYPE


def content_blocks(content: Any) -> list[Any]:
    return content if type(content) is list else []


def thinking_positions(message: dict[str, Any]) -> list[int]:
    """Content positions of the message's thinking blocks."""
    return [p for p, block in enumerate(content_blocks(message.get("content"))) if is_thinking(block)]


def reasoning_positions(message: dict[str, Any]) -> list[int]:
    """Content positions of the message's reasoning blocks."""
    return [p for p, block in enumerate(content_blocks(message.get("content"))) if is_reasoning(block)]


def block_site(after: Loaded, index: int, position: int, snapshot: str = "after") -> str:
    """Content block `position` of neutral message `index`, in the user's coordinates."""
    spell = getattr(after.format, "block_site", None)
    if spell is not None:
        where: str = spell(snapshot, after.origin(index), position)
        return where
    return f"{after.site(snapshot, index)}.content[{position}]"


def wire_block(after: Loaded, index: int, position: int) -> int:
    """The wire position of content block `position`, as a provider counts blocks."""
    count = getattr(after.format, "wire_block", None)
    if count is not None:
        found: int = count(after.origin(index), position)
        return found
    return position


_THINKING_TEXT = {"thinking": "thinking", "redacted_thinking": "data"}
"""The field holding a thinking block's signed content."""


def altered_thinking(block: Any) -> dict[str, Any] | None:
    """`block` with its signed content changed (the first half kept; one character added to
    a text of at most one), or None when the block has no such string to change."""
    kind = block_type(block)
    key = _THINKING_TEXT.get(kind or "")
    text = block.get(key) if key is not None else None
    if type(text) is not str or key is None:
        return None
    changed = text[: len(text) // 2] if len(text) > 1 else text + "."
    return {**block, key: changed}
