"""Reading a transcript: the caller's wire value, detached, and its neutral `Loaded` reading.

Transcript tools edit the user's own wire data, so they keep both: the detached wire value
(what the output is assembled from) and the neutral model (what the rules judge). The caller's
value is never touched: it is copied through JSON semantics first. A snapshot given as a JSON
string (an `otel-genai` message list as spans carry it) keeps its text, so results go back
as a JSON string too: the output has the shape the input came in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format
from frayproof_audit.formats.auto import AutoFormat
from frayproof_audit.formats.otel import parse_messages
from frayproof_audit.jsonio import plain_copy, quick_plain_copy
from frayproof_audit.loaded import Loaded
from frayproof_audit.snapshot import NOT_A_LIST, resolve_format

DEFAULT_FORMAT = "auto"
"""Transcript tools detect the format by default (`auto`: the registered format the
transcript's own evidence names, never a guess)."""
SITE_LABEL = "transcript"
"""How a site names the snapshot: `transcript[4].content[2]`."""


class Transcript(NamedTuple):
    """A detached wire snapshot, the format that reads it, and its neutral reading."""

    wire: Any
    format: Format
    loaded: Loaded
    text: str | None = None
    """The JSON string the snapshot came as (None: it came as a list or object)."""

    def shaped(self, wire: Any) -> Any:
        """`wire` (this transcript's own, or one assembled from it) in the shape the input
        came in: for a string input, its own text when `wire` is unchanged, else new JSON."""
        if self.text is None:
            return wire
        if wire is self.wire:
            return self.text
        return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))


def read_transcript(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT) -> Transcript:
    """Detach and validate `snapshot` (a list, a request object, or for `otel-genai` a JSON
    string of the list). Raises `InputError` naming the wire field."""
    chosen = resolve_format(fmt)
    text = snapshot if isinstance(snapshot, str) and str in chosen.containers else None
    if text is not None:
        snapshot = parse_messages(text)
    if not isinstance(snapshot, list | dict) or not isinstance(snapshot, chosen.containers):
        raise InputError(f"A transcript {NOT_A_LIST}")
    wire = _detached(snapshot, lambda reason: InputError(f"The transcript {reason}"))
    if isinstance(chosen, AutoFormat):  # a string is evidence of its own: detect from what was given
        chosen, _ = chosen.detect(wire if text is None else text)
    loaded = chosen.load(_detached(wire, InputError))
    return Transcript(wire, chosen, loaded, text)


def _detached(value: Any, on_error: Callable[[str], Exception]) -> Any:
    """`plain_copy(value, on_error)`, in one orjson round trip when that can tell (a repair
    reads every repaired transcript back through here)."""
    copied = quick_plain_copy(value)
    return copied if copied is not None else plain_copy(value, on_error)
