"""The edits mutation operators make, each applicable in two ways, and what each one changes.

`apply_in_place` edits a deep copy of the raw output exactly as frayproof 0.1.0 does, so object
sharing inside that output (the same dict at two positions, a shared `tool_calls` list) has the
same effect on the mutant. It is the reference (`verify=True`) path and the path for outputs
with shared objects. It mutates the list it is given: callers pass their own deep copy.

`segments` is the copy-on-write form used by the fast path: a recipe of untouched original
positions (`(start, stop)` ranges, reused as they are) and freshly built message dicts. Nothing
of the original output is ever modified; only the messages an edit changes are copied. The two
forms give equal mutants whenever the output shares no mutable object between positions, which
the runner checks before choosing the fast path.

`effects` declares the change in the terms the checks' re-checks reason about (see
`recheck.mutant.Effects`). Edits work on neutral message dicts through `model`'s helpers only, so they are the
same for every input format.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Protocol

from frayproof_audit.model import (
    INSTRUCTION_ROLES,
    drop_block_in_place,
    drop_call_in_place,
    edit_text_in_place,
    edited_copy,
    is_empty_message,
    repeat_call_in_place,
    role_of,
    set_block_in_place,
    set_call_arguments_in_place,
    with_block,
    with_call_arguments,
    with_call_repeated,
    without_block,
    without_call,
)
from frayproof_audit.recheck.mutant import Effects

Segment = tuple[int, int] | list[dict[str, Any]]
"""An original range `(start, stop)` reused as is, or a list of new message dicts."""

TextEdit = Callable[[str], str]


class Edit(Protocol):
    def apply_in_place(self, messages: list[Any]) -> None: ...

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]: ...

    def effects(self) -> Effects: ...


def remove_literal(part: str, text: str) -> str:
    """Delete `text` from `part` until none is left (removal can join a new occurrence)."""
    while text in part:
        part = part.replace(text, "")
    return part


def truncate_half(part: str) -> str:
    return part[: max(1, len(part) // 2)]


@dataclass(frozen=True, slots=True)
class DropCall:
    """Delete call `position` of message `index`; an emptied array goes, and an emptied
    message too when nothing else (content, refusal) is left in it."""

    index: int
    position: int
    drops_message: bool

    def apply_in_place(self, messages: list[Any]) -> None:
        message = messages[self.index]
        if drop_call_in_place(message, self.position) and is_empty_message(message):
            del messages[self.index]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        index, n = self.index, len(wire)
        if self.drops_message:
            return [(0, index), (index + 1, n)]
        return [(0, index), [without_call(wire[index], self.position)], (index + 1, n)]

    def effects(self) -> Effects:
        return Effects(deleted=(self.index,)) if self.drops_message else Effects(
            call_dropped=(self.index,))


@dataclass(frozen=True, slots=True)
class SetArguments:
    """Give call `position` of message `index` a new arguments text (`arguments`, prepared by
    the operator); the call's id, name and type and everything else stay as they were."""

    index: int
    position: int
    arguments: str

    def apply_in_place(self, messages: list[Any]) -> None:
        set_call_arguments_in_place(messages[self.index], self.position, self.arguments)

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        copy = with_call_arguments(wire[self.index], self.position, self.arguments)
        return [(0, self.index), [copy], (self.index + 1, len(wire))]

    def effects(self) -> Effects:
        return Effects(arguments_changed=(self.index,))


@dataclass(frozen=True, slots=True)
class DeleteMessage:
    index: int

    def apply_in_place(self, messages: list[Any]) -> None:
        del messages[self.index]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        return [(0, self.index), (self.index + 1, len(wire))]

    def effects(self) -> Effects:
        return Effects(deleted=(self.index,))


@dataclass(frozen=True, slots=True)
class AppendCallCopy:
    """Append a copy of call `position` to the same call array (same id twice)."""

    index: int
    position: int

    def apply_in_place(self, messages: list[Any]) -> None:
        repeat_call_in_place(messages[self.index], self.position)

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        copy = with_call_repeated(wire[self.index], self.position)
        return [(0, self.index), [copy], (self.index + 1, len(wire))]

    def effects(self) -> Effects:
        return Effects(call_repeated=(self.index,))


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

    def effects(self) -> Effects:
        return Effects(text_edited=self.indices)


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

    def effects(self) -> Effects:
        return Effects(swapped=(self.first, self.second))


@dataclass(frozen=True, slots=True)
class MoveToEnd:
    index: int

    def apply_in_place(self, messages: list[Any]) -> None:
        messages.append(messages.pop(self.index))

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        i = self.index
        return [(0, i), (i + 1, len(wire)), (i, i + 1)]

    def effects(self) -> Effects:
        return Effects(moved_to_end=(self.index,))


@dataclass(frozen=True, slots=True)
class KeepInstructions:
    """Replace the span [start, stop) by its instruction messages only (`kept`)."""

    start: int
    stop: int
    kept: tuple[int, ...]

    def apply_in_place(self, messages: list[Any]) -> None:
        span = messages[self.start : self.stop]
        messages[self.start : self.stop] = [
            message for message in span if role_of(message) in INSTRUCTION_ROLES
        ]

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        pieces: list[Segment] = [(0, self.start)]
        pieces.extend((index, index + 1) for index in self.kept)
        pieces.append((self.stop, len(wire)))
        return pieces

    def effects(self) -> Effects:
        kept = set(self.kept)
        return Effects(deleted=tuple(i for i in range(self.start, self.stop) if i not in kept))


@dataclass(frozen=True, slots=True)
class DropBlock:
    """Delete content block `position` of message `index` (a reasoning item); the message goes
    with it when nothing else (content, calls, refusal) is left of it (then a deletion)."""

    index: int
    position: int
    drops_message: bool

    def apply_in_place(self, messages: list[Any]) -> None:
        if self.drops_message:
            del messages[self.index]
        else:
            drop_block_in_place(messages[self.index], self.position)

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        index, n = self.index, len(wire)
        if self.drops_message:
            return [(0, index), (index + 1, n)]
        return [(0, index), [without_block(wire[index], self.position)], (index + 1, n)]

    def effects(self) -> Effects:
        return Effects(deleted=(self.index,)) if self.drops_message else Effects(
            block_edited=(self.index,))


@dataclass(frozen=True, slots=True)
class ReplaceBlock:
    """Put `block` (prepared by the operator) in place of content block `position` of message
    `index` (a thinking block)."""

    index: int
    position: int
    block: dict[str, Any]

    def apply_in_place(self, messages: list[Any]) -> None:
        set_block_in_place(messages[self.index], self.position, deepcopy(self.block))

    def segments(self, wire: list[dict[str, Any]]) -> list[Segment]:
        copy = with_block(wire[self.index], self.position, self.block)
        return [(0, self.index), [copy], (self.index + 1, len(wire))]

    def effects(self) -> Effects:
        return Effects(block_edited=(self.index,))
