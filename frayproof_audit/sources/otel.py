"""OpenTelemetry GenAI traces: OTLP JSON files (`--source otel`).

The file is what the OTLP file exporter writes (opentelemetry.io/docs/specs/otel/protocol/
file-exporter/): JSON Lines, one `TracesData` (`{"resourceSpans": [...]}`) or `LogsData`
(`{"resourceLogs": [...]}`) object per line, in the OTLP JSON encoding (hex ids, integer
enums; the plain protobuf JSON mapping, base64 ids and enum names, is read too), with "no
guarantee that the data in the file is ordered". Both signals may share a file: content that
an instrumentation emits as log events is joined to its span by trace and span id.

An inference span (`gen_ai.operation.name` `chat`, `text_completion`, `generate_content`, or an
OpenInference `LLM` span, or any span carrying content) is one call. Its content is read from,
in this order (the semantic conventions, open-telemetry/semantic-conventions-genai,
`gen-ai-spans.md`, `gen-ai-events.md`, and their deprecated forms):

* `gen_ai.input.messages` / `gen_ai.output.messages` on the span (a JSON string or an array),
  or on the `gen_ai.client.inference.operation.details` event (a span event or a log record):
  format `otel-genai`; `gen_ai.system_instructions`, logged apart, is put first as a `system`
  message (a note says so; a call without it while others have it is reported);
* the deprecated per-message events `gen_ai.system.message`, `gen_ai.user.message`,
  `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice` (span events or log
  records, content in the body or the attributes): Chat messages, format `openai`;
* OpenInference's flattened `llm.input_messages.<i>.message.*` and
  `llm.output_messages.<i>.message.*`, and OpenLLMetry's `gen_ai.prompt.<i>.*` /
  `gen_ai.completion.<i>.*`: Chat messages, format `openai`.

Calls are grouped by `gen_ai.conversation.id`, else `session.id` (OpenInference, Gemini CLI),
else the trace and its `invoke_agent` span, else the trace; then diffed (`lineage`). A
`gen_ai.input.messages` string that is not valid JSON was cut short (an attribute length
limit): that call is incomplete, not a compaction. A request whose parameters set
`previous_response_id` (any attribute ending so, or in OpenInference's
`llm.invocation_parameters`) is stateful. Tokens: `gen_ai.usage.input_tokens` /
`output_tokens` (`llm.token_count.prompt` / `completion`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
    iso,
    json_value,
    no_history,
    problem,
    records,
    stateful,
)

NAME = "otel"
FORMAT = "otel-genai"
INFERENCE = frozenset({"chat", "text_completion", "generate_content"})
SIGNALS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")
DETAILS = "gen_ai.client.inference.operation.details"
DEPRECATED = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
              "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
CHOICE = "gen_ai.choice"
SYSTEM_NOTE = ("gen_ai.system_instructions is logged apart from the messages: it is put first "
               "in before and after as a system message")
MISSING_SYSTEM = ("some calls of this conversation log gen_ai.system_instructions and others do "
                  "not: pins on the system prompt cannot be judged where it is missing")
NO_CONTENT = ("no content was captured (turn it on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
              "CONTENT, see docs/sources.md)")


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        for key in SIGNALS:
            if isinstance(value.get(key), list):
                return f"line {row} is OTLP JSON ({key})"
    return None



def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as a plain value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            found = value[key]
            return int(found) if isinstance(found, str) and found.lstrip("-").isdigit() else found
    for key in ("doubleValue", "double_value", "boolValue", "bool_value", "bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [any_value(item) for item in (value[key] or {}).get("values") or ()]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return attributes((value[key] or {}).get("values"))
    return None


def attributes(values: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in values if isinstance(values, list) else ():
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            found[item["key"]] = any_value(item.get("value"))
    return found


def hex_id(value: Any) -> str | None:
    """A trace or span id as hex (OTLP JSON writes hex; protobuf's JSON mapping base64)."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value


@dataclass(slots=True)
class _Span:
    row: int
    trace: str | None
    span: str | None
    parent: str | None
    name: str | None
    start: int | None
    end: int | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)
    """(name, attributes, body) of its span events and of the log records joined to it."""
    dropped: int = 0
    resource: dict[str, Any] = field(default_factory=dict)


def _int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _read_line(row: int, value: dict[str, Any], spans: list[_Span],
               logs: list[tuple[str | None, str | None, str, dict[str, Any], Any]]) -> None:
    for resource in value.get("resourceSpans") or value.get("resource_spans") or ():
        if not isinstance(resource, dict):
            continue
        resource_attributes = attributes((resource.get("resource") or {}).get("attributes"))
        scopes = (resource.get("scopeSpans") or resource.get("scope_spans")
                  or resource.get("instrumentationLibrarySpans") or ())
        for scope in scopes:
            for span in (scope.get("spans") or ()) if isinstance(scope, dict) else ():
                if isinstance(span, dict):
                    spans.append(_span(row, span, resource_attributes))
    for resource in value.get("resourceLogs") or value.get("resource_logs") or ():
        if not isinstance(resource, dict):
            continue
        for scope in resource.get("scopeLogs") or resource.get("scope_logs") or ():
            for record in (scope.get("logRecords") or scope.get("log_records") or ()) \
                    if isinstance(scope, dict) else ():
                if not isinstance(record, dict):
                    continue
                found = attributes(record.get("attributes"))
                name = record.get("eventName") or record.get("event_name") or found.get("event.name")
                if isinstance(name, str):
                    logs.append((hex_id(record.get("traceId") or record.get("trace_id")),
                                 hex_id(record.get("spanId") or record.get("span_id")), name, found,
                                 any_value(record.get("body"))))


def _span(row: int, span: dict[str, Any], resource: dict[str, Any]) -> _Span:
    found = _Span(
        row, hex_id(span.get("traceId") or span.get("trace_id")),
        hex_id(span.get("spanId") or span.get("span_id")),
        hex_id(span.get("parentSpanId") or span.get("parent_span_id")),
        span.get("name") if isinstance(span.get("name"), str) else None,
        _int(span.get("startTimeUnixNano") or span.get("start_time_unix_nano")),
        _int(span.get("endTimeUnixNano") or span.get("end_time_unix_nano")),
        attributes(span.get("attributes")),
        dropped=_int(span.get("droppedAttributesCount") or span.get("dropped_attributes_count")) or 0,
        resource=resource)
    for event in span.get("events") or ():
        if isinstance(event, dict) and isinstance(event.get("name"), str):
            found.events.append((event["name"], attributes(event.get("attributes")), None))
    return found


def _inference(span: _Span) -> bool:
    attrs = span.attributes
    if attrs.get("gen_ai.operation.name") in INFERENCE:
        return True
    if attrs.get("openinference.span.kind") == "LLM":
        return True
    return any(key in attrs for key in ("gen_ai.input.messages", "llm.input_messages.0.message.role",
                                        "gen_ai.prompt.0.role")) or \
        any(name == DETAILS or name in DEPRECATED for name, _, _ in span.events)


def _messages_value(value: Any, what: str) -> tuple[list[Any] | None, str | None]:
    """A `gen_ai.*.messages` value: (messages, why it cannot be read)."""
    if value is None:
        return None, None
    if isinstance(value, list):
        return value, None
    if isinstance(value, str):
        parsed = json_value(value)
        if isinstance(parsed, list):
            return parsed, None
        return None, (f"its {what} is not valid JSON ({len(value)} chars): cut short by an "
                      "attribute length limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)?")
    return None, f"its {what} is neither a JSON string nor an array"


def _content(span: _Span) -> tuple[str, list[Any] | None, list[Any] | None, str | None, list[str]]:
    """(format, request, response, why incomplete, notes) of an inference span."""
    sources = [span.attributes, *(attrs for name, attrs, _ in span.events if name == DETAILS),
               *(body for name, _, body in span.events if name == DETAILS and isinstance(body, dict))]
    notes: list[str] = []
    for attrs in sources:
        if "gen_ai.input.messages" not in attrs:
            continue
        request, problem = _messages_value(attrs.get("gen_ai.input.messages"), "gen_ai.input.messages")
        response, out_problem = _messages_value(attrs.get("gen_ai.output.messages"),
                                                "gen_ai.output.messages")
        if problem is None and request is not None:
            instructions, _ = _messages_value(attrs.get("gen_ai.system_instructions"),
                                              "gen_ai.system_instructions")
            if instructions:
                request = [{"role": "system", "parts": instructions}, *request]
                notes.append(SYSTEM_NOTE)
        if out_problem is not None:
            notes.append(f"the output of this call {out_problem[4:]}")
            response = None
        return FORMAT, request, response, problem, notes
    deprecated = _deprecated(span)
    if deprecated is not None:
        return "openai", deprecated[0], deprecated[1], None, notes
    flattened = _flattened(span.attributes)
    if flattened is not None:
        return "openai", flattened[0], flattened[1], None, notes
    return FORMAT, None, None, NO_CONTENT, notes


def _chat_message(role: str, fields: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": fields.get("role") or role, "content": fields.get("content")}
    calls = fields.get("tool_calls")
    if isinstance(calls, list) and calls:
        message["tool_calls"] = [{"id": call.get("id"), "type": call.get("type", "function"),
                                  "function": {"name": (call.get("function") or {}).get("name"),
                                               "arguments": _text((call.get("function") or {})
                                                                  .get("arguments"))}}
                                 for call in calls if isinstance(call, dict)]
    if role == "tool" and isinstance(fields.get("id"), str):
        message["tool_call_id"] = fields["id"]
    if isinstance(fields.get("tool_call_id"), str):
        message["tool_call_id"] = fields["tool_call_id"]
    return message


def _text(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _deprecated(span: _Span) -> tuple[list[Any], list[Any] | None] | None:
    request: list[Any] = []
    response: list[Any] = []
    for name, attrs, body in span.events:
        fields = body if isinstance(body, dict) else attrs
        if name in DEPRECATED:
            request.append(_chat_message(DEPRECATED[name], fields))
        elif name == CHOICE:
            message = fields.get("message")
            response.append(_chat_message("assistant", message if isinstance(message, dict) else fields))
    if not request:
        return None
    return request, response or None


def _flattened(attrs: dict[str, Any]) -> tuple[list[Any], list[Any] | None] | None:
    """OpenInference `llm.input_messages.<i>.message.*` or OpenLLMetry `gen_ai.prompt.<i>.*`."""
    for inputs, outputs, step in (("llm.input_messages", "llm.output_messages", "message."),
                                  ("gen_ai.prompt", "gen_ai.completion", "")):
        request = _indexed(attrs, inputs, step)
        if request:
            return request, _indexed(attrs, outputs, step) or None
    return None


def _indexed(attrs: dict[str, Any], prefix: str, step: str) -> list[Any]:
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(f"{prefix}."):
            continue
        index, _, rest = key[len(prefix) + 1:].partition(".")
        if not index.isdigit() or not rest.startswith(step):
            continue
        fields = messages.setdefault(int(index), {})
        fields[rest[len(step):]] = value
    out: list[Any] = []
    for position in sorted(messages):
        fields = messages[position]
        message: dict[str, Any] = {"role": fields.get("role"), "content": fields.get("content")}
        texts = [fields[key] for key in sorted(fields, key=_natural)
                 if key.startswith("contents.") and key.endswith("message_content.text")]
        if message["content"] is None and texts:
            message["content"] = "\n".join(str(text) for text in texts)
        calls = _calls(fields)
        if calls:
            message["tool_calls"] = calls
        for key in ("tool_call_id", "name"):
            if isinstance(fields.get(key), str):
                message[key] = fields[key]
        out.append(message)
    return out


def _natural(key: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in key.split(".")]


def _calls(fields: dict[str, Any]) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if not key.startswith("tool_calls."):
            continue
        index, _, rest = key[len("tool_calls."):].partition(".")
        if index.isdigit():
            calls.setdefault(int(index), {})[rest.removeprefix("tool_call.")] = value
    return [{"id": call.get("id"), "type": "function",
             "function": {"name": call.get("function.name") or call.get("name"),
                          "arguments": _text(call.get("function.arguments") or call.get("arguments"))}}
            for _, call in sorted(calls.items())]


def _key(span: _Span, by_id: dict[tuple[str | None, str | None], _Span]) -> tuple[str, str]:
    attrs = span.attributes
    for key in ("gen_ai.conversation.id", "session.id", "gen_ai.session.id"):
        value = attrs.get(key) or span.resource.get(key)
        if isinstance(value, str | int) and value != "":
            return str(value), key
    parent = by_id.get((span.trace, span.parent))
    seen = 0
    while parent is not None and seen < 64:
        if parent.attributes.get("gen_ai.operation.name") == "invoke_agent":
            return f"{span.trace}/{parent.span}", "trace and invoke_agent span"
        conversation = parent.attributes.get("gen_ai.conversation.id") or \
            parent.attributes.get("session.id")
        if isinstance(conversation, str) and conversation:
            return conversation, "gen_ai.conversation.id of a parent span"
        parent = by_id.get((parent.trace, parent.parent))
        seen += 1
    return str(span.trace), "trace"


def _stateful(attrs: dict[str, Any]) -> str | None:
    for key, value in attrs.items():
        if key.endswith("previous_response_id") and value not in (None, ""):
            return f"{key} is set: the request carries only a delta"
    return stateful(attrs.get("llm.invocation_parameters"), "llm.invocation_parameters")


def _call(span: _Span, by_id: dict[tuple[str | None, str | None], _Span]) -> Call:
    fmt, request, response, incomplete, notes = _content(span)
    if span.dropped and incomplete is None and request is None:
        incomplete = f"the span dropped {span.dropped} attribute(s) (an attribute count limit)"
    attrs = span.attributes
    conversation, grouped_by = _key(span, by_id)
    tokens_in = _int(attrs.get("gen_ai.usage.input_tokens", attrs.get("llm.token_count.prompt")))
    tokens_out = _int(attrs.get("gen_ai.usage.output_tokens", attrs.get("llm.token_count.completion")))
    return Call(row=span.row, conversation=conversation, grouped_by=grouped_by, format=fmt,
                request=request, response=response, start=span.start, end=span.end,
                logged_at=iso(span.start), name=span.name, tokens_in=tokens_in,
                tokens_out=tokens_out, stateful=_stateful(attrs), incomplete=incomplete,
                notes=tuple(notes))


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    """All lines first (the file is unordered: a log record may come before its span), then
    the inference spans as calls, paired."""
    tally = Tally()
    problems: list[LineProblem] = []
    spans: list[_Span] = []
    logs: list[tuple[str | None, str | None, str, dict[str, Any], Any]] = []
    for row, value in records(lines, tally, problems):
        if not any(key in value for key in SIGNALS):
            problem(tally, problems, row, f"line {row} is no OTLP JSON object (no resourceSpans "
                                          "or resourceLogs)")
            continue
        _read_line(row, value, spans, logs)
    by_id = {(span.trace, span.span): span for span in spans}
    for trace, span_id, name, attrs, body in logs:
        owner = by_id.get((trace, span_id))
        if owner is not None:
            owner.events.append((name, attrs, body))
    calls = [_call(span, by_id) for span in spans if _inference(span)]
    systems = [SYSTEM_NOTE in call.notes for call in calls if call.request is not None]
    notes = [MISSING_SYSTEM] if any(systems) and not all(systems) else []
    return finish(NAME, tally, problems, calls, notes)


SOURCE = Source(
    name=NAME, format=FORMAT, sniff=sniff, derive=derive, role=no_role, history=no_history,
    notes=("traces hold model calls, not compactions: pairs are diffed from consecutive calls "
           "(fidelity diffed)", "content is logged only when content capture is on",
           "server-side compaction and stateful requests cannot be seen in client traces"))
