"""The neutral model: message values, the neutral message dict, and the helpers that read
and edit it.

Neutral message dicts have the Chat Completions shape (`role`, `content` as a string or a list
of blocks, `tool_calls`, `tool_call_id`, `refusal`, anything else as metadata): frayproof's
semantics are specified in that shape, so the `openai` format uses its wire dicts unchanged and
every other format converts into it. Field names of the neutral dict appear here and in the
format modules only.

`Message` and `ToolCall` are named tuples rather than dataclasses: a nightly audit builds
millions of them, tuples are immutable, typed and several times cheaper to create.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, NamedTuple

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
INSTRUCTION_ROLES = frozenset({"system", "developer"})
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})
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


_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def message_from_dict(message: dict[str, Any]) -> Message:
    calls = tuple(
        ToolCall(
            id=call.get("id", ""),
            name=(call.get("function") or {}).get("name", ""),
            arguments=(call.get("function") or {}).get("arguments", ""),
            type=call.get("type", ""),
            metadata={k: v for k, v in call.items() if k not in _CALL_KEYS},
            function_metadata={
                k: v for k, v in (call.get("function") or {}).items() if k not in _FUNCTION_KEYS
            },
        )
        for call in message.get("tool_calls") or ()
    )
    return Message(
        role=message.get("role") or "",
        content=message.get("content"),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id"),
        refusal=message.get("refusal"),
        metadata={k: v for k, v in message.items() if k not in MODELLED_FIELDS},
    )


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


# --- editing neutral message dicts (what mutation edits are made of) -----------------------
# Mutants are built from neutral message dicts, so these helpers are the only place edits
# touch message fields; each comes in an in-place form (the reference path edits deep copies
# exactly as frayproof does) and a copying form (the fast path never modifies its input).

def editable_parts(message: dict[str, Any]) -> Iterator[object]:
    """The objects inside a message that edits change in place: its call array and its
    content blocks (the message dict itself aside)."""
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        yield calls
    content = message.get("content")
    if isinstance(content, list):
        yield from (block for block in content if isinstance(block, dict))


def role_of(message: dict[str, Any]) -> Any:
    return message.get("role")


def is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and isinstance(block.get("type"), str)
        and block["type"] in TEXT_BLOCK_TYPES
        and isinstance(block.get("text"), str)
    )


def edit_text_in_place(message: dict[str, Any], edit: Callable[[str], str]) -> None:
    """Apply `edit` to every text part of `message`, in place (string or text blocks)."""
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = edit(content)
    elif isinstance(content, list):
        for block in content:
            if is_text_block(block):
                block["text"] = edit(block["text"])


def edited_copy(message: dict[str, Any], edit: Callable[[str], str]) -> dict[str, Any]:
    """A new message with `edit` applied to every text part; untouched blocks are reused."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": edit(content)}
    if isinstance(content, list):
        blocks = [
            {**block, "text": edit(block["text"])} if is_text_block(block) else block
            for block in content
        ]
        return {**message, "content": blocks}
    return message


def is_empty_message(message: dict[str, Any]) -> bool:
    """No content (`has_content`) and no non-blank refusal."""
    refusal = message.get("refusal")
    return not (has_content(message.get("content")) or (refusal and refusal.strip()))


def drop_call_in_place(message: dict[str, Any], position: int) -> bool:
    """Delete call `position`; an emptied array goes. Returns whether no call is left."""
    calls = message["tool_calls"]
    del calls[position]
    if calls:
        return False
    message.pop("tool_calls")
    return True


def without_call(message: dict[str, Any], position: int) -> dict[str, Any]:
    """A copy without call `position` (and without the array when it empties)."""
    copy = dict(message)
    calls = copy["tool_calls"]
    remaining = calls[:position] + calls[position + 1 :]
    if remaining:
        copy["tool_calls"] = remaining
    else:
        del copy["tool_calls"]
    return copy


def repeat_call_in_place(message: dict[str, Any], position: int) -> None:
    """Append a deep copy of call `position` to the same array (the same id twice)."""
    calls = message["tool_calls"]
    calls.append(deepcopy(calls[position]))


def with_call_repeated(message: dict[str, Any], position: int) -> dict[str, Any]:
    """A copy whose call array repeats call `position` at its end (the same dict twice:
    fast-path mutants are never edited again)."""
    calls = message["tool_calls"]
    return {**message, "tool_calls": [*calls, calls[position]]}


# --- call arguments (tool_call_integrity and the argument operators) ------------------------
# A call's arguments are the JSON text the model wrote (`function.arguments`), kept as text:
# whether it parses, and how, is the reader's business.

def call_arguments(message: dict[str, Any], position: int) -> str:
    """The arguments text of call `position` ("" when absent, as in frayproof's identity)."""
    function = message["tool_calls"][position].get("function") or {}
    arguments = function.get("arguments", "")
    return arguments if type(arguments) is str else ""


def _call_with_arguments(call: dict[str, Any], arguments: str) -> dict[str, Any]:
    """A new call dict (and function dict) carrying `arguments`; everything else is reused."""
    function = call.get("function") or {}
    return {**call, "function": {**function, "arguments": arguments}}


def set_call_arguments_in_place(message: dict[str, Any], position: int, arguments: str) -> None:
    """Give call `position` new arguments text, in place.

    The call entry of the message's own array is replaced by a new call dict rather than
    edited, so a call dict shared with another message (which the shared-object test does not
    look for) never changes there too; the array itself is edited, as the other in-place edits
    do, so a shared array behaves as it does for them.
    """
    calls = message["tool_calls"]
    calls[position] = _call_with_arguments(calls[position], arguments)


def with_call_arguments(message: dict[str, Any], position: int, arguments: str) -> dict[str, Any]:
    """A copy whose call `position` carries `arguments` (other calls and fields reused)."""
    calls = list(message["tool_calls"])
    calls[position] = _call_with_arguments(calls[position], arguments)
    return {**message, "tool_calls": calls}


# --- content blocks (the thinking and reasoning operators) ---------------------------------
# A block goes or is replaced whole; the message's other blocks are reused as they are. A
# message left with calls and no block has null content, as the formats read such a turn.

def _rest(message: dict[str, Any], blocks: list[Any]) -> list[Any] | None:
    return None if not blocks and message.get("tool_calls") else blocks


def without_block(message: dict[str, Any], position: int) -> dict[str, Any]:
    """A copy without content block `position`."""
    content = message["content"]
    return {**message, "content": _rest(message, content[:position] + content[position + 1:])}


def drop_block_in_place(message: dict[str, Any], position: int) -> None:
    """Delete content block `position` (the content list itself is edited)."""
    content = message["content"]
    del content[position]
    if not content and message.get("tool_calls"):
        message["content"] = None


def with_block(message: dict[str, Any], position: int, block: Any) -> dict[str, Any]:
    """A copy whose content block `position` is `block`."""
    content = list(message["content"])
    content[position] = block
    return {**message, "content": content}


def set_block_in_place(message: dict[str, Any], position: int, block: Any) -> None:
    message["content"][position] = block
