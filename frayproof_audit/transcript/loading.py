"""Reading a transcript: the caller's wire value, detached, and its neutral `Loaded` reading.

Transcript tools edit the user's own wire data, so they keep both: the detached wire value
(what the output is assembled from) and the neutral model (what the rules judge). The caller's
value is never touched: it is copied through JSON semantics first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats import Format
from frayproof_audit.formats.auto import detect
from frayproof_audit.formats.otel import parse_messages
from frayproof_audit.jsonio import plain_copy, quick_plain_copy
from frayproof_audit.loaded import Loaded
from frayproof_audit.snapshot import NOT_A_LIST, resolve_format

DEFAULT_FORMAT = "auto"
"""Transcript tools detect the format by default (`auto`: openai or anthropic, never a guess)."""
SITE_LABEL = "transcript"
"""How a site names the snapshot: `transcript[4].content[2]`."""


class Transcript(NamedTuple):
    """A detached wire snapshot, the format that reads it, and its neutral reading."""

    wire: Any
    format: Format
    loaded: Loaded


def read_transcript(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT) -> Transcript:
    """Detach and validate `snapshot` (a list, a request object, or for `otel-genai` a JSON
    string of the list). Raises `InputError` naming the wire field."""
    chosen = resolve_format(fmt)
    if isinstance(snapshot, str) and str in chosen.containers:
        snapshot = parse_messages(snapshot)
    if not isinstance(snapshot, list | dict) or not isinstance(snapshot, chosen.containers):
        raise InputError(f"A transcript {NOT_A_LIST}")
    wire = _detached(snapshot, lambda reason: InputError(f"The transcript {reason}"))
    if chosen.name == "auto":
        chosen, _ = detect(wire)
    loaded = chosen.load(_detached(wire, InputError))
    return Transcript(wire, chosen, loaded)


def _detached(value: Any, on_error: Callable[[str], Exception]) -> Any:
    """`plain_copy(value, on_error)`, in one orjson round trip when that can tell (a repair
    reads every repaired transcript back through here)."""
    copied = quick_plain_copy(value)
    return copied if copied is not None else plain_copy(value, on_error)
