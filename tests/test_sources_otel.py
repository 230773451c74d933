"""The `otel` source on real spans: the real `openai` client, OpenTelemetry's own OpenAI
instrumentation (content on span attributes) and a fake Chat Completions server on 127.0.0.1.

A conversation summarized mid-way (the agent asks the model for a summary, then goes on with
the system prompt, the summary and the last answer) must yield exactly one `summarize` pair,
every other transition `append`, the summarizer's call attached; its verdicts equal those of the
same messages logged as Chat Completions; shuffled lines (OTLP files are unordered) give the
same pairs; a cut-short attribute, the deprecated events and OpenInference's flattened
attributes are read as documented.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import check
from frayproof_audit.sources import SOURCES, Compaction, derive, detect, open_lines
from tests.helpers import make_contract
from tests.trace_support import SUMMARY, SYSTEM, assistant, fake_server, instrumented, otlp_lines

pytest.importorskip("opentelemetry.instrumentation.openai_v2")
pytest.importorskip("opentelemetry.sdk")

CONTRACT = make_contract(
    {
        "version": 1,
        "checks": {"tool_pairs": True},
        "pins": [
            {"name": "system", "role": "system", "match": "exact"},
            {"name": "refunds", "contains": "Never refund without an order id"},
            {"name": "order", "contains": "order 42"},
        ],
    }
)
PREFIX = "Here is a summary of the conversation to date:\n\n"


def conversation(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """Run the agent; the OTLP file and the Chat messages of the compaction, as sent."""
    with fake_server() as url, instrumented() as (client_of, tracer, finished):
        client = client_of(url)
        history: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "hello"},
        ]

        def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
            response = client.chat.completions.create(model="gpt-test", messages=messages)
            return assistant(response.choices[0].message)

        with tracer.start_as_current_span(
            "invoke_agent shop", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            history.append(ask(history))
            history.append({"role": "user", "content": "what is the weather in Paris?"})
            history.append(ask(history))
            history.append(
                {"role": "tool", "tool_call_id": history[-1]["tool_calls"][0]["id"], "content": "rainy, 12 C"}
            )
            history.append(ask(history))
            history.append({"role": "user", "content": "where is order 42?"})
            answer = ask(history)
            before = [*history, answer]
            summary = ask([{"role": "user", "content": "Summarize: " + json.dumps(before)}])
            assert summary["content"] == SUMMARY
            compacted = [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": PREFIX + SUMMARY},
                answer,
            ]
            history = [*compacted, {"role": "user", "content": "thanks"}]
            history.append(ask(history))
            history.append({"role": "user", "content": "bye"})
            ask(history)
        lines = otlp_lines(finished())
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, {"before": before, "after": compacted}


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return conversation(tmp_path_factory.mktemp("otel"))


def test_a_summarized_conversation_is_one_summarize_pair(logged: tuple[Path, dict[str, Any]]) -> None:
    path, sent = logged
    lines = list(open_lines(path))
    assert detect(lines) == "otel"
    found = derive("otel", path.name, lines)
    [row] = found.rows
    assert isinstance(row, Compaction)
    assert (row.event, row.fidelity, row.format, row.problem) == ("summarize", "diffed", "otel-genai", None)
    assert row.diff is not None and row.diff.classification == "summarize"
    assert row.diff.summary == SUMMARY  # the summarizer's own call, attached
    assert row.diff.summarizer_row == 5 and row.diff.previous_row == 4 and row.source_row == 6
    assert row.tokens_before == 8 * 40 + 7 and row.tokens_after == 4 * 40  # 8 messages, then 4
    [lineage] = found.lineages
    assert lineage.grouped_by == "trace and invoke_agent span"
    assert dict(lineage.counts) == {
        "append": 4,
        "summarize": 1,
        "truncate": 0,
        "clear": 0,
        "rewind": 0,
        "stateful": 0,
        "unrelated": 0,
    }
    assert [(t.row, t.role, t.classification) for t in lineage.transitions] == [
        (1, "main", None),
        (2, "main", "append"),
        (3, "main", "append"),
        (4, "main", "append"),
        (5, "summarizer", None),
        (6, "main", "summarize"),
        (7, "main", "append"),
    ]
    assert (found.counts.lines, found.counts.calls, found.counts.events) == (8, 7, 1)
    # before and after are what the model was sent, in the spans' own format
    plain_before = check(sent["before"], sent["before"], CONTRACT)
    assert plain_before.passed
    logged_report = check(row.before, row.after, CONTRACT, input_format="otel-genai")
    plain = check(sent["before"], sent["after"], CONTRACT)
    assert [(v.code, v.pin, v.message_index) for v in logged_report.violations] == [
        (v.code, v.pin, v.message_index) for v in plain.violations
    ]
    assert [v.pin for v in plain.violations] == []  # the summary kept what the contract pins


def test_shuffled_lines_give_the_same_pairs(logged: tuple[Path, dict[str, Any]]) -> None:
    path, _ = logged
    lines = list(open_lines(path))
    [expected] = derive("otel", path.name, lines).rows
    assert isinstance(expected, Compaction)
    for seed in range(3):
        shuffled = list(lines)
        random.Random(seed).shuffle(shuffled)
        [row] = derive("otel", path.name, shuffled).rows
        assert isinstance(row, Compaction)
        assert (row.before, row.after, row.event, row.session_id, row.diff and row.diff.summary) == (
            expected.before,
            expected.after,
            expected.event,
            expected.session_id,
            SUMMARY,
        )
        assert shuffled[row.source_row - 1] == lines[expected.source_row - 1]


def test_an_append_only_conversation_yields_no_pair(tmp_path: Path) -> None:
    with fake_server() as url, instrumented() as (client_of, tracer, finished):
        client = client_of(url)
        history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        with tracer.start_as_current_span(
            "invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            for question in ("hello", "what is the weather in Paris?", "and tomorrow?"):
                history.append({"role": "user", "content": question})
                response = client.chat.completions.create(model="gpt-test", messages=history)
                history.append(assistant(response.choices[0].message))
                if history[-1].get("tool_calls"):
                    history.append(
                        {
                            "role": "tool",
                            "content": "rainy",
                            "tool_call_id": history[-1]["tool_calls"][0]["id"],
                        }
                    )
                    response = client.chat.completions.create(model="gpt-test", messages=history)
                    history.append(assistant(response.choices[0].message))
        lines = otlp_lines(finished())
    found = derive("otel", "t", [line.encode() for line in lines])
    assert found.rows == ()
    [lineage] = found.lineages
    assert dict(lineage.counts)["append"] == 3


def span_line(attributes: dict[str, Any], span: str, start: int, events: list[Any] = ()) -> str:  # type: ignore[assignment]
    def value(item: Any) -> dict[str, Any]:
        if isinstance(item, int):
            return {"intValue": str(item)}
        return {"stringValue": item}

    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {},
                    "scopeSpans": [
                        {
                            "scope": {"name": "x"},
                            "spans": [
                                {
                                    "traceId": "5b8efff798038103d269b633813fc60c",
                                    "spanId": span,
                                    "name": "chat m",
                                    "kind": 3,
                                    "startTimeUnixNano": str(start),
                                    "endTimeUnixNano": str(start + 1),
                                    "attributes": [
                                        {"key": k, "value": value(v)} for k, v in attributes.items()
                                    ],
                                    "events": events,
                                }
                            ],
                        }
                    ],
                }
            ]
        }
    )


def otel_messages(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]} for role, text in pairs])


def test_a_cut_short_attribute_is_incomplete_not_a_compaction() -> None:
    first = otel_messages(("user", "a" * 50), ("assistant", "b"), ("user", "c"))
    lines = [
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "conv",
                "gen_ai.input.messages": otel_messages(("user", "a" * 50)),
                "gen_ai.output.messages": otel_messages(("assistant", "b")),
            },
            "00000000000000a1",
            10,
        ),
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "conv",
                "gen_ai.input.messages": first[:40],
            },
            "00000000000000a2",
            20,
        ),
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "conv",
                "gen_ai.input.messages": first,
            },
            "00000000000000a3",
            30,
        ),
    ]
    found = derive("otel", "t", lines)
    assert found.rows == ()
    [lineage] = found.lineages
    assert [(t.role, t.classification) for t in lineage.transitions] == [
        ("main", None),
        ("incomplete", None),
        ("main", "append"),
    ]
    assert "not valid JSON" in lineage.transitions[1].reason
    assert lineage.session_id == "conv" and lineage.grouped_by == "gen_ai.conversation.id"


def test_system_instructions_logged_apart_join_both_sides_and_stateful_requests_are_not_diffed() -> None:
    system = json.dumps([{"type": "text", "content": "Be brief."}])
    lines = [
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "c",
                "gen_ai.system_instructions": system,
                "gen_ai.input.messages": otel_messages(("user", "one"), ("assistant", "x"), ("user", "two")),
                "gen_ai.output.messages": otel_messages(("assistant", "y")),
            },
            "00000000000000b1",
            10,
        ),
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "c",
                "gen_ai.system_instructions": system,
                "gen_ai.input.messages": otel_messages(("user", "two"), ("assistant", "y"), ("user", "3")),
            },
            "00000000000000b2",
            20,
        ),
        span_line(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "c",
                "gen_ai.openai.request.previous_response_id": "resp_1",
                "gen_ai.input.messages": otel_messages(("user", "4")),
            },
            "00000000000000b3",
            30,
        ),
    ]
    found = derive("otel", "t", lines)
    [row] = found.rows
    assert isinstance(row, Compaction) and row.event == "truncate"
    assert (
        row.before[0]
        == row.after[0]
        == {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}
    )
    assert any("gen_ai.system_instructions is logged apart" in note for note in row.notes)
    [lineage] = found.lineages
    assert [t.classification for t in lineage.transitions] == [None, "truncate", "stateful"]
    assert dict(lineage.counts)["stateful"] == 1


def test_deprecated_events_and_openinference_attributes_are_read() -> None:
    events = [
        {"name": "gen_ai.user.message", "attributes": [{"key": "content", "value": {"stringValue": "hi"}}]},
        {
            "name": "gen_ai.choice",
            "attributes": [
                {
                    "key": "message",
                    "value": {
                        "kvlistValue": {
                            "values": [
                                {"key": "role", "value": {"stringValue": "assistant"}},
                                {"key": "content", "value": {"stringValue": "hello"}},
                            ]
                        }
                    },
                }
            ],
        },
    ]
    deprecated = span_line(
        {"gen_ai.operation.name": "chat", "session.id": "s"}, "00000000000000c1", 10, events
    )
    flattened = span_line(
        {
            "openinference.span.kind": "LLM",
            "session.id": "s",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.input_messages.1.message.role": "assistant",
            "llm.input_messages.1.message.content": "hello",
            "llm.input_messages.2.message.role": "user",
            "llm.input_messages.2.message.content": "more",
        },
        "00000000000000c2",
        20,
    )
    found = derive("otel", "t", [deprecated, flattened])
    assert found.rows == ()
    [lineage] = found.lineages
    assert [t.classification for t in lineage.transitions] == [None, "append"]
    assert lineage.grouped_by == "session.id"


def test_a_line_that_is_no_otlp_object_is_a_problem() -> None:
    found = derive("otel", "t", [b'{"resourceSpans": []}\n', b'{"hello": 1}\n', b"nope\n"])
    assert [row.source_row for row in found.rows] == [2, 3]
    assert found.counts.problems == 2 and found.counts.other == 1
    assert "otel" in SOURCES
