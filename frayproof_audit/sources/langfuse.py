"""Langfuse exports: observation rows, JSON Lines or Parquet (`--source langfuse`).

The blob-storage export writes the (enriched) `observations` table as Parquet (the default),
JSON Lines, JSON or CSV (langfuse/langfuse-docs, `blob-storage-export-fields.mdx`): one row per
observation, with `id, trace_id, type, parent_observation_id, start_time, end_time, name,
metadata, input, output, provided_model_name, model_parameters, usage_details` and the trace's
`session_id`, `user_id`, `trace_name` inline (the public API spells them in camelCase:
`traceId`, `startTime`, `usageDetails`, ...; both are read). Timestamps are UTC
(`YYYY-MM-DD HH:MM:SS.ffffff`).

Every `GENERATION` row is one model call (other rows are counted, no row of their own). `input`
and `output` are strings: JSON (the integration's own message list: OpenAI Chat messages,
LangChain message dicts, OpenTelemetry `gen_ai.input.messages` when ingested through OTLP;
`auto` reads each by its evidence) or plain text. Calls are grouped by `session_id` (one trace
per turn is typical), else `trace_id`, and diffed (`lineage`). Langfuse leaves very large
inputs and outputs out of downloads: a generation whose input is empty or absent is incomplete,
never read as a compaction. `model_parameters` or `metadata` setting `previous_response_id` (or
a `conversation`) make a request stateful. Tokens: `usage_details.input` / `output`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from frayproof_audit.sources.base import (
    Derived,
    Line,
    LineProblem,
    Siblings,
    Source,
    Tally,
    first_objects,
    no_role,
)
from frayproof_audit.sources.lineage import Call
from frayproof_audit.sources.requests import (
    finish,
    harmonized,
    iso,
    json_value,
    nanoseconds,
    no_history,
    parquet_columns,
    problem,
    read_lines_or_parquet,
    records,
    request_messages,
    response_messages,
    stateful,
)

NAME = "langfuse"
TYPES = frozenset({"SPAN", "GENERATION", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER",
                   "EVALUATOR", "EMBEDDING", "GUARDRAIL"})
COLUMNS = frozenset({"type", "input", "output"})
TRUNCATED = ("its input is not in the export (Langfuse leaves very large inputs out of "
             "downloads)")


def field(row: dict[str, Any], snake: str) -> Any:
    """A column by its export name or its API (camelCase) name."""
    if snake in row:
        return row[snake]
    head, *rest = snake.split("_")
    return row.get(head + "".join(part.title() for part in rest))


def _observation(value: dict[str, Any]) -> bool:
    kind = value.get("type")
    return isinstance(kind, str) and kind.upper() in TYPES and \
        field(value, "trace_id") is not None and ("input" in value or "output" in value)


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        if _observation(value):
            return f"line {row} is a Langfuse observation (type {value['type']!r} with a trace id)"
    return None


def sniff_file(path: str) -> str | None:
    columns = parquet_columns(path)
    if columns is not None and columns >= COLUMNS and "trace_id" in columns \
            and "run_type" not in columns:
        return "a Parquet file of Langfuse observations (type, trace_id, input, output)"
    return None



def _tokens(usage: Any, key: str) -> int | None:
    if isinstance(usage, str):
        usage = json_value(usage)
    if isinstance(usage, dict):
        value = usage.get(key)
        return value if type(value) is int else None
    return None


def _call(row: int, value: dict[str, Any]) -> Call:
    session = field(value, "session_id")
    trace = field(value, "trace_id")
    conversation, grouped_by = ((str(session), "session_id") if session not in (None, "")
                                else (str(trace), "trace_id"))
    start = nanoseconds(field(value, "start_time"))
    notes: list[str] = []
    request, incomplete = request_messages(value.get("input"))
    if incomplete is not None and "not exported" in incomplete:
        incomplete = TRUNCATED
    fmt, response = "openai", None
    if request is not None:
        fmt, request, response, note = harmonized(request, response_messages(value.get("output")))
        if note:
            notes.append(note)
    parameters = field(value, "model_parameters")
    usage = field(value, "usage_details") or value.get("usage")
    return Call(
        row=row, conversation=conversation, grouped_by=grouped_by, format=fmt, request=request,
        response=response, start=start, end=nanoseconds(field(value, "end_time")),
        logged_at=iso(start), name=value.get("name") if isinstance(value.get("name"), str) else None,
        tokens_in=_tokens(usage, "input"), tokens_out=_tokens(usage, "output"),
        stateful=stateful(parameters, "model_parameters") or stateful(value.get("metadata"), "metadata"),
        incomplete=incomplete, notes=tuple(notes))


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    tally = Tally()
    problems: list[LineProblem] = []
    calls: list[Call] = []
    for row, value in records(lines, tally, problems):
        if not _observation(value):
            problem(tally, problems, row, f"line {row} is no Langfuse observation (type, trace_id, "
                                          "input or output)")
        elif str(value["type"]).upper() == "GENERATION":
            calls.append(_call(row, value))
    return finish(NAME, tally, problems, calls)


SOURCE = Source(
    name=NAME, format="auto", sniff=sniff, derive=derive, role=no_role, history=no_history,
    notes=("generations hold model calls, not compactions: pairs are diffed from consecutive "
           "generations (fidelity diffed)", TRUNCATED.replace("its input is", "an input")),
    read=read_lines_or_parquet, sniff_file=sniff_file)
