"""The seven edits the mutation operators make, each applicable in two ways.

`apply_in_place` edits a deep copy of the raw output exactly as frayproof 0.1.0 does, so object
sharing inside that output (the same dict at two positions, a shared `tool_calls` list) has the
same effect on the mutant. It is the reference (`verify=True`) path and the path for outputs
with shared objects.

`segments` is the copy-on-write form used by the fast path: a recipe of untouched original
positions (`(start, stop)` ranges, reused as they are) and freshly built message dicts. Nothing
of the original output is ever modified; only the messages an edit changes are copied. The two
forms give equal mutants whenever the output shares no mutable object between positions, which
the runner checks before choosing the fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from frayproof_audit.model import INSTRUCTION_ROLES, TEXT_BLOCK_TYPES, has_content

Segment = tuple[int, int] | list[dict[str, Any]]
"""An original range `(start, stop)` reused as is, or a list of new message dicts."""

TextEdit = Callable[[str], str]


def is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and isinstance(block.get("type"), str)
        and block["type"] in TEXT_BLOCK_TYPES
        and isinstance(block.get("text"), str)
    )


def edit_text_in_place(message: dict[str, Any], edit: TextEdit) -> None:
    """Apply `edit` to every text part of `message`, in place (string or text blocks)."""
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = edit(content)
    elif isinstance(content, list):
        for block in content:
            if is_text_block(block):
                block["text"] = edit(block["text"])


def edited_copy(message: dict[str, Any], edit: TextEdit) -> dict[str, Any]:
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


def remove_literal(part: str, text: str) -> str:
    """Delete `text` from `part` until none is left (removal can join a new occurrence)."""
    while text in part:
        part = part.replace(text, "")
    return part


def truncate_half(part: str) -> str:
    return part[: max(1, len(part) // 2)]


def _is_empty_message(message: dict[str, Any]) -> bool:
    refusal = message.get("refusal")
    return not (has_content(message.get("content")) or (refusal and refusal.strip()))


@dataclass(frozen=True, slots=True)
class DropCall:
    """Delete call `position` of message `index`; an emptied array goes, and an emptied
    message too when nothing else (content, refusal) is left in it."""

    index: int
    position: int
    drops_message: bool

    def apply_in_place(self, messages: list[Any]) -> None:
        message = messages[self.index]
        del message["tool_calls"][self.position]
        if not message["tool_calls"]:
            message.pop("tool_calls")
            if _is_empty_message(message):
                del messages[self.index]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        index, n = self.index, len(wire)
        if self.drops_message:
            return [(0, index), (index + 1, n)]
        message = dict(wire[index])
        calls = message["tool_calls"]
        remaining = calls[: self.position] + calls[self.position + 1 :]
        if remaining:
            message["tool_calls"] = remaining
        else:
            del message["tool_calls"]
        return [(0, index), [message], (index + 1, n)]


@dataclass(frozen=True, slots=True)
class DeleteMessage:
    index: int

    def apply_in_place(self, messages: list[Any]) -> None:
        del messages[self.index]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        return [(0, self.index), (self.index + 1, len(wire))]


@dataclass(frozen=True, slots=True)
class AppendCallCopy:
    """Append a copy of call `position` to the same `tool_calls` array (same id twice)."""

    index: int
    position: int

    def apply_in_place(self, messages: list[Any]) -> None:
        calls = messages[self.index]["tool_calls"]
        calls.append(deepcopy(calls[self.position]))

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        message = dict(wire[self.index])
        calls = message["tool_calls"]
        # The same call dict twice is fine here: fast-path mutants are never edited again.
        message["tool_calls"] = [*calls, calls[self.position]]
        return [(0, self.index), [message], (self.index + 1, len(wire))]


@dataclass(frozen=True, slots=True)
class EditText:
    """Edit the text parts of some messages.

    `every` mirrors frayproof's contains-pin removal, which walks every message; `indices`
    then lists the messages whose text actually changes, which are all the fast path copies.
    """

    indices: tuple[int, ...]
    edit: TextEdit
    every: bool = False

    def apply_in_place(self, messages: list[Any]) -> None:
        targets = messages if self.every else [messages[index] for index in self.indices]
        for message in targets:
            edit_text_in_place(message, self.edit)

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        pieces: list[Segment] = []
        start = 0
        for index in self.indices:
            pieces.append((start, index))
            pieces.append([edited_copy(wire[index], self.edit)])
            start = index + 1
        pieces.append((start, len(wire)))
        return pieces


@dataclass(frozen=True, slots=True)
class Swap:
    first: int
    second: int

    def apply_in_place(self, messages: list[Any]) -> None:
        i, r = self.first, self.second
        messages[i], messages[r] = messages[r], messages[i]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        i, r = self.first, self.second
        return [(0, i), (r, r + 1), (i + 1, r), (i, i + 1), (r + 1, len(wire))]


@dataclass(frozen=True, slots=True)
class MoveToEnd:
    index: int

    def apply_in_place(self, messages: list[Any]) -> None:
        messages.append(messages.pop(self.index))

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        i = self.index
        return [(0, i), (i + 1, len(wire)), (i, i + 1)]


@dataclass(frozen=True, slots=True)
class KeepInstructions:
    """Replace the span [start, stop) by its instruction messages only (`kept`)."""

    start: int
    stop: int
    kept: tuple[int, ...]

    def apply_in_place(self, messages: list[Any]) -> None:
        span = messages[self.start : self.stop]
        messages[self.start : self.stop] = [
            message for message in span if message.get("role") in INSTRUCTION_ROLES
        ]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        pieces: list[Segment] = [(0, self.start)]
        pieces.extend((index, index + 1) for index in self.kept)
        pieces.append((self.stop, len(wire)))
        return pieces


Edit = DropCall | DeleteMessage | AppendCallCopy | EditText | Swap | MoveToEnd | KeepInstructions
