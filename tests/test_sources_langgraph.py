"""The `langgraph` source on real checkpoint databases written by real graphs.

A LangChain v1 agent (`create_agent`) with LangChain's `SummarizationMiddleware` and a
LangGraph graph with a `RemoveMessage` trimming node, both on fake chat models from
`langchain-core`, write a `langgraph-checkpoint-sqlite` database; the source must find exactly
the compactions the graphs made, before and after equal to the messages the graph held (its
own `get_state_history`), the compactor the node that made them. The shapes langmem and
deepagents write are read from checkpoint lines.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import check
from frayproof_audit.errors import InputError
from frayproof_audit.sources import Compaction, derive, detect_file, read_source
from tests.helpers import make_contract

pytest.importorskip("langgraph.checkpoint.sqlite")
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph


def states(graph: Any, thread: str) -> dict[str, Any]:
    """The graph's own state history of a thread, by checkpoint time stamp."""
    return {
        snapshot.created_at: snapshot
        for snapshot in graph.get_state_history({"configurable": {"thread_id": thread}})
    }


def held(graph: Any, thread: str, row: Compaction) -> tuple[list[Any], list[Any]]:
    """The messages the graph held at the compaction's checkpoint and at its parent."""
    history = states(graph, thread)
    child = history[row.logged_at]
    parent = next(
        s
        for s in history.values()
        if s.config["configurable"]["checkpoint_id"] == child.parent_config["configurable"]["checkpoint_id"]
    )
    return ([dumpd(m) for m in parent.values["messages"]], [dumpd(m) for m in child.values["messages"]])


def test_summarization_middleware_steps_are_the_compactions(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as connection:
        model = FakeMessagesListChatModel(responses=[AIMessage(f"answer {i}") for i in range(30)])
        summarizer = FakeMessagesListChatModel(responses=[AIMessage("They asked q0 to q2.")] * 5)
        agent = create_agent(
            model,
            tools=[],
            system_prompt="Be brief.",
            checkpointer=SqliteSaver(connection),
            middleware=[
                SummarizationMiddleware(model=summarizer, trigger=("messages", 6), keep=("messages", 2))
            ],
        )
        for thread in ("alice", "bob"):
            for i in range(5 if thread == "alice" else 2):
                agent.invoke({"messages": [HumanMessage(f"q{i}")]}, {"configurable": {"thread_id": thread}})
        summaries = [
            m
            for m in agent.get_state({"configurable": {"thread_id": "alice"}}).values["messages"]
            if str(m.content).startswith("Here is a summary of the conversation to date:")
        ]
        assert len(summaries) == 1  # the graph compacted alice once, bob never
        assert detect_file(path) == "langgraph"
        found = derive("langgraph", path.name, read_source("langgraph", path))
        [row] = found.rows
        assert isinstance(row, Compaction)
        assert (row.session_id, row.pair_id, row.event, row.fidelity, row.format) == (
            "alice",
            "alice:1",
            "summarize",
            "explicit",
            "langchain",
        )
        assert row.compactor == "langgraph/SummarizationMiddleware.before_model"
        assert (row.before, row.after) == held(agent, "alice", row)
        assert row.after[0]["kwargs"]["id"] == summaries[0].id
        assert found.counts.events == 1 and found.counts.problems == 0
        assert found.counts.lines == found.counts.events + found.counts.other
        contract = make_contract({"format": "langchain", "pins": [{"name": "q3", "contains": "q3"}]})
        assert check(row.before, row.after, contract).passed


def trimming_graph(keep: int = 3) -> StateGraph[Any]:
    """chat after trim: `trim` removes all but the last `keep` messages past four (a fake chat
    model answers; the SQLite and the Postgres tests checkpoint the same graph)."""
    model = FakeMessagesListChatModel(responses=[AIMessage(f"answer {i}") for i in range(60)])

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def trim(state: MessagesState) -> dict[str, Any]:
        messages = state["messages"]
        return {"messages": [RemoveMessage(id=m.id) for m in messages[:-keep]]} if len(messages) > 4 else {}

    builder = StateGraph(MessagesState)
    builder.add_node("trim", trim)
    builder.add_node("chat", chat)
    builder.add_edge(START, "trim")
    builder.add_edge("trim", "chat")
    builder.add_edge("chat", END)
    return builder


def test_a_remove_message_trimming_node_is_a_truncation(tmp_path: Path) -> None:
    path = tmp_path / "trim.sqlite"
    builder = trimming_graph()
    with sqlite3.connect(path, check_same_thread=False) as connection:
        graph = builder.compile(checkpointer=SqliteSaver(connection))
        for i in range(4):
            graph.invoke({"messages": [HumanMessage(f"q{i}")]}, {"configurable": {"thread_id": "t"}})
        found = derive("langgraph", path.name, read_source("langgraph", path))
        rows = [row for row in found.rows if isinstance(row, Compaction)]
        assert [(row.event, row.compactor) for row in rows] == [("truncate", "langgraph/trim")] * 2
        for row in rows:
            assert (row.before, row.after) == held(graph, "t", row)
            assert len(row.after) == 3


def line(thread: str, checkpoint: str, parent: str | None, values: dict[str, Any]) -> bytes:
    return (
        json.dumps(
            {
                "thread_id": thread,
                "checkpoint_ns": "",
                "checkpoint_id": checkpoint,
                "parent_checkpoint_id": parent,
                "ts": f"2026-01-01T00:00:0{checkpoint}Z",
                "metadata": {},
                "versions_seen": {"summarize": {"messages": checkpoint}},
                "channel_values": values,
            }
        ).encode()
        + b"\n"
    )


MESSAGES = [
    dumpd(HumanMessage("q0", id="h0")),
    dumpd(AIMessage("a0", id="a0")),
    dumpd(HumanMessage("q1", id="h1")),
    dumpd(AIMessage("a1", id="a1")),
]
SUMMARY = dumpd(HumanMessage("Summary of the conversation so far: q0", id="s1"))


def test_langmem_summarized_messages_and_deepagents_events_and_cleared_results() -> None:
    lines = [
        line("m", "1", None, {"messages": MESSAGES}),
        line("m", "2", "1", {"messages": MESSAGES, "summarized_messages": [SUMMARY, *MESSAGES[2:]]}),
        line("d", "1", None, {"messages": MESSAGES}),
        line(
            "d",
            "2",
            "1",
            {
                "messages": MESSAGES,
                "_summarization_event": {
                    "cutoff_index": 2,
                    "summary_message": SUMMARY,
                    "file_path": "/conversation_history/d.md",
                },
            },
        ),
        line(
            "c", "1", None, {"messages": [*MESSAGES, dumpd(ToolMessage("x" * 40, tool_call_id="c", id="t"))]}
        ),
        line(
            "c",
            "2",
            "1",
            {"messages": [*MESSAGES, dumpd(ToolMessage("[cleared]", tool_call_id="c", id="t"))]},
        ),
        b'{"not": "a checkpoint"}\n',
    ]
    found = derive("langgraph", "dump.jsonl", lines)
    rows = [row for row in found.rows if isinstance(row, Compaction)]
    assert [(row.session_id, row.event, row.source_row) for row in rows] == [
        ("m", "summarize", 2),
        ("d", "summarize", 4),
        ("c", "clear", 6),
    ]
    assert rows[0].before == MESSAGES and rows[0].after == [SUMMARY, *MESSAGES[2:]]
    assert rows[1].before == MESSAGES and rows[1].after == [SUMMARY, *MESSAGES[2:]]
    assert found.counts.problems == 1 and found.counts.events == 3


def test_a_database_that_is_no_checkpointer_is_not_langgraph(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("create table t (x)")
    assert detect_file(path) is None
    with pytest.raises(InputError, match="no such checkpoint database"):
        list(read_source("langgraph", tmp_path / "missing.sqlite"))
