"""Neutral message values and the small text helpers every check shares.

`Message` and `ToolCall` are named tuples rather than dataclasses: a nightly audit builds
millions of them, tuples are immutable, typed and several times cheaper to create.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
INSTRUCTION_ROLES = frozenset({"system", "developer"})
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})
OPTIONAL_NULL_KEYS = ("name", "audio", "annotations", "function_call")
"""Message-level keys whose explicit null means the same as leaving the key out."""
MODELLED_FIELDS = frozenset({"role", "content", "tool_calls", "tool_call_id", "refusal"})
"""Wire keys a `Message` models itself; everything else is metadata."""


class ToolCall(NamedTuple):
    """One function call on an assistant message, as the OpenAI wire format carries it."""

    id: str
    name: str
    arguments: str
    type: str = "function"
    metadata: Mapping[str, Any] = {}
    function_metadata: Mapping[str, Any] = {}

    def to_wire(self) -> dict[str, Any]:
        function = {**self.function_metadata, "name": self.name, "arguments": self.arguments}
        return {**self.metadata, "id": self.id, "type": self.type, "function": function}


class Message(NamedTuple):
    """One chat message. Unknown wire keys live in `metadata`, verbatim."""

    role: str
    content: str | list[Any] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    refusal: str | None = None
    metadata: Mapping[str, Any] = {}

    def to_wire(self) -> dict[str, Any]:
        """The wire dict. Metadata never supplies a modelled field, not even one left empty
        (a `tool_call_id` in metadata does not make a message a tool result)."""
        wire: dict[str, Any] = {
            key: value for key, value in self.metadata.items() if key not in MODELLED_FIELDS
        }
        wire["role"] = self.role
        wire["content"] = self.content
        if self.tool_calls:
            wire["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        if self.tool_call_id is not None:
            wire["tool_call_id"] = self.tool_call_id
        if self.refusal is not None:
            wire["refusal"] = self.refusal
        return wire


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An ordered, validated message list (what `load_snapshot` returns)."""

    messages: tuple[Message, ...]

    def __len__(self) -> int:
        return len(self.messages)

    def to_wire(self) -> list[dict[str, Any]]:
        return [message.to_wire() for message in self.messages]


def _is_text_type(kind: object) -> bool:
    """A text block's `type`; safe on raw, unvalidated blocks (a list `type` is no text)."""
    return type(kind) is str and kind in TEXT_BLOCK_TYPES


def text_parts(content: object) -> list[str]:
    """The text a message shows: the string, or each text block's `text`, never joined."""
    if type(content) is str:
        return [content]
    if type(content) is list:
        return [
            block["text"]
            for block in content
            if type(block) is dict and _is_text_type(block.get("type"))
            and type(block.get("text")) is str
        ]
    return []


def has_content(content: object) -> bool:
    """Whether content says anything: non-blank text, or any non-text, non-empty block.

    A text-typed block without a string `text` counts as content (frayproof's B6, kept so
    verdicts stay comparable).
    """
    if type(content) is str:
        return bool(content.strip())
    if type(content) is list:
        for block in content:
            if type(block) is not dict:
                continue
            if _is_text_type(block.get("type")) and type(block.get("text")) is str:
                if block["text"].strip():
                    return True
            elif block:
                return True
    return False


def first_nonblank(parts: Sequence[str]) -> str | None:
    for part in parts:
        if part.strip():
            return part
    return None
