"""What request-log sources share: reading JSON lines into calls, time stamps, stateful
requests, and turning the calls into a `Derived` (`lineage.pair_calls`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from frayproof_audit.jsonio import JSONProblem, loads_strict
from frayproof_audit.sources.base import (
    Counts,
    Derived,
    Line,
    LineProblem,
    Row,
    Tally,
    parsed,
)
from frayproof_audit.sources.lineage import Call, pair_calls

STATEFUL_KEYS = ("previous_response_id", "previousResponseId", "conversation", "conversation_id")
"""Request parameters that make the request a delta on a history the server keeps (OpenAI
Responses `previous_response_id` and `conversation`)."""


def stateful(parameters: Any, where: str) -> str | None:
    """Why a request's parameters (a dict, or a JSON string of one) make it stateful."""
    if isinstance(parameters, str):
        parameters = json_value(parameters)
    if not isinstance(parameters, Mapping):
        return None
    for key in STATEFUL_KEYS:
        value = parameters.get(key)
        if value not in (None, "", {}, []):
            return f"{where} sets {key}: the request carries only a delta"
    return None


def json_value(text: str) -> Any:
    """A JSON string's value, or None when it is not JSON."""
    try:
        return loads_strict(text.encode("utf-8", "surrogatepass"))
    except (JSONProblem, UnicodeEncodeError):
        return None


def nanoseconds(value: Any) -> int | None:
    """A time as nanoseconds since the epoch: OTLP's integer (or its string), an ISO 8601
    string (`2026-05-29T13:46:19.963Z`, Langfuse's `2026-05-29 13:46:19.963000`, UTC when no
    zone is given), or a `datetime`."""
    if type(value) is int:
        return value
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(stamp.timestamp()) * 1_000_000_000 + stamp.microsecond * 1000
    if not isinstance(value, str) or not value:
        return None
    if value.isdigit():
        return int(value)
    try:
        parsed_time = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return nanoseconds(parsed_time)


def iso(value: int | None) -> str | None:
    if value is None:
        return None
    stamp = dt.datetime.fromtimestamp(value // 1_000_000_000, dt.UTC)
    return (stamp.replace(microsecond=(value % 1_000_000_000) // 1000)
            .isoformat().replace("+00:00", "Z"))


def records(lines: Iterable[Line], tally: Tally,
            problems: list[LineProblem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row, object) of every JSON-object line; the others are counted and kept as problems."""
    for row, value in parsed(lines, tally):
        if isinstance(value, LineProblem):
            problems.append(value)
        else:
            yield row, value


def problem(tally: Tally, problems: list[LineProblem], row: int, reason: str) -> None:
    """A valid JSON line that is not a record of this source: one problem row."""
    tally.problems += 1
    problems.append(LineProblem(row, reason))


def finish(source: str, tally: Tally, problems: list[LineProblem], calls: list[Call],
           notes: Iterable[str] = ()) -> Derived:
    """Pair the calls and account for every line (`Counts.events`: the lines holding the
    later call of an event)."""
    rows, lineages = pair_calls(source, calls)
    event_lines = {row.source_row for row in rows}
    counts = Counts(tally.lines, len(event_lines),
                    tally.lines - len(event_lines) - tally.problems - tally.blank,
                    tally.problems, tally.blank, calls=len(calls))
    found = [*notes, *(note for lineage in lineages for note in lineage.notes)]
    ordered: list[Row] = sorted([*problems, *rows], key=lambda row: row.source_row)
    return Derived(tuple(ordered), counts, tuple(dict.fromkeys(found)), tuple(lineages))


def no_history(lines: Iterable[Line]) -> list[Any]:
    """Request logs hold calls, not one agent's history: there is none to show."""
    return []


