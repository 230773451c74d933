"""Real request logs for the request-log source tests: a fake Chat Completions server on
127.0.0.1, the real `openai` client instrumented by OpenTelemetry's own OpenAI instrumentation
(content capture on, on span attributes), and the spans written as OTLP JSON lines by the SDK's
own OTLP encoder (ids in hex and enums as integers, as the OTLP file exporter writes them)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = (
    "The user greeted the shop agent and asked for the weather in Paris (rainy, 12 C) "
    "and then for order 42, which shipped on Monday."
)
SYSTEM = "You are the shop agent. Never refund without an order id."


def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The fake model: a summary when asked for one, a weather tool call when asked about the
    weather, else an answer naming the question."""
    last = messages[-1]
    text = last.get("content") if isinstance(last.get("content"), str) else ""
    if text.startswith("Summarize"):
        return {"role": "assistant", "content": SUMMARY}
    if "weather" in text:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{len(messages)}",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        }
    if last.get("role") == "tool":
        return {"role": "assistant", "content": "It is rainy in Paris."}
    return {"role": "assistant", "content": f"Answer to: {text}"}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = reply(body["messages"])
        out = {
            "id": f"chatcmpl-{len(body['messages'])}",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 40 * len(body["messages"]),
                "completion_tokens": 7,
                "total_tokens": 40 * len(body["messages"]) + 7,
            },
        }
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def fake_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _hex_ids(value: Any) -> Any:
    """OTLP JSON writes trace and span ids as hex where protobuf's JSON mapping writes base64."""
    import base64

    if isinstance(value, dict):
        return {
            key: (
                base64.b64decode(item).hex()
                if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str)
                else _hex_ids(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def otlp_lines(spans: Any) -> list[str]:
    """One `TracesData` JSON line per span, by the SDK's own OTLP encoder."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return [
        json.dumps(_hex_ids(MessageToDict(encode_spans([span]), use_integers_for_enums=True)))
        for span in spans
    ]


@contextmanager
def instrumented() -> Iterator[tuple[Any, Any, Any]]:
    """(OpenAI client factory, tracer, finished spans) with content capture on span attributes."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        import openai

        yield (
            (lambda url: openai.OpenAI(base_url=url, api_key="test")),
            provider.get_tracer("agent"),
            exporter.get_finished_spans,
        )
    finally:
        instrumentor.uninstrument()
        for key in ("OTEL_SEMCONV_STABILITY_OPT_IN", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"):
            os.environ.pop(key, None)


def assistant(message: Any) -> dict[str, Any]:
    """An SDK response message as the next request's Chat message."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in message.tool_calls
        ]
    return out
