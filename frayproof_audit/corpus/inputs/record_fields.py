"""From a raw record to the fields of one pair: strict parsing, dotted-path field mapping, types.

Every problem is a short reason without location (the worker prefixes file and line/row), and
the optional fields are read even when the record is bad, so an input error still carries its
compactor, session and date where the record has them.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from typing import Any, NamedTuple

from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.formats import FORMATS
from frayproof_audit.jsonio import JSONProblem, compact, loads_strict, loads_strict_sized

_MISSING: Any = object()


class RecordProblem(ValueError):
    """A record cannot be audited; the message is the reason, without location."""


class MissingField(RecordProblem):
    """`before` or `after` is not where the field map says: the record's own top-level keys
    are kept, so the run can say once what the records do have."""

    def __init__(self, message: str, field_name: str, keys: tuple[str, ...]) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.keys = keys


class Meta(NamedTuple):
    """The optional fields, as far as they could be read."""

    pair_id: str | None
    session_id: str | None
    compactor: str | None
    logged_at: datetime | None
    format: str | None
    tools: list[Any] | None = None
    """The record's own tool definitions (plain JSON values), when it has any."""
    provenance: dict[str, Any] | None = None
    """The `pairs` columns of what derived the pair (`PROVENANCE`): `source_kind` `pairs` for
    a record of the audit's own shape, a source's name and what its log says of the compaction
    for a derived pair's record (`record_of`)."""
    carried: list[dict[str, str]] | None = None
    """The `--carry` fields the record has, as `pairs.carried` entries ({name, value})."""


PAIRS = "pairs"
PROVENANCE_TEXT = ("fidelity", "event", "trigger", "classification", "evidence")
PROVENANCE_COUNTS = ("tokens_before", "tokens_after")
PROVENANCE = ("source_kind", *PROVENANCE_TEXT, *PROVENANCE_COUNTS)
"""The `pairs` columns (tables schema 5) a derived pair's record carries. They are read from a
record whose `source_kind` names a registered source (what `pairs -o` writes, so auditing
that file gives the rows auditing the logs gives); any other record's are its own business,
never read: its `source_kind` is `pairs` and the others are null."""
INPUT_ERROR = "input_error"
"""A derived record's reason it holds no pair (a compaction whose before or after cannot be
rebuilt, a line that is not JSON): the record is an input error saying so."""


def kind_name(value: Any) -> str:
    """The JSON name of a value's type, for reasons ("got a string")."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_json_record(data: bytes) -> dict[str, Any]:
    """One JSONL line (its line ending may be included) → its object, strictly (duplicate
    keys, NaN, deep nesting refused)."""
    return parse_json_record_sized(data)[0]


def parse_json_record_sized(data: bytes) -> tuple[dict[str, Any], dict[str, int] | None]:
    """`parse_json_record`, and the compact JSON size of each top-level value when parsing
    already wrote it (see `snapshot_sizes`); None otherwise."""
    try:
        value, sizes = loads_strict_sized(data)
    except JSONProblem:
        try:  # the reason again without the line ending, so a position names the line, not the next
            loads_strict_sized(data.rstrip(b"\r\n"))
        except JSONProblem as exc:
            reason = str(exc)
        else:  # pragma: no cover - a line ending is JSON whitespace: the same verdict either way
            raise AssertionError("a record parsed only without its line ending") from None
        if not reason.startswith("invalid JSON"):
            reason = f"invalid JSON: {reason}"
        raise RecordProblem(reason) from None
    if type(value) is not dict:
        raise RecordProblem(f"a record must be a JSON object, got {kind_name(value)}")
    return value, sizes


def json_size(value: Any) -> int:
    """Size of `value` as compact JSON (UTF-8 bytes); exact for what orjson cannot write."""
    return len(compact(value))


def snapshot_sizes(
    record: dict[str, Any], sizes: dict[str, int] | None, paths: tuple[str, str],
    snapshots: tuple[Any, Any],
) -> tuple[int, int]:
    """Sizes of `before` and `after` (`snapshots`, read from `record` at `paths`) as compact
    JSON: from `sizes` (each top-level value's, as parsing wrote them) when a snapshot is a
    top-level value, else written again."""
    before_path, after_path = paths
    before, after = snapshots

    def size(path: str, snapshot: Any) -> int:
        if sizes is not None and path in sizes and record[path] is snapshot:
            return sizes[path]
        return json_size(snapshot)

    return size(before_path, before), size(after_path, after)


def lookup(record: dict[str, Any], path: str) -> Any:
    """The value at a dotted path: a literal key first, then segment by segment."""
    if path in record:
        return record[path]
    current: Any = record
    for segment in path.split("."):
        if type(current) is not dict or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def has_path(record: dict[str, Any], path: str) -> bool:
    """Whether `record` holds anything, null included, at the dotted `path` (`lookup`)."""
    return lookup(record, path) is not _MISSING


def has_value(record: dict[str, Any], path: str) -> bool:
    """Whether `record` holds a value other than null at the dotted `path` (`lookup`)."""
    value = lookup(record, path)
    return value is not _MISSING and value is not None


MAX_CARRIED_CHARS = 1024
"""A carried value is cut to this many characters (the last one `…`): a label to group on,
never a copy of a snapshot."""


def carried_text(value: Any) -> str:
    """A carried value as text: a string as it is, a time in ISO 8601, anything else as
    compact JSON (`3`, `true`, `{"a":1}`); at most `MAX_CARRIED_CHARS` characters."""
    if type(value) is str:
        text = value
    elif isinstance(value, datetime | date):
        text = value.isoformat()
    else:
        try:
            text = compact(value).decode("utf-8", "replace")
        except (TypeError, ValueError):
            text = str(value)
    if len(text) > MAX_CARRIED_CHARS:
        return text[: MAX_CARRIED_CHARS - 1] + "…"
    return text


def nearest_keys(record: dict[str, Any], path: str) -> tuple[str, tuple[str, ...]]:
    """Where the dotted `path` stops matching `record`: the deepest object on it that exists
    (its dotted prefix, "" for the record itself) and that object's keys, sorted (none when
    the value there is no object). What a user fixing a typo in a field map needs to see."""
    current: Any = record
    prefix: list[str] = []
    for segment in path.split("."):
        if type(current) is not dict or segment not in current or current[segment] is None:
            break
        current = current[segment]
        prefix.append(segment)
    keys = tuple(sorted(map(str, current))) if type(current) is dict else ()
    return ".".join(prefix), keys


class FieldReader:
    """Reads the mapped fields of records from one input file (its Hive folder values as fallback)."""

    __slots__ = ("_carry", "_fields", "_hive", "_nested", "_paths", "default_format")

    def __init__(
        self, fields: FieldMap, hive: tuple[tuple[str, str], ...], nested: bool, default_format: str
    ) -> None:
        self._fields = fields
        self._paths = dict(fields.items())
        self._carry = fields.carry
        self._hive = dict(hive)
        self._nested = nested
        self.default_format = default_format

    def columns(self) -> list[str]:
        """Top-level names a Parquet reader must load: each path literally and its first
        segment, and a derived pair's provenance (`PROVENANCE`)."""
        names: list[str] = []
        for path in (*self._paths.values(), *self._fields.carried_paths()):
            names.extend((path, path.split(".", 1)[0]))
        names.extend((*PROVENANCE, INPUT_ERROR))
        return list(dict.fromkeys(names))

    def json_columns(self) -> frozenset[str]:
        """Top-level columns read only as JSON text (`before`, `after`, `tools` mapped to a column
        of their own): a Parquet reader may hand these over as UTF-8 bytes, never as Python text."""
        parsed = ("before", "after", "tools")
        others: set[str] = set()
        for name, path in (*self._fields.items(), *self._carry):
            if name not in parsed:  # a carried name is never a field's (`with_carry`)
                others.update((path, path.split(".", 1)[0]))
        mine = [self._paths[name] for name in parsed if name in self._paths]
        return frozenset(path for path in mine if path not in others and mine.count(path) == 1)

    def _get(self, record: dict[str, Any], name: str) -> Any:
        path = self._paths[name]
        value = lookup(record, path)
        if (value is _MISSING or value is None) and path in self._hive:
            return self._hive[path]
        return None if value is _MISSING else value

    def meta(self, record: dict[str, Any]) -> tuple[Meta, str | None]:
        """The optional fields, and the first problem among them (None when all are fine)."""
        problems: list[str] = []

        def text(name: str, allow_int: bool) -> str | None:
            value = self._get(record, name)
            if value is None or type(value) is str:
                return value
            if allow_int and type(value) is int:
                return str(value)
            wanted = "a string or an integer" if allow_int else "a string"
            problems.append(f"{name} must be {wanted}, got {kind_name(value)}")
            return None

        pair_id = text("pair_id", True)
        if pair_id == "":
            problems.append("pair_id must not be empty")
            pair_id = None
        session_id = text("session_id", True)
        compactor = text("compactor", False)
        logged_at = None
        raw_time = self._get(record, "logged_at")
        if raw_time is not None:
            try:
                logged_at = parse_logged_at(raw_time)
            except RecordProblem as exc:
                problems.append(str(exc))
        fmt = text("format", False)
        if fmt is not None and fmt not in FORMATS:
            # The row keeps the name the record gave, so unknown formats can be found.
            problems.append(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        tools = self._tools(record, problems)
        provenance = provenance_of(record, problems)
        carried = self._carried(record) if self._carry else None
        meta = Meta(pair_id, session_id, compactor, logged_at, fmt or self.default_format,
                    tools or None, provenance, carried)
        return meta, (problems[0] if problems else None)

    def _carried(self, record: dict[str, Any]) -> list[dict[str, str]]:
        """The carried fields the record (or its Hive folder) has, each as text (`carried_text`)."""
        found = []
        for name, path in self._carry:
            value = lookup(record, path)
            if (value is _MISSING or value is None) and path in self._hive:
                value = self._hive[path]
            if value is not _MISSING and value is not None:
                found.append({"name": name, "value": carried_text(value)})
        return found

    def _tools(self, record: dict[str, Any], problems: list[str]) -> list[Any] | None:
        """The record's `tools` as plain JSON (Parquet: nested structs or a JSON string)."""
        tools = self._get(record, "tools")
        if self._nested and isinstance(tools, str | bytes):
            try:
                tools = loads_strict(tools.encode("utf-8") if isinstance(tools, str) else tools)
            except JSONProblem as exc:
                problems.append(f"tools is not valid JSON: {exc}")
                return None
        elif self._nested and type(tools) is list:
            try:
                tools = _from_arrow(tools, "tools")
            except RecordProblem as exc:
                problems.append(str(exc))
                return None
        if tools is not None and type(tools) is not list:
            problems.append(f"tools must be a list of tool definitions, got {kind_name(tools)}")
            return None
        return tools

    def snapshot(
        self, record: dict[str, Any], name: str, containers: tuple[type, ...] = (list,)
    ) -> Any:
        """`before` or `after` as plain JSON of one of the format's `containers` (a message
        list; an object for formats that take one), or `RecordProblem`."""
        path = self._paths[name]
        value = lookup(record, path)
        where = name if path == name else f"{name} (at {path!r})"
        if value is _MISSING or value is None:
            raise MissingField(f"{where} is missing", name, tuple(sorted(map(str, record))[:12]))
        if type(value) in containers:
            return _from_arrow(value, where) if self._nested else value
        if self._nested and isinstance(value, str | bytes):
            data = value.encode("utf-8") if isinstance(value, str) else value
            try:
                parsed = loads_strict(data)
            except JSONProblem as exc:
                raise RecordProblem(f"{where} is not valid JSON: {exc}") from None
            if type(parsed) in containers:
                return parsed
            value = parsed
        raise RecordProblem(f"{where} must be an array of message objects, got {kind_name(value)}")


def provenance_of(record: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """The provenance columns of a record (`PROVENANCE`); a derived record's wrong values and
    its own `input_error` go to `problems` (its `input_error` first: it is why there is no pair)."""
    kind = record.get("source_kind")
    if type(kind) is not str or kind == PAIRS:
        return {"source_kind": PAIRS}
    from frayproof_audit.sources import SOURCES  # only a derived record pays for the sources

    if kind not in SOURCES:
        return {"source_kind": PAIRS}  # a field of the user's own, named like ours
    from frayproof_audit.sources import CLASSIFICATIONS, EVENTS, FIDELITIES, TRIGGERS

    said = record.get(INPUT_ERROR)
    if type(said) is str and said:
        problems.insert(0, said)
    found: dict[str, Any] = {"source_kind": kind}
    allowed: dict[str, tuple[str, ...]] = {"fidelity": FIDELITIES, "event": EVENTS,
                                           "trigger": TRIGGERS, "classification": CLASSIFICATIONS}
    for name in PROVENANCE_TEXT:
        value = record.get(name)
        if value is None:
            continue
        if type(value) is not str or (name in allowed and value not in allowed[name]):
            choices = f"one of {', '.join(allowed[name])}" if name in allowed else "a string"
            problems.append(f"{name} must be {choices}, got {_shown(value)}")
            continue
        found[name] = value
    for name in PROVENANCE_COUNTS:
        value = record.get(name)
        if value is None:
            continue
        if type(value) is not int or not 0 <= value < 2**63:
            problems.append(f"{name} must be a token count (an integer >= 0), got {_shown(value)}")
            continue
        found[name] = value
    return found


def _shown(value: Any) -> str:
    text = compact(value).decode("utf-8", "replace")
    return text if len(text) <= 40 else f"{text[:37]}..."


def record_of(row: Any, path: str, source: str, default_format: str, label: str = "line",
              located: bool = True) -> dict[str, Any]:
    """A derived row (a `Compaction` or a `LineProblem` of `sources`) as a record of the audit's
    own shape, with its provenance: what `pairs -o` writes and what `audit` reads from a file a
    source reads, so both judge one record. `located`: the `input_error` of a row without a
    pair names the file and the line (a record kept elsewhere); the audit names them itself."""
    from frayproof_audit.sources import Compaction

    where = f"{path} {label} {row.source_row}: " if located else ""
    record: dict[str, Any] = {}
    if not isinstance(row, Compaction):
        return {"pair_id": f"{path}:{row.source_row}", "format": default_format,
                "source_kind": source, "source": path, "source_row": row.source_row,
                INPUT_ERROR: where + row.reason, "before": None, "after": None}
    notes = list(row.notes)
    logged_at = row.logged_at
    if logged_at is not None:
        try:
            parse_logged_at(logged_at)
        except RecordProblem:
            notes.append(f"its timestamp {logged_at[:40]!r} is no RFC 3339 time: filed under the"
                         " run's date")
            logged_at = None
    diff = row.diff
    record.update(
        pair_id=row.pair_id, session_id=row.session_id, compactor=row.compactor,
        logged_at=logged_at, format=row.format, source_kind=source, source=path,
        source_row=row.source_row, fidelity=row.fidelity, event=row.event, trigger=row.trigger,
        tokens_before=row.tokens_before, tokens_after=row.tokens_after,
        classification=None if diff is None else diff.classification,
        evidence=evidence_of(diff), notes=notes)
    if diff is not None:
        record["diff"] = asdict(diff)
    if row.problem is not None:
        record[INPUT_ERROR] = where + row.problem
    record.update(before=row.before, after=row.after)
    return record


def evidence_of(diff: Any) -> str | None:
    """A diffed row's evidence in one line (`pairs.evidence`): the rules that decided, the
    first message the after does not go on with and what it holds there, the calls compared."""
    if diff is None:
        return None
    parts = list(diff.reasons)
    if diff.before_item is not None:
        parts.append(f"first difference: {diff.before_item}"
                     + (f" → {diff.after_item}" if diff.after_item is not None else ""))
    parts.append(f"diffed against the call of row {diff.previous_row}")
    if diff.summarizer_row is not None:
        parts.append(f"summarizer call: row {diff.summarizer_row}")
    return "; ".join(parts)


EPOCH_MILLISECONDS_FROM = 100_000_000_000
"""Epoch numbers at or above this magnitude are milliseconds, below it seconds.

10^11 seconds is the year 5138 and 10^11 milliseconds is March 1973, so every time a log of
this century writes reads right in either unit. Microseconds or nanoseconds read as
milliseconds land after the year 9999 and are refused as out of range, never misfiled.
"""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_logged_at(value: Any) -> datetime:
    """An RFC 3339 string, epoch seconds or milliseconds, a timestamp or a date → aware UTC.

    A time without an offset is UTC. Booleans, non-finite numbers and times outside the years
    1-9999 are a `RecordProblem`.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif type(value) is str:
        moment = _from_text(value)
    elif type(value) is int or type(value) is float:
        return _from_epoch(value)
    else:
        raise RecordProblem(
            "logged_at must be an RFC 3339 string, epoch seconds or milliseconds, or a timestamp,"
            f" got {kind_name(value)}"
        )
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise RecordProblem("logged_at is out of range (years 1-9999)") from None


def _from_text(value: str) -> datetime:
    text = value.strip()
    # RFC 3339 allows a lowercase `t` and `z`; fromisoformat only takes the capitals.
    if len(text) > 10 and text[10] == "t":
        text = f"{text[:10]}T{text[11:]}"
    if text.endswith("z"):
        text = text[:-1] + "Z"
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise RecordProblem(f"logged_at {value[:40]!r} is not an RFC 3339 time") from None


def _from_epoch(value: float) -> datetime:
    shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}..."
    if not math.isfinite(value):
        raise RecordProblem(f"logged_at {shown} is not a time")
    millis = abs(value) >= EPOCH_MILLISECONDS_FROM
    try:
        return _EPOCH + (timedelta(milliseconds=value) if millis else timedelta(seconds=value))
    except OverflowError:
        unit = "milliseconds" if millis else "seconds"
        raise RecordProblem(
            f"logged_at {shown} (epoch {unit}) is out of range (years 1-9999)"
        ) from None


def _from_arrow(value: Any, where: str) -> Any:
    """A nested Parquet value → plain JSON values.

    Arrow structs cannot tell a missing key from a null one (every row of a struct column has
    every field), so null struct fields are dropped: a message written without `tool_calls`
    reads back without it. Values JSON cannot hold are a `RecordProblem`.
    """
    kind = type(value)
    if kind is dict:
        return {key: _from_arrow(item, where) for key, item in value.items() if item is not None}
    if kind is list:
        return [_from_arrow(item, where) for item in value]
    if kind is float:
        if not math.isfinite(value):
            raise RecordProblem(f"{where} holds a non-finite number")
        return value
    if value is None or kind in (str, int, bool):
        return value
    raise RecordProblem(f"{where} holds a value JSON cannot represent ({kind.__name__})")
