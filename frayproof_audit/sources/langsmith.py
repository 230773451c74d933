"""LangSmith bulk exports: Parquet `runs` (`--source langsmith`).

A bulk export writes a project's runs as Parquet (langchain-ai/docs `src/langsmith/
data-export.mdx`, run fields in `run-data-format`): `id, trace_id, parent_run_id, name,
run_type, start_time, end_time, dotted_order, inputs, outputs, extra, prompt_tokens,
completion_tokens, ...`; `session_id` there is the *project*, not the conversation. Runs read
from the API as JSON Lines are read too.

Every `run_type = llm` run is one model call. A LangChain chat model's run logs `inputs =
{"messages": [[dumpd(message), ...]]}` (a list of batches of serialized messages: format
`langchain`) and `outputs = {"generations": [[{"message": dumpd(AIMessage)}]]}`; a
`wrap_openai` run logs the raw request (`{"messages": [{"role": ...}], "model": ...}`) and the
response (`choices`). Calls are grouped by the thread LangSmith itself reads
(`threads.mdx`: `extra.metadata.session_id`, `conversation_id` or `thread_id`, checked in that
order), else the trace, ordered by `start_time` then `dotted_order` (runs started in the
same microsecond keep LangSmith's own order), and diffed (`lineage`). A
run whose `langgraph_node` is a summarization middleware's (`SummarizationMiddleware.before_model`)
is the summarizer's call; a summary message LangChain tags
`additional_kwargs.lc_source = "summarization"` is a summary marker. An export without `inputs`
(`export_fields` left them out) has nothing to diff: such runs are incomplete. Tokens:
`prompt_tokens` / `completion_tokens`.
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

NAME = "langsmith"
THREAD_KEYS = ("session_id", "conversation_id", "thread_id")
"""LangSmith's own thread keys, in the order it checks them (`threads.mdx`)."""
RUN_TYPES = frozenset({"llm", "chain", "tool", "retriever", "embedding", "prompt", "parser"})


def _run(value: dict[str, Any]) -> bool:
    return isinstance(value.get("run_type"), str) and "trace_id" in value and (
        "inputs" in value or "outputs" in value or "dotted_order" in value)


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        if _run(value):
            return f"line {row} is a LangSmith run (run_type {value['run_type']!r})"
    return None


def sniff_file(path: str) -> str | None:
    columns = parquet_columns(path)
    if columns is not None and {"run_type", "trace_id"} <= columns:
        return "a Parquet file of LangSmith runs (run_type, trace_id)"
    return None



def _json(value: Any) -> Any:
    return json_value(value) if isinstance(value, str) else value


def _metadata(extra: Any) -> dict[str, Any]:
    extra = _json(extra)
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _marked(messages: list[Any]) -> frozenset[int]:
    """Serialized messages LangChain tagged as a summary (`lc_source: summarization`)."""
    found = set()
    for index, message in enumerate(messages):
        fields = message.get("kwargs") if isinstance(message, dict) and "lc" in message else message
        extra = fields.get("additional_kwargs") if isinstance(fields, dict) else None
        if isinstance(extra, dict) and extra.get("lc_source") == "summarization":
            found.add(index)
    return frozenset(found)


def _call(row: int, value: dict[str, Any]) -> Call:
    metadata = _metadata(value.get("extra"))
    key = next((name for name in THREAD_KEYS if metadata.get(name) not in (None, "")), None)
    conversation, grouped_by = ((str(metadata[key]), f"extra.metadata.{key}") if key is not None
                                else (str(value.get("trace_id")), "trace_id"))
    inputs = _json(value.get("inputs"))
    notes: list[str] = []
    fmt, response = "langchain", None
    request, incomplete = (request_messages(inputs) if "inputs" in value else
                           (None, "the export holds no inputs (export_fields left them out)"))
    if request is not None:
        fmt, request, response, note = harmonized(request, response_messages(_json(value.get("outputs"))))
        if note:
            notes.append(note)
    node = metadata.get("langgraph_node")
    summarizer = (f"its langgraph_node is {node}" if isinstance(node, str)
                  and "summariz" in node.lower() else None)
    start = nanoseconds(value.get("start_time"))
    extra = _json(value.get("extra"))
    parameters = extra.get("invocation_params") if isinstance(extra, dict) else None
    return Call(
        row=row, conversation=conversation, grouped_by=grouped_by, format=fmt, request=request,
        response=response, start=start, end=nanoseconds(value.get("end_time")),
        logged_at=iso(start), name=value.get("name") if isinstance(value.get("name"), str) else None,
        tokens_in=value.get("prompt_tokens") if type(value.get("prompt_tokens")) is int else None,
        tokens_out=(value.get("completion_tokens") if type(value.get("completion_tokens")) is int
                    else None),
        stateful=(stateful(inputs, "inputs") if isinstance(inputs, dict) else None)
        or stateful(parameters, "extra.invocation_params"),
        incomplete=incomplete, summarizer=summarizer,
        tiebreak=value["dotted_order"] if isinstance(value.get("dotted_order"), str) else "",
        marked=_marked(request) if request is not None and fmt == "langchain" else frozenset(),
        notes=tuple(notes))


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    tally = Tally()
    problems: list[LineProblem] = []
    calls: list[Call] = []
    for row, value in records(lines, tally, problems):
        if not _run(value):
            problem(tally, problems, row, f"line {row} is no LangSmith run (run_type and trace_id)")
        elif value["run_type"] == "llm":
            calls.append(_call(row, value))
    return finish(NAME, tally, problems, calls)


SOURCE = Source(
    name=NAME, format="auto", sniff=sniff, derive=derive, role=no_role, history=no_history,
    notes=("runs hold model calls, not compactions: pairs are diffed from consecutive llm runs "
           "(fidelity diffed)", "session_id in an export is the project: threads are read from "
           "extra.metadata"),
    read=read_lines_or_parquet, sniff_file=sniff_file)
