"""Writing a snapshot back in its own wire format, after repair or compaction reordered,
dropped or added neutral messages: what a format's `writer` is (`Format.writer`).

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

A format without a writer (`writer = None`) can be inspected but not rewritten: `repair` and
`compact` refuse it by name, and in a corpus audit none of its findings is repairable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from frayproof_audit.loaded import Loaded


class WireSnapshot(Protocol):
    """A detached wire snapshot and its neutral reading (the transcript tools' `Transcript`)."""

    @property
    def wire(self) -> Any: ...

    @property
    def loaded(self) -> Loaded: ...


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

    def pieces(self, snapshot: WireSnapshot) -> list[Piece | None]:
        """One piece per neutral message; None for messages read from outside the message
        list (a request's top-level `system` or `instructions`), which stay where they are."""
        ...

    def result(self, call_id: str, text: str) -> Piece:
        """A new tool result answering `call_id` with `text` (an error result where the format
        can say so)."""
        ...

    def assemble(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> Any:
        """The wire value: the input's frame (request keys, top-level system) with `plan` as
        its messages. Shares objects with the input; callers copy."""
        ...

    def hosts(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> list[int | None]:
        """For each piece of `plan`: the input wire message whose message holds it in the
        output when it is a foreign piece joining that message, else None (a piece in its own
        message, or a foreign one in a message of its own)."""
        ...
