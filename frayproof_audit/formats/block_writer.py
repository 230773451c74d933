"""The writer of formats whose messages hold blocks (Anthropic `content`) or parts (OTel
`parts`), and whose results are blocks of a message rather than messages of their own; see
`formats.writer` for what a writer keeps and changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frayproof_audit.formats.writer import Piece, WireSnapshot
from frayproof_audit.loaded import Origin


class _Group:
    """Consecutive pieces of the plan that go into one wire message."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = pieces

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

    def pieces(self, snapshot: WireSnapshot) -> list[Piece | None]:
        loaded = snapshot.loaded
        messages = self._messages(snapshot.wire)
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

    def hosts(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> list[int | None]:
        found: list[int | None] = []
        for group in self._groups(plan):
            native = group.native()
            found += [native if piece.foreign else None for piece in group.pieces]
        return found

    def assemble(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> Any:
        messages = self._messages(snapshot.wire)
        complete: dict[int, set[int | None]] = {}
        for piece in self.pieces(snapshot):
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
        wire = snapshot.wire
        return {**wire, "messages": out} if isinstance(wire, dict) else out
