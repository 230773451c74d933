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




PARQUET_MAGIC = b"PAR1"


def parquet_lines(path: str) -> Iterator[bytes]:
    """The rows of a Parquet file as JSON lines (timestamps as ISO 8601 in UTC), batch by batch."""
    import orjson
    import pyarrow.parquet as pq

    options = orjson.OPT_NAIVE_UTC | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            yield orjson.dumps(row, default=str, option=options)


def parquet_columns(path: str) -> frozenset[str] | None:
    """The column names of a Parquet file, or None for a file that is not Parquet."""
    try:
        with open(path, "rb") as handle:
            if handle.read(4) != PARQUET_MAGIC:
                return None
        import pyarrow.parquet as pq

        return frozenset(pq.read_schema(path).names)
    except (OSError, ValueError):
        return None


def read_lines_or_parquet(path: str) -> Iterator[Line]:
    """A JSON Lines file's lines, or a Parquet file's rows as JSON lines."""
    from frayproof_audit.sources.base import open_lines

    if parquet_columns(path) is not None:
        yield from parquet_lines(path)
    else:
        yield from open_lines(path)


def messages_of(value: Any) -> tuple[Any, str | None]:
    """An exported input or output (a JSON string or a parsed value) as a message list or a
    single message, and why it cannot be (None: it can)."""
    if isinstance(value, str):
        parsed_value = json_value(value)
        if parsed_value is None and value.strip() not in ("null", ""):
            return [{"role": "user", "content": value}], None  # a plain text prompt
        value = parsed_value
    if value is None or value == "":
        return None, "it was not exported"
    return value, None


def snapshot_format(messages: list[Any]) -> str:
    """The registered format whose evidence the messages show (`auto`), `openai` by default."""
    from frayproof_audit.formats import detect

    try:
        return detect(messages)[0].name
    except Exception:
        return "openai"


def request_messages(value: Any) -> tuple[list[Any] | None, str | None]:
    """A logged request as a message list: a list as is, an object's `messages` (one batch of
    LangChain's list of batches), one message as a list of one."""
    found, missing = messages_of(value)
    if missing is not None:
        return None, f"its input {missing}"
    if isinstance(found, dict):
        inner = found.get("messages")
        if isinstance(inner, list):
            found = inner
        elif "role" in found or "lc" in found or "type" in found:
            found = [found]
        else:
            return None, "its input holds no messages"
    if isinstance(found, list) and found and all(isinstance(item, list) for item in found):
        found = found[0]  # LangChain's chat model runs log a list of batches
    if not isinstance(found, list):
        return None, "its input holds no message list"
    return found, None


def response_messages(value: Any) -> list[Any] | None:
    """A logged response as messages: a plain text as the assistant's, a message as a list of
    one, Chat Completions `choices` and LangChain `generations` as their messages."""
    if isinstance(value, str):
        parsed_value = json_value(value)
        if parsed_value is None:
            return [{"role": "assistant", "content": value}] if value else None
        value = parsed_value
    if isinstance(value, list):
        return value or None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("choices"), list):
        return [choice["message"] for choice in value["choices"]
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict)][:1] or None
    generations = value.get("generations")
    if isinstance(generations, list):
        batch = generations[0] if generations and isinstance(generations[0], list) else generations
        found = [item["message"] for item in batch
                 if isinstance(item, dict) and isinstance(item.get("message"), dict)]
        return found[:1] or None
    if "role" in value or "lc" in value or "type" in value:
        return [value]
    if "content" in value:
        return [{"role": "assistant", **value}]
    return None


def harmonized(request: list[Any], response: list[Any] | None
               ) -> tuple[str, list[Any], list[Any] | None, str | None]:
    """(format, request, response, note): both in one format. A response that is only the
    assistant's text is spelled in the request's format; a response in another format makes
    both their neutral (openai) reading, with a note."""
    from frayproof_audit.formats import get_format

    fmt = snapshot_format(request)
    if response is None:
        return fmt, request, None, None
    other = snapshot_format(response)
    if other == fmt:
        return fmt, request, response, None
    text = _plain_text(response)
    if text is not None and fmt == "otel-genai":
        return fmt, request, [{"role": "assistant", "parts": [{"type": "text", "content": text}]}], None
    if text is not None and fmt == "langchain":
        return fmt, request, [{"type": "ai", "content": text}], None
    try:
        neutral_request = list(get_format(fmt).load_copy(request).wire)
        neutral_response = list(get_format(other).load_copy(response).wire)
    except Exception:  # unreadable content is the call's incomplete reason, found later
        return fmt, request, None, "its output could not be read"
    return ("openai", neutral_request, neutral_response,
            f"input ({fmt}) and output ({other}) were logged in different formats: both are read "
            "in their neutral (openai) reading")


def _plain_text(response: list[Any]) -> str | None:
    if len(response) == 1 and isinstance(response[0], dict) and \
            response[0].keys() <= {"role", "content"} and response[0].get("role") == "assistant" \
            and isinstance(response[0].get("content"), str):
        text: str = response[0]["content"]
        return text
    return None
