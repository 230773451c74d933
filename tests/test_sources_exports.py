"""The `langsmith` and `langfuse` sources on exports in their documented columns.

LangSmith rows are built with `langchain-core`'s own serializer (`dumpd`) as a chat model's
runs log them (`inputs = {"messages": [[...]]}`, `outputs = {"generations": [[{"message":
...}]]}`), the thread in `extra.metadata`, the summarizer's own run under
`SummarizationMiddleware.before_model`; Langfuse rows in the blob-storage export's columns. Each
is read as JSON Lines and as Parquet, with the same pairs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frayproof_audit.sources import Compaction, derive, detect, detect_file, read_source

lc_load = pytest.importorskip("langchain_core.load")
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage  # noqa: E402

SUMMARY_TEXT = "The user asked about orders 41 and 42; both shipped."


def run(number: int, messages: list[Any], answer: Any, node: str = "model", **extra: Any) -> dict[str, Any]:
    return {
        "id": f"run-{number}",
        "trace_id": f"trace-{number}",
        "run_type": "llm",
        "name": "ChatFake",
        "start_time": f"2026-01-01T10:00:{number:02d}.000000",
        "end_time": f"2026-01-01T10:00:{number:02d}.500000",
        "dotted_order": f"20260101T1000{number:02d}000000Zrun-{number}",
        "inputs": json.dumps({"messages": [[lc_load.dumpd(m) for m in messages]]}),
        "outputs": json.dumps(
            {"generations": [[{"text": answer.content, "message": lc_load.dumpd(answer)}]]}
        ),
        "extra": json.dumps({"metadata": {"thread_id": "t-42", "langgraph_node": node, **extra}}),
        "prompt_tokens": 10 * len(messages),
        "completion_tokens": 3,
    }


def langsmith_rows() -> list[dict[str, Any]]:
    system = SystemMessage("You are the shop agent.", id="s")
    q1, a1 = HumanMessage("where is order 41?", id="h1"), AIMessage("order 41 shipped", id="a1")
    q2, a2 = HumanMessage("and order 42?", id="h2"), AIMessage("order 42 shipped", id="a2")
    q3, a3 = HumanMessage("thanks, refund 41", id="h3"), AIMessage("refunded", id="a3")
    summary = HumanMessage(
        "Here is a summary of the conversation to date:\n\n" + SUMMARY_TEXT,
        id="sum",
        additional_kwargs={"lc_source": "summarization"},
    )
    chain = {
        "id": "chain-1",
        "trace_id": "trace-1",
        "run_type": "chain",
        "name": "agent",
        "start_time": "2026-01-01T10:00:00.000000",
        "inputs": "{}",
        "outputs": "{}",
        "extra": "{}",
    }
    return [
        chain,
        run(1, [system, q1], a1),
        run(2, [system, q1, a1, q2], a2),
        run(
            3,
            [HumanMessage("Summarize the conversation: ...")],
            AIMessage(SUMMARY_TEXT),
            node="SummarizationMiddleware.before_model",
        ),
        run(4, [system, summary, a2, q3], a3),
        run(5, [system, summary, a2, q3, a3, HumanMessage("bye", id="h4")], AIMessage("bye", id="a4")),
    ]


def write(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    jsonl = tmp_path / f"{name}.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    parquet = tmp_path / f"{name}.parquet"
    columns = list(dict.fromkeys(key for row in rows for key in row))  # every row's columns
    pq.write_table(pa.Table.from_pylist([{key: row.get(key) for key in columns} for row in rows]), parquet)
    return jsonl, parquet


def test_a_langsmith_export_yields_its_summarization_with_the_summarizer_run(tmp_path: Path) -> None:
    jsonl, parquet = write(tmp_path, "runs", langsmith_rows())
    assert detect_file(jsonl) == "langsmith" and detect_file(parquet) == "langsmith"
    found = [derive("langsmith", path.name, read_source("langsmith", path)) for path in (jsonl, parquet)]
    assert found[0].rows == found[1].rows
    [row] = found[0].rows
    assert isinstance(row, Compaction)
    assert (row.session_id, row.event, row.format, row.source_row) == ("t-42", "summarize", "langchain", 5)
    assert row.diff is not None and row.diff.summarizer_row == 4 and row.diff.summary == SUMMARY_TEXT
    assert row.diff.previous_row == 3
    rows = langsmith_rows()
    assert row.before == [
        *json.loads(rows[2]["inputs"])["messages"][0],
        json.loads(rows[2]["outputs"])["generations"][0][0]["message"],
    ]
    assert row.after == json.loads(rows[4]["inputs"])["messages"][0][:3]  # minus the new question
    [lineage] = found[0].lineages
    assert lineage.grouped_by == "extra.metadata.thread_id"
    assert [(t.role, t.classification) for t in lineage.transitions] == [
        ("main", None),
        ("main", "append"),
        ("summarizer", None),
        ("main", "summarize"),
        ("main", "append"),
    ]
    assert found[0].counts.calls == 5 and found[0].counts.lines == 6


def test_langsmith_runs_without_inputs_are_incomplete(tmp_path: Path) -> None:
    rows = langsmith_rows()
    for row in rows[1:]:
        del row["inputs"]
    found = derive("langsmith", "runs.jsonl", [json.dumps(row).encode() for row in rows])
    assert found.rows == ()
    assert all(t.role == "incomplete" for lineage in found.lineages for t in lineage.transitions)


def observation(
    number: int, messages: list[Any], answer: str | None, session: str = "chat-77", **fields: Any
) -> dict[str, Any]:
    return {
        "id": f"obs_{number}",
        "trace_id": f"tr_{number}",
        "type": "GENERATION",
        "parent_observation_id": "",
        "name": "ChatOpenAI",
        "start_time": f"2026-05-29 13:46:{number:02d}.963000",
        "end_time": f"2026-05-29 13:46:{number:02d}.999000",
        "provided_model_name": "gpt-4o",
        "session_id": session,
        "input": json.dumps(messages) if messages is not None else None,
        "output": None if answer is None else json.dumps({"role": "assistant", "content": answer}),
        "usage_details": {"input": 100 * number, "output": 5, "total": 100 * number + 5},
        **fields,
    }


def langfuse_rows() -> list[dict[str, Any]]:
    system = {"role": "system", "content": "You are the shop agent."}
    turns = [{"role": "user", "content": f"question {n}"} for n in range(5)]
    answers = [{"role": "assistant", "content": f"answer {n}"} for n in range(5)]
    span = {
        "id": "obs_0",
        "trace_id": "tr_1",
        "type": "SPAN",
        "name": "agent",
        "input": "{}",
        "output": "{}",
        "start_time": "2026-05-29 13:46:00.000000",
        "session_id": "chat-77",
    }
    window = [system, turns[2], answers[2], turns[3]]  # a sliding window dropped the first turns
    return [
        span,
        observation(1, [system, turns[0]], "answer 0"),
        observation(2, [system, turns[0], answers[0], turns[1]], "answer 1"),
        observation(3, [system, turns[0], answers[0], turns[1], answers[1], turns[2]], "answer 2"),
        observation(4, None, "answer 3"),  # left out of the download: too large
        observation(5, window, "answer 3"),
        observation(6, [system, turns[2], answers[2], turns[3], answers[3], turns[4]], "answer 4"),
        observation(7, [{"role": "user", "content": "Pick a title"}], "Orders", session="other"),
    ]


def test_a_langfuse_export_yields_its_truncation_and_flags_what_it_left_out(tmp_path: Path) -> None:
    rows = langfuse_rows()
    jsonl, parquet = write(tmp_path, "observations", rows)
    assert detect([json.dumps(row).encode() for row in rows]) == "langfuse"
    assert detect_file(parquet) == "langfuse"
    found = [derive("langfuse", path.name, read_source("langfuse", path)) for path in (jsonl, parquet)]
    assert found[0].rows == found[1].rows
    [row] = found[0].rows
    assert isinstance(row, Compaction)
    assert (row.session_id, row.event, row.format, row.source_row) == ("chat-77", "truncate", "openai", 6)
    assert row.diff is not None and row.diff.previous_row == 4
    assert row.before == [*json.loads(rows[3]["input"]), {"role": "assistant", "content": "answer 2"}]
    assert row.after == json.loads(rows[5]["input"])[:3]
    assert (row.tokens_before, row.tokens_after) == (305, 500)
    chat, other = found[0].lineages
    assert [(t.role, t.classification) for t in chat.transitions] == [
        ("main", None),
        ("main", "append"),
        ("main", "append"),
        ("incomplete", None),
        ("main", "truncate"),
        ("main", "append"),
    ]
    assert "Langfuse leaves very large inputs out" in chat.transitions[3].reason
    assert other.session_id == "other" and dict(other.counts)["append"] == 0
    assert found[0].counts.calls == 7 and found[0].counts.other == 7
