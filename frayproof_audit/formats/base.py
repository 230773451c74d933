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
"""

from __future__ import annotations

from typing import Any, Protocol

from frayproof_audit.loaded import Loaded, MessageView, Origin

__all__ = ["Format", "Origin"]


class Format(Protocol):
    """An input format. One module per format under `formats/`, one line in the registry."""

    @property
    def name(self) -> str: ...

    @property
    def containers(self) -> tuple[type, ...]:
        """The JSON types a whole snapshot may be: `(list,)` for a message list; formats whose
        requests carry more than messages (a top-level `system`) also take `dict`."""
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
