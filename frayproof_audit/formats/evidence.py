"""What `auto` reads as evidence of a format: each format states its own (`Format.evidence`).

`auto` asks every registered format that states some, in registry order, and never ranks
what it finds: evidence of two formats is an ambiguity, none is the default reading. A format
that states none (`auto` itself, a format that no snapshot can be told apart by) is never
chosen by `auto`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

MessageEvidence = Callable[[int, dict[Any, Any]], "tuple[str, str] | None"]
"""The first sign of a format in message `index`: `(place, what)` (`messages[2].content[0]`,
`is a thinking block`), the place spelled from `messages`, or None. It must tolerate anything
(values that are not messages are the chosen format's to reject)."""


class Evidence(NamedTuple):
    """Why a snapshot looks like `format`: `place` (`messages[2]`) `what` (`has tool_calls`)."""

    format: str
    place: str
    what: str
    order: int
    """Where it sits (the message index; -1 for the top level), to name the earlier first."""

    def __str__(self) -> str:
        return f"{self.place} {self.what} ({self.format})"


class TextEvidence(NamedTuple):
    """A snapshot given as a JSON string is evidence of the format (`what` says why, as the
    error of an ambiguity shows it), and `parse` reads the string into the snapshot."""

    what: str
    parse: Callable[[str], Any]


class EvidenceRules(NamedTuple):
    """What in a snapshot names one format for `auto` (named tuples: every command imports the
    formats, and a dataclass costs 8x more to define)."""

    message: MessageEvidence | None = None
    """The sign of the format in one message, if messages can carry one."""
    request: tuple[str, ...] = ()
    """Top-level keys of a request object that name the format (`messages`, `system`), in
    the order an error lists them."""
    messages_key: str | None = None
    """The key of a request object that holds the message list, for formats whose snapshot may
    be a request object; the first such key (in registry order) a request has is read."""
    text: TextEvidence | None = None
    """For the format whose snapshot may be a JSON string."""
