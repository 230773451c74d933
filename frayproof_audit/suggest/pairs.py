"""Pair records as `suggest` reads them: validated once, keyed, sessioned, dated and split.

A record is a dict in the audit's shape (`before`, `after`, optional `pair_id`, `session_id`,
`compactor`, `logged_at`, `format`, `tools`). A record that cannot be used becomes an
`Unusable` value naming it and the reason, never an exception, so a bad line costs one pair,
not the run. Pairs are ordered by their key, so the contract learned does not depend on the
order the records came in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats import FORMAT_NAMES
from frayproof_audit.snapshot import load_snapshot
from frayproof_audit.suggest.facts import Facts, facts_of
from frayproof_audit.toolargs.schemas import ToolSchema, tool_schemas

_HOLDOUT_SALT = b"frayproof-audit suggest holdout\0"
_MILLISECONDS_FROM = 10**11
"""An epoch number at least this large is milliseconds (as the audit reads `logged_at`)."""


@dataclass(frozen=True, slots=True)
class Pair:
    """One usable record: its raw snapshots (checked as given) and their neutral reading."""

    index: int
    """Position of the record in the input (0-based)."""
    key: str
    """The pair id as text, or `sha256:<digest>` of the snapshots for a record without one."""
    session: str
    """The session id as text, or `pair:<key>`: a pair without a session is its own session."""
    compactor: str | None
    day: dt.date | None
    """The UTC date of `logged_at` (None without one)."""
    format: str
    before: Any
    after: Any
    tools: tuple[ToolSchema, ...] | None
    """The record's own tool schemas (None: the record has no `tools`)."""
    tools_key: str | None
    facts: Facts
    """What suggest reads of the neutral messages (the snapshots themselves are not kept)."""
    digest: str


@dataclass(frozen=True, slots=True)
class Unusable:
    """A record suggest could not use, and why (the first line of the error)."""

    index: int
    pair_id: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "pair_id": self.pair_id, "reason": self.reason}


def prepare(records: Iterable[Any], input_format: str) -> tuple[list[Pair], list[Unusable]]:
    """Every record as a `Pair` (sorted by key, then content) or an `Unusable`."""
    pairs: list[Pair] = []
    unusable: list[Unusable] = []
    schemas: dict[str, tuple[ToolSchema, ...]] = {}
    for index, record in enumerate(records):
        try:
            pairs.append(_pair(index, record, input_format, schemas))
        except InputError as problem:
            unusable.append(Unusable(index, _id_text(record), str(problem).splitlines()[0]))
    pairs.sort(key=lambda pair: (pair.key, pair.digest, pair.index))
    return pairs, unusable


def held_out(key: str, share: float) -> bool:
    """Whether the pair with this key is held out: a hash of the key, never a random draw, so
    the same logs are always split the same way and a pair stays on its side as logs grow."""
    if share <= 0:
        return False
    digest = hashlib.sha256(_HOLDOUT_SALT + key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def record_key(record: dict[str, Any]) -> str:
    """The key `suggest` orders and splits a record by (see `Pair.key`)."""
    pair_id = _text_id(record, "pair_id")
    if pair_id is not None:
        return pair_id
    return f"sha256:{_digest(record.get('before'), record.get('after'))}"


def _pair(index: int, record: Any, input_format: str, schemas: dict[str, tuple[ToolSchema, ...]]) -> Pair:
    if not isinstance(record, dict):
        raise InputError("the record is not an object")
    for name in ("before", "after"):
        if name not in record:
            raise InputError(f"the record has no '{name}'")
    fmt = record.get("format", input_format)
    if fmt is None:
        fmt = input_format
    if not isinstance(fmt, str) or fmt not in FORMAT_NAMES:
        raise InputError(f"format: unknown format (known: {', '.join(FORMAT_NAMES)})")
    compactor = record.get("compactor")
    if compactor is not None and not isinstance(compactor, str):
        raise InputError("compactor: must be a string")
    try:
        neutral_before = load_snapshot(record["before"], fmt)
    except InputError as problem:
        raise InputError(f"before: {problem}") from None
    try:
        neutral_after = load_snapshot(record["after"], fmt)
    except InputError as problem:
        raise InputError(f"after: {problem}") from None
    tools, tools_key = _tools(record.get("tools"), schemas)
    digest = _digest(record["before"], record["after"])
    pair_id = _text_id(record, "pair_id")
    key = pair_id if pair_id is not None else f"sha256:{digest}"
    session = _text_id(record, "session_id")
    return Pair(index, key, session if session is not None else f"pair:{key}", compactor,
                log_day(record.get("logged_at")), fmt, record["before"], record["after"], tools,
                tools_key, facts_of(neutral_before, neutral_after), digest)


def _tools(value: Any, cache: dict[str, tuple[ToolSchema, ...]]
           ) -> tuple[tuple[ToolSchema, ...] | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, list):
        raise InputError("tools: must be a list of tool definitions")
    if not value:
        return None, None
    try:
        cache_key = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        raise InputError("tools: not JSON values") from None
    found = cache.get(cache_key)
    if found is None:
        found = tool_schemas(value, "the record's tools")
        cache[cache_key] = found
    return found, cache_key


def _text_id(record: Any, name: str) -> str | None:
    if not isinstance(record, dict):
        return None
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if type(value) is int:
        return str(value)
    raise InputError(f"{name}: must be a string or an integer")


def _id_text(record: Any) -> str | None:
    try:
        return _text_id(record, "pair_id")
    except InputError:
        return None


def _digest(before: Any, after: Any) -> str:
    try:
        text = json.dumps([before, after], sort_keys=True, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))
    except (TypeError, ValueError):
        raise InputError("before/after: not JSON values") from None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def log_day(value: Any) -> dt.date | None:
    """The UTC date of a `logged_at` value as the audit reads it: RFC 3339 text (no offset:
    UTC) or epoch seconds (milliseconds from 10^11). None when absent; `InputError` when it is
    there but not a time."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text[-1:] in ("z", "Z"):
            text = text[:-1] + "+00:00"
        try:
            moment = dt.datetime.fromisoformat(text.replace("t", "T"))
        except ValueError:
            raise InputError("logged_at: not an RFC 3339 time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC).date()
    if type(value) in (int, float) and math.isfinite(value):
        seconds = value / 1000 if abs(value) >= _MILLISECONDS_FROM else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC).date()
        except (OverflowError, OSError, ValueError):
            raise InputError("logged_at: outside the years 1-9999") from None
    raise InputError("logged_at: must be an RFC 3339 string or epoch seconds")
