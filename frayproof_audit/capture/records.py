"""What one line of a capture log holds, and how caller values become its JSON.

A line is one corpus record as `audit` reads it (`pair_id`, `session_id`, `compactor`,
`logged_at`, `format`, `tools`, extra keys, then `before` and `after`), written as compact UTF-8
JSON. Snapshots are serialized when they are *captured* (`freeze`), so an edit the agent makes to
its own list afterwards cannot change what was logged.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson

from frayproof_audit.files import read_regular_file
from frayproof_audit.model import Snapshot
from frayproof_audit.snapshot import MAX_SNAPSHOT_BYTES, parse_snapshot_bytes

RESERVED = frozenset({"pair_id", "session_id", "compactor", "logged_at", "format", "tools", "before",
                      "after"})
"""The record fields `audit` reads; extra keys may not take these names."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECONDS = 10**11  # the audit's rule: an epoch magnitude of 10^11 or more is milliseconds


class RecordError(ValueError):
    """A value cannot be written as a record (not JSON, a bad time, a bad field); the message
    says which field and why."""


@dataclass(frozen=True, slots=True)
class FrozenSnapshot:
    """A snapshot as compact JSON, serialized when it was captured.

    `format` is the format the value was converted to (`openai` for LangChain messages and
    neutral `Snapshot`s), None when it is written as the caller gave it."""

    data: bytes
    format: str | None = None

    def value(self) -> Any:
        """The snapshot as plain JSON values (a fresh copy)."""
        return orjson.loads(self.data)


def _langchain_message_type() -> type | None:
    """LangChain's `BaseMessage`, if LangChain is loaded: a list cannot hold one otherwise."""
    module = sys.modules.get("langchain_core.messages.base")
    return getattr(module, "BaseMessage", None) if module is not None else None


def to_wire(value: Any) -> tuple[Any, str | None]:
    """A snapshot as JSON-ready wire data, and the format it was converted to (None: as given).

    LangChain messages go through LangChain's own `convert_to_openai_messages` (message ids are
    left out: LangChain assigns them during a run, so they would make kept messages differ);
    a neutral `Snapshot` becomes its Chat Completions dicts; a path is read as the JSON file it
    names (as `check` reads it); anything else is written as it is."""
    if type(value) is list:  # the common case first: a plain message list
        base = _langchain_message_type()
        if base is not None and any(isinstance(m, base) for m in value):
            from langchain_core.messages import convert_to_openai_messages

            return convert_to_openai_messages(value), "openai"
        return value, None
    if isinstance(value, Snapshot):
        return value.to_wire(), "openai"
    if isinstance(value, str | os.PathLike):
        return parse_snapshot_bytes(read_regular_file(value, MAX_SNAPSHOT_BYTES)), None
    base = _langchain_message_type()
    if base is not None and isinstance(value, list | tuple) and any(isinstance(m, base) for m in value):
        from langchain_core.messages import convert_to_openai_messages

        return convert_to_openai_messages(list(value)), "openai"
    return value, None


def _default(value: Any) -> Any:
    """orjson's hook for values it does not know: LangChain messages and pydantic models (the
    Agents SDK's and OpenAI's item types), dumped as their SDKs dump them."""
    base = _langchain_message_type()
    if base is not None and isinstance(value, base):
        from langchain_core.messages import convert_to_openai_messages

        message: Any = value
        return convert_to_openai_messages(message)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True, warnings=False)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _fast_default(value: Any) -> Any:
    if isinstance(value, FrozenSnapshot):
        return orjson.Fragment(value.data)
    return _default(value)


def _exact_default(value: Any) -> Any:
    if isinstance(value, FrozenSnapshot):
        return json.loads(value.data)  # exact: orjson would read big integers as floats
    return _default(value)


def dumps(value: Any, newline: bool = False) -> bytes:
    """Compact JSON of `value` (a `FrozenSnapshot` inside it is its JSON, spliced in as is); what
    orjson cannot write (integers beyond 64 bits, nesting past its limit, non-string keys) the
    standard library writes in the same layout, escaping any lone surrogate so the line is
    still written and `audit` names it."""
    try:
        return orjson.dumps(value, default=_fast_default,
                            option=orjson.OPT_APPEND_NEWLINE if newline else 0)
    except TypeError as exc:
        try:
            text = json.dumps(value, separators=(",", ":"), allow_nan=False, default=_exact_default)
        except (TypeError, ValueError, RecursionError) as second:
            raise RecordError(str(second) or str(exc)) from None
        return text.encode("ascii") + (b"\n" if newline else b"")


def wire_of(value: Any) -> tuple[Any, str | None]:
    """`to_wire`, with a frozen snapshot kept as it is; `RecordError` for a path that cannot
    be read."""
    if isinstance(value, FrozenSnapshot):
        return value, value.format
    try:
        return to_wire(value)
    except (OSError, ValueError) as exc:
        raise RecordError(f"cannot read the snapshot: {exc}") from None


def plain(value: Any) -> Any:
    """A wire value as fresh plain JSON values (what `redact` gets, free to edit)."""
    if isinstance(value, FrozenSnapshot):
        return json.loads(value.data)
    return json.loads(dumps(value))


def freeze(value: Any) -> FrozenSnapshot:
    """Serialize a snapshot now (see `to_wire`); `RecordError` when it cannot be."""
    if isinstance(value, FrozenSnapshot):
        return value
    wire, fmt = wire_of(value)
    return FrozenSnapshot(dumps(wire), fmt)


def _utc_text(moment: datetime) -> str:
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def timestamp(value: Any, now: Callable[[], datetime]) -> tuple[str, str]:
    """`logged_at` as RFC 3339 UTC text with microseconds, and its night (`YYYY-MM-DD`, UTC).

    Accepted as `audit` reads it: a `datetime` (naive is UTC), a `date` (midnight UTC), RFC 3339
    text (no offset is UTC), or epoch seconds / milliseconds (a magnitude of 10^11 or more is
    milliseconds); None is now."""
    if value is None:
        moment = now()
    elif isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
    elif isinstance(value, str):
        moment = _parse_text_time(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        moment = _epoch(value)
    else:
        raise RecordError(f"logged_at must be a datetime, RFC 3339 text or epoch number, got "
                          f"{type(value).__name__}")
    text = _utc_text(moment)
    return text, text[:10]


def _parse_text_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        raise RecordError(f"logged_at is not an RFC 3339 time: {text!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _epoch(number: float) -> datetime:
    if not math.isfinite(number):
        raise RecordError("logged_at must be a finite number")
    seconds = number / 1000 if abs(number) >= _MILLISECONDS else number
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise RecordError(f"logged_at {number!r} is outside the years 1-9999") from None
    return moment


def sampled_in(key: str, rate: float) -> bool:
    """Whether a session (or, without one, a pair) is kept at `rate`: the same answer for the
    same key in every process and on every host, so a session is kept or dropped whole."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < rate * 2.0**64


def identifier(value: Any, name: str) -> str | int | None:
    """`pair_id` / `session_id` as `audit` takes them: text or an integer (None: absent)."""
    if value is None or type(value) is str or type(value) is int:
        if value == "" and name == "pair_id":
            raise RecordError("pair_id must not be empty")
        return value
    raise RecordError(f"{name} must be a string or an integer, got {type(value).__name__}")


def redact_strings(function: Callable[[str], str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A `redact=` for `PairWriter` that passes every string value inside `before` and `after`
    (message text, tool arguments and results; never keys) through `function`."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return function(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, Mapping):
            return {key: walk(item) for key, item in value.items()}
        return value

    def redact(record: dict[str, Any]) -> dict[str, Any]:
        for field in ("before", "after"):
            if field in record:
                record[field] = walk(record[field])
        return record

    return redact
