"""Writing a transcript back in its own wire format, after repair or compaction reordered,
dropped or added neutral messages.

Every neutral message comes from one *piece* of the wire data: a Chat message, a run of
Responses items, an Anthropic `tool_result` block or the rest of its message, an OTel
`tool_call_response` part or a run of other parts. A plan is a sequence of pieces (the input's,
plus new results); a writer assembles it into the format's wire value. A piece goes back into
the message it was read from, never into another one: pieces that end up together again,
complete, give back their wire message exactly as it was (block order, keys and all), so an
untouched message is never rewritten, and two messages are never merged (no provider profile
requires one turn's results in one message: each reads consecutive result messages as one
turn). Only a *foreign* piece (a new result, or one repair moves out of its message into its
call's batch) joins a message of others: the results message right before it, after the last
block it follows, every other block keeping its place; `hosts` says which message, for the
account of changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from frayproof_audit.formats.responses import Run
from frayproof_audit.loaded import Origin
from frayproof_audit.transcript.loading import Transcript


@dataclass(frozen=True, slots=True)
class Piece:
    """The wire data of one neutral message (`index`; None for a new result)."""

    index: int | None
    source: int | None
    """The wire message (or item) it was read from; None for a new result."""
    units: tuple[Any, ...]
    """Messages (openai), items (responses), blocks or parts (anthropic, otel)."""
    result: bool = False
    whole: bool = False
    """The piece is its whole wire message (content that is not a block list)."""
    positions: tuple[int, ...] = ()
    """Block formats: each unit's position in its wire message's block list."""
    moved: bool = False
    """Repair moves it out of its message into its call's batch."""

    @property
    def foreign(self) -> bool:
        """A new result, or a moved one: it goes wherever the plan puts it."""
        return self.source is None or self.moved


class Writer(Protocol):
    """How one format splits its wire data into pieces and puts pieces back together."""

    def pieces(self, transcript: Transcript) -> list[Piece | None]:
        """One piece per neutral message; None for messages read from outside the message
        list (a request's top-level `system` or `instructions`), which stay where they are."""
        ...

    def result(self, call_id: str, text: str) -> Piece:
        """A new tool result answering `call_id` with `text` (an error result where the format
        can say so)."""
        ...

    def assemble(self, transcript: Transcript, plan: Sequence[Piece]) -> Any:
        """The wire value: the input's frame (request keys, top-level system) with `plan` as
        its messages. Shares objects with the input; callers copy."""
        ...

    def hosts(self, transcript: Transcript, plan: Sequence[Piece]) -> list[int | None]:
        """For each piece of `plan`: the input wire message whose message holds it in the
        output when it is a foreign piece joining that message, else None (a piece in its own
        message, or a foreign one in a message of its own)."""
        ...


# --------------------------------------------------------------------------- openai


class ChatWriter:
    """Chat Completions: a piece is one message."""

    def pieces(self, transcript: Transcript) -> list[Piece | None]:
        return [Piece(i, i, (message,), message.get("role") == "tool", True)
                for i, message in enumerate(transcript.wire)]

    def result(self, call_id: str, text: str) -> Piece:
        return Piece(None, None, ({"role": "tool", "tool_call_id": call_id, "content": text},),
                     True, True)

    def assemble(self, transcript: Transcript, plan: Sequence[Piece]) -> Any:
        return [piece.units[0] for piece in plan]

    def hosts(self, transcript: Transcript, plan: Sequence[Piece]) -> list[int | None]:
        return [None] * len(plan)  # every piece is a message of its own


# --------------------------------------------------------------------------- openai-responses


class ItemsWriter:
    """Responses items: a piece is the run of items one neutral message was read from."""

    def _items(self, wire: Any) -> list[Any]:
        if isinstance(wire, dict):
            items = wire.get("input")
            return items if isinstance(items, list) else []
        return list(wire)

    def pieces(self, transcript: Transcript) -> list[Piece | None]:
        items = self._items(transcript.wire)
        loaded = transcript.loaded
        found: list[Piece | None] = []
        for index in range(len(loaded)):
            origin = loaded.origin(index)
            if origin.field is not None:
                found.append(None)
                continue
            start, stop = ((origin.start, origin.stop) if isinstance(origin, Run)
                           else (origin.message, origin.message + 1))
            result = loaded.views[index].role == "tool"
            found.append(Piece(index, start, tuple(items[start:stop]), result, True))
        return found

    def result(self, call_id: str, text: str) -> Piece:
        item = {"type": "function_call_output", "call_id": call_id, "output": text}
        return Piece(None, None, (item,), True, True)

    def assemble(self, transcript: Transcript, plan: Sequence[Piece]) -> Any:
        items = [item for piece in plan for item in piece.units]
        wire = transcript.wire
        if isinstance(wire, dict):
            return {**wire, "input": items} if isinstance(wire.get("input"), list) else dict(wire)
        return items

    def hosts(self, transcript: Transcript, plan: Sequence[Piece]) -> list[int | None]:
        return [None] * len(plan)  # every piece is items of its own


# --------------------------------------------------------------------------- anthropic, otel


@dataclass
class _Group:
    """Consecutive pieces of the plan that go into one wire message."""

    pieces: list[Piece] = field(default_factory=list)

    def native(self) -> int | None:
        """The wire message the group's own (not foreign) pieces were read from."""
        return next((p.source for p in self.pieces if not p.foreign), None)

    def accepts(self, piece: Piece) -> bool:
        last = self.pieces[-1]
        if piece.whole or last.whole:
            return False
        if piece.foreign:  # a new or moved result joins the results right before it
            return last.result
        # A piece joins only the message it was read from: two messages are never merged.
        return piece.source == self.native()

    def envelope(self) -> int | None:
        """The wire message whose role and keys the group's message takes (None: a new one)."""
        native = self.native()
        if native is not None:
            return native
        return next((p.source for p in self.pieces if p.source is not None), None)

    def units(self) -> list[Any]:
        """The group's units: its own in their wire order, each foreign unit right after the
        own unit it follows in the plan (first when it follows none)."""
        keyed: list[tuple[tuple[int, int, int], Any]] = []
        after = -1
        for order, piece in enumerate(self.pieces):
            if piece.foreign:
                keyed += [((after, 1, order), unit) for unit in piece.units]
            else:
                keyed += [((position, 0, order), unit)
                          for position, unit in zip(piece.positions, piece.units, strict=True)]
                after = max([after, *piece.positions])
        keyed.sort(key=lambda item: item[0])
        return [unit for _, unit in keyed]


class BlockWriter:
    """Formats whose messages hold blocks (Anthropic `content`) or parts (OTel `parts`), and
    whose results are blocks of a message rather than messages of their own."""

    def __init__(self, key: str, result_role: str) -> None:
        self.key = key
        self.result_role = result_role

    def _messages(self, wire: Any) -> list[Any]:
        if isinstance(wire, dict):
            messages = wire.get("messages")
            return messages if isinstance(messages, list) else []
        return list(wire)

    def pieces(self, transcript: Transcript) -> list[Piece | None]:
        loaded = transcript.loaded
        messages = self._messages(transcript.wire)
        by_message: dict[int, list[int]] = {}
        found: list[Piece | None] = [None] * len(loaded)
        for index in range(len(loaded)):
            origin = loaded.origin(index)
            if origin.field is None:
                by_message.setdefault(origin.message, []).append(index)
        for number, indices in by_message.items():
            blocks = messages[number].get(self.key)
            units = self._units(blocks, [loaded.origin(i) for i in indices])
            for index, (positions, result, whole) in zip(indices, units, strict=True):
                found[index] = Piece(index, number, tuple(blocks[p] for p in positions), result,
                                     whole, positions)
        return found

    def _units(self, blocks: Any, origins: list[Origin]) -> list[tuple[tuple[int, ...], bool, bool]]:
        """The block positions of each neutral message read from a message whose blocks are
        `blocks`, in reading order; whether it is a result; whether it is the whole message."""
        if not isinstance(blocks, list):
            return [((), False, True)]
        taken: set[int] = {origin.block for origin in origins if origin.block is not None}
        rest = [position for position in range(len(blocks)) if position not in taken]
        runs = self._runs(len(blocks), taken) if self.key == "parts" else [rest]
        units: list[tuple[tuple[int, ...], bool, bool]] = []
        for origin in origins:
            if origin.block is not None:
                units.append(((origin.block,), True, False))
            else:
                units.append((tuple(runs.pop(0)) if runs else (), False, False))
        return units

    @staticmethod
    def _runs(count: int, responses: set[int]) -> list[list[int]]:
        """OTel: the maximal runs of parts between responses (one empty run for no parts)."""
        runs: list[list[int]] = []
        current: list[int] = []
        for position in range(count):
            if position in responses:
                if current:
                    runs.append(current)
                current = []
            else:
                current.append(position)
        if current or not count:
            runs.append(current)
        return runs

    def result(self, call_id: str, text: str) -> Piece:
        if self.key == "content":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                     "content": text, "is_error": True}
        else:
            block = {"type": "tool_call_response", "id": call_id, "response": text}
        return Piece(None, None, (block,), True, False)

    @staticmethod
    def _groups(plan: Sequence[Piece]) -> list[_Group]:
        groups: list[_Group] = []
        for piece in plan:
            if groups and groups[-1].accepts(piece):
                groups[-1].pieces.append(piece)
            else:
                groups.append(_Group([piece]))
        return groups

    def hosts(self, transcript: Transcript, plan: Sequence[Piece]) -> list[int | None]:
        found: list[int | None] = []
        for group in self._groups(plan):
            native = group.native()
            found += [native if piece.foreign else None for piece in group.pieces]
        return found

    def assemble(self, transcript: Transcript, plan: Sequence[Piece]) -> Any:
        messages = self._messages(transcript.wire)
        complete: dict[int, set[int | None]] = {}
        for piece in self.pieces(transcript):
            if piece is not None and piece.source is not None:
                complete.setdefault(piece.source, set()).add(piece.index)
        out: list[Any] = []
        for group in self._groups(plan):
            native = group.native()
            if (native is not None and not any(p.foreign for p in group.pieces)
                    and {p.index for p in group.pieces} == complete[native]):
                out.append(messages[native])  # untouched: the very message
                continue
            units = group.units()
            sourced = group.envelope()
            if sourced is None:
                out.append({"role": self.result_role, self.key: units})
            else:  # its keys in their order, the blocks in place of its own
                out.append({key: units if key == self.key else value
                            for key, value in messages[sourced].items()})
        wire = transcript.wire
        return {**wire, "messages": out} if isinstance(wire, dict) else out


WRITERS: dict[str, Writer] = {
    "openai": ChatWriter(),
    "openai-responses": ItemsWriter(),
    "anthropic": BlockWriter("content", "user"),
    "otel-genai": BlockWriter("parts", "tool"),
}
"""Format name → its writer. A format without one can be inspected but not rewritten."""
