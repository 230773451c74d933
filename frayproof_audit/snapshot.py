"""Loading snapshots from what callers hand us: message lists, files, neutral `Snapshot`s.

Every wire-format decision is the format's (`formats/`); this module only reads files strictly,
resolves the format by name and turns sources into a validated `Loaded`.
"""

from __future__ import annotations

import os
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.formats import DEFAULT_FORMAT, Format, get_format
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.jsonio import JSONProblem, is_plain_json, loads_strict, strip_bom
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import Message, Snapshot, ToolCall, message_from_dict

__all__ = [
    "NOT_A_LIST",
    "FormatLike",
    "load_file",
    "load_list",
    "load_neutral",
    "load_plain",
    "load_snapshot",
    "load_source",
    "load_wire",
    "parse_snapshot_bytes",
    "resolve_format",
    "to_snapshot",
]

NOT_A_LIST = "must be an array of message objects"
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024
"""Snapshot files larger than this are refused before reading (a corpus record is capped lower)."""

FormatLike = Format | str | None


def resolve_format(fmt: FormatLike) -> Format:
    """A `Format`, a registered name, or None for the default (`openai`)."""
    if fmt is None:
        return get_format(DEFAULT_FORMAT)
    if isinstance(fmt, str):
        return get_format(fmt)
    return fmt


def load_wire(messages: list[Any], fmt: FormatLike = None) -> Loaded:
    """Validate a freshly parsed (already detached, finite, plain JSON) message list."""
    return resolve_format(fmt).load(messages)


def load_list(messages: Any, fmt: FormatLike = None) -> Loaded:
    """Validate a caller-supplied snapshot (a message list; an object for formats that take
    one), message by message, on a detached JSON copy."""
    chosen = resolve_format(fmt)
    if not isinstance(messages, chosen.containers):
        raise InputError(f"A snapshot {NOT_A_LIST}")
    return chosen.load_copy(messages)


def load_plain(messages: Any, fmt: FormatLike = None) -> Loaded:
    """`load_list` without the copy when `messages` is a plain JSON list (`is_plain_json`): the
    same validation and the same `Loaded`, but holding the caller's own objects, so only for
    callers that keep nothing of it and change nothing in it (`check`, `validate`)."""
    if type(messages) is list and is_plain_json(messages):
        try:
            return load_wire(messages, fmt)
        except InputError:
            pass  # a bad snapshot: the detaching load words the error (formats check in their order)
    return load_list(messages, fmt)


def parse_snapshot_bytes(data: bytes) -> Any:
    """Parse snapshot file bytes (an optional BOM is allowed) into raw JSON, strictly."""
    return loads_strict(strip_bom(data))


def load_file(path: str | os.PathLike[str], fmt: FormatLike = None) -> Loaded:
    """Read a snapshot file: strict UTF-8 JSON whose top level is an array of messages."""
    chosen = resolve_format(fmt)
    try:
        data = read_regular_file(path, MAX_SNAPSHOT_BYTES)
    except UnreadableFile as exc:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': {exc}") from None
    try:
        value = parse_snapshot_bytes(data)
    except JSONProblem as exc:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': {exc}") from None
    if type(value) not in chosen.containers:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': top level {NOT_A_LIST}")
    try:
        return chosen.load(value)
    except InputError as exc:
        raise InputError(f"Snapshot '{os.fspath(path)}': {exc}") from None


def load_neutral(snapshot: Snapshot) -> Loaded:
    """Neutral values are format-free: rebuilt as neutral dicts and validated like any list."""
    messages = snapshot.messages
    if not isinstance(messages, tuple | list):
        raise InputError("Snapshot.messages must be a tuple or list of Message values")
    try:
        dicts = [_neutral_dict(message) for message in messages]
    except (TypeError, AttributeError, ValueError):
        raise InputError("Snapshot.messages holds a value that is not a valid Message") from None
    return OPENAI.load_copy(dicts)


def _neutral_dict(message: Any) -> dict[str, Any]:
    if not isinstance(message, Message):
        raise TypeError("not a Message")
    if not isinstance(message.tool_calls, tuple | list):
        raise TypeError("tool_calls must be a tuple or list")
    for call in message.tool_calls:
        if not isinstance(call, ToolCall):
            raise TypeError("not a ToolCall")
    return message.to_wire()


def load_source(source: Any, fmt: FormatLike = None, *, copy: bool = True) -> Loaded:
    """Accept a message list, a neutral `Snapshot`, or a file path (never JSON text).

    `copy=False`: a plain JSON list is validated in place (`load_plain`), for callers that
    keep nothing of the result."""
    if isinstance(source, Snapshot):
        return load_neutral(source)
    if isinstance(source, str | os.PathLike):
        return load_file(source, fmt)
    if isinstance(source, list | dict):
        return load_list(source, fmt) if copy else load_plain(source, fmt)
    raise InputError(f"A snapshot {NOT_A_LIST}")


def to_snapshot(loaded: Loaded) -> Snapshot:
    """The neutral `Snapshot` value of a loaded snapshot."""
    return Snapshot(tuple(message_from_dict(message) for message in loaded.wire))


def load_snapshot(source: Any, fmt: FormatLike = None) -> Snapshot:
    """Load and validate a snapshot from a list, a `Snapshot` or a file path."""
    return to_snapshot(load_source(source, fmt))
