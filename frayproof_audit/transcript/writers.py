"""Writing a transcript back in its own wire format, after repair or compaction reordered,
dropped or added neutral messages.

Every neutral message comes from one *piece* of the wire data: a Chat message, a run of
Responses items, an Anthropic `tool_result` block or the rest of its message, an OTel
`tool_call_response` part or a run of other parts. A plan is a sequence of pieces (the input's,
plus new results); a writer assembles it into the format's wire value. Pieces that end up
together again, complete and in their order, give back their wire message exactly as it was
(block order, keys and all), so an untouched message is never rewritten. Results placed next
to each other travel in one message, as providers want one turn's results together.
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


# --------------------------------------------------------------------------- anthropic, otel


@dataclass
class _Group:
    pieces: list[Piece] = field(default_factory=list)

    def accepts(self, piece: Piece) -> bool:
        if not self.pieces or piece.whole or self.pieces[-1].whole:
            return False
        if piece.result:
            last = self.pieces[-1].source
            return all(p.result for p in self.pieces) or (last is not None and last == piece.source)
        # The rest of a message joins only the message it was read from (its envelope: role,
        # keys), never a results message that merely holds results moved out of it.
        return piece.source is not None and piece.source == self.envelope()

    def envelope(self) -> int | None:
        """The wire message whose role and keys the group's message takes (None: a new one)."""
        return next((p.source for p in self.pieces if p.source is not None), None)


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
            units = self._units(messages[number], [loaded.origin(i) for i in indices])
            for index, (piece_units, result, whole) in zip(indices, units, strict=True):
                found[index] = Piece(index, number, piece_units, result, whole)
        return found

    def _units(self, message: dict[str, Any],
               origins: list[Origin]) -> list[tuple[tuple[Any, ...], bool, bool]]:
        """The units of each neutral message read from `message`, in reading order."""
        blocks = message.get(self.key)
        if not isinstance(blocks, list):
            return [((), False, True)]
        taken: set[int] = {origin.block for origin in origins if origin.block is not None}
        rest = [block for position, block in enumerate(blocks) if position not in taken]
        runs = self._runs(blocks, taken) if self.key == "parts" else [rest]
        units: list[tuple[tuple[Any, ...], bool, bool]] = []
        for origin in origins:
            if origin.block is not None:
                units.append(((blocks[origin.block],), True, False))
            else:
                units.append((tuple(runs.pop(0)) if runs else (), False, False))
        return units

    @staticmethod
    def _runs(parts: list[Any], responses: set[int]) -> list[list[Any]]:
        """OTel: the maximal runs of parts between responses (one empty run for no parts)."""
        runs: list[list[Any]] = []
        current: list[Any] = []
        for position, part in enumerate(parts):
            if position in responses:
                if current:
                    runs.append(current)
                current = []
            else:
                current.append(part)
        if current or not parts:
            runs.append(current)
        return runs

    def result(self, call_id: str, text: str) -> Piece:
        if self.key == "content":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                     "content": text, "is_error": True}
        else:
            block = {"type": "tool_call_response", "id": call_id, "response": text}
        return Piece(None, None, (block,), True, False)

    def assemble(self, transcript: Transcript, plan: Sequence[Piece]) -> Any:
        messages = self._messages(transcript.wire)
        complete: dict[int, list[int | None]] = {}
        for piece in self.pieces(transcript):
            if piece is not None and piece.source is not None:
                complete.setdefault(piece.source, []).append(piece.index)
        groups: list[_Group] = []
        for piece in plan:
            if groups and groups[-1].accepts(piece):
                groups[-1].pieces.append(piece)
            else:
                groups.append(_Group([piece]))
        out: list[Any] = []
        for group in groups:
            sources = {piece.source for piece in group.pieces}
            first = group.pieces[0]
            if (len(sources) == 1 and first.source is not None
                    and [p.index for p in group.pieces] == complete[first.source]):
                out.append(messages[first.source])
                continue
            sourced = group.envelope()
            if sourced is None:
                envelope: dict[str, Any] = {"role": self.result_role}
            else:
                envelope = {k: v for k, v in messages[sourced].items() if k != self.key}
            envelope[self.key] = [unit for piece in group.pieces for unit in piece.units]
            out.append(envelope)
        wire = transcript.wire
        return {**wire, "messages": out} if isinstance(wire, dict) else out


WRITERS: dict[str, Writer] = {
    "openai": ChatWriter(),
    "openai-responses": ItemsWriter(),
    "anthropic": BlockWriter("content", "user"),
    "otel-genai": BlockWriter("parts", "tool"),
}
"""Format name → its writer. A format without one can be inspected but not rewritten."""
