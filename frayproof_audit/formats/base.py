"""What an input format is: the one place that knows a wire format's own fields.

A format turns one wire snapshot (a parsed JSON message list) into the neutral `Loaded` model
the checks read, computes message identities, and says where a neutral position lives in the
user's own data (`after[4]`, `after[4].tool_calls[1]`, `after[4].tool_calls[1].arguments.path`,
a block index for formats whose messages hold blocks). Checks, operators and the corpus never
look at wire fields; they see `MessageView`s and the neutral message dicts of `model`.

Optional, outside the protocol: a format whose messages hold blocks a provider rule may name
(thinking blocks, reasoning items) can spell one content block, `block_site(snapshot, origin,
position)`, and count it as the provider does, `wire_block(origin, position)`
(`providers.blocks` asks for them and falls back to `after[i].content[p]`).

What a format knows beyond reading is part of its record too: `evidence`, what `auto` reads
as a sign of it, and `writer`, how `repair` and `compact` write it back (None: it cannot be
rewritten, which they say by name). Every format here states both; `evidence_of` and
`writer_of` read a format that predates them (a library user's own) as having neither.
"""

from __future__ import annotations

from typing import Any, Protocol

from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.writer import Writer
from frayproof_audit.loaded import Loaded, MessageView, Origin

__all__ = ["Format", "Origin", "evidence_of", "writer_of"]


class Format(Protocol):
    """An input format. One module per format under `formats/`, one line in the registry."""

    @property
    def name(self) -> str: ...

    @property
    def containers(self) -> tuple[type, ...]:
        """The JSON types a whole snapshot may be: `(list,)` for a message list; formats whose
        requests carry more than messages (a top-level `system`) also take `dict`."""
        ...

    @property
    def evidence(self) -> EvidenceRules | None:
        """What `auto` reads as a sign of this format (None: `auto` never chooses it)."""
        ...

    @property
    def writer(self) -> Writer | None:
        """How its wire data is written back after repair or compaction (None: it cannot be)."""
        ...

    def load(self, messages: Any) -> Loaded:
        """Validate a freshly parsed snapshot (plain JSON values, not shared with the caller),
        of one of `containers`. Raises `InputError` naming the message and field."""
        ...

    def load_copy(self, messages: Any) -> Loaded:
        """Like `load`, for a value the caller still owns: validated on a detached copy."""
        ...

    def views(self, messages: list[dict[str, Any]]) -> list[MessageView]:
        """Views of neutral message dicts (mutants' new messages)."""
        ...

    def identity(self, message: dict[str, Any]) -> bytes:
        """Canonical bytes of a neutral message: equal bytes ⇔ the same message."""
        ...

    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        """A position in the user's wire data: a message, one call of it, or one top-level
        argument of that call's arguments object (`argument`, given only with `call`). The
        format spells it as its users see their data."""
        ...

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        """The wire messages from `first` to `last`, both included."""
        ...


def evidence_of(fmt: Format) -> EvidenceRules | None:
    """`fmt.evidence`; None for a format that predates the member."""
    found: EvidenceRules | None = getattr(fmt, "evidence", None)
    return found


def messages_key(fmt: Format) -> str:
    """The key of a request object that holds this format's messages (`messages`, or
    `input` for the Responses API), as its evidence rules state it."""
    rules = evidence_of(fmt)
    return rules.messages_key if rules is not None and rules.messages_key is not None else "messages"


def writer_of(fmt: Format) -> Writer | None:
    """`fmt.writer`; None for a format that predates the member."""
    found: Writer | None = getattr(fmt, "writer", None)
    return found
