"""LangChain / LangGraph capture with the real packages: `create_agent` (LangChain v1) with
`SummarizationMiddleware`, a `trim_messages` hook and trimming in `wrap_model_call`, driven by
langchain-core's fake chat models; a plain LangGraph node returning `RemoveMessage`s. The
recorded pairs are exactly the compactions made, and they audit to the verdicts of the same
pairs logged by hand."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langgraph")

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware, before_model, wrap_model_call
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
    trim_messages,
)
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from frayproof_audit import ContractViolation, guard
from frayproof_audit.capture import PairWriter
from frayproof_audit.capture.langchain import (
    node_messages,
    recording,
    recording_node,
    updated_messages,
)
from frayproof_audit.contract import parse_contract
from tests.capture_support import CONTRACT, hand_log, lines_of, run_audit, write_contract
from tests.helpers import REPO

SYSTEM = "Never write to production."


class ToolCallingFake(GenericFakeChatModel):
    """langchain-core's fake model; `create_agent` binds tools, which the fake ignores."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def agent_script(turns: int) -> Iterator[AIMessage]:
    """Per user turn: a tool call, then an answer."""
    for n in range(turns):
        calls = [{"name": "read", "args": {"path": f"f{n}.txt"}, "id": f"call_{n}"}]
        yield AIMessage(content="", tool_calls=calls)
        yield AIMessage(content=f"answer {n}")


class Summaries:
    """The summary model: counts the summaries it wrote."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        self.written.append(f"summary {len(self.written)}")
        return self.written[-1]


def wire(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [convert_to_openai_messages(SystemMessage(SYSTEM)), *convert_to_openai_messages(messages)]


def hand_logger() -> tuple[list[Any], list[dict[str, Any]]]:
    """Two plain `before_model` hooks a user would write around the summarizer to log by hand."""
    logged: list[dict[str, Any]] = []
    seen: dict[str, list[dict[str, Any]]] = {}

    @before_model(name="HandStart")
    def hand_start(state: Any, runtime: Any) -> None:
        seen["before"] = wire(state["messages"])

    @before_model(name="HandEnd")
    def hand_end(state: Any, runtime: Any) -> None:
        after = wire(state["messages"])
        if after != seen["before"]:
            logged.append({"pair_id": f"hand-{len(logged)}", "compactor": "hand", "before": seen["before"],
                           "after": after})

    return [hand_start, hand_end], logged


def ordered_verdicts(out: Path) -> list[tuple[str, tuple[Any, ...]]]:
    from frayproof_audit.corpus import read_table

    pairs = read_table(out, "pairs").select("pair_id", "source_row", "status").collect()
    findings = read_table(out, "findings").select(
        "pair_id", "check", "code", "snapshot", "message_index").collect()
    by_pair: dict[str, list[tuple[Any, ...]]] = {}
    for row in findings.iter_rows():
        by_pair.setdefault(row[0], []).append(row[1:])
    rows = sorted(pairs.iter_rows(), key=lambda row: row[1])
    return [(status, tuple(sorted(by_pair.get(pair_id, [])))) for pair_id, _, status in rows]


def records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of(root)]


def test_summarization_middleware_pairs_are_exactly_its_summaries(tmp_path: Path) -> None:
    summaries = Summaries()
    summarizer = SummarizationMiddleware(GenericFakeChatModel(messages=summaries), trigger=("messages", 9),
                                         keep=("messages", 6))
    hand, logged = hand_logger()
    writer = PairWriter(tmp_path / "logs")
    agent = create_agent(ToolCallingFake(messages=agent_script(14)), [read], system_prompt=SYSTEM,
                         middleware=recording(writer, [hand[0], summarizer, hand[1]]),
                         checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "thread-1"}}
    for n in range(14):
        agent.invoke({"messages": [HumanMessage(f"question {n}")]}, config)
    writer.close()
    ours = records(tmp_path / "logs")
    assert len(summaries.written) >= 5 and len(ours) == len(summaries.written) == len(logged)
    for record, summary, by_hand in zip(ours, summaries.written, logged, strict=True):
        assert record["session_id"] == "thread-1" and record["format"] == "openai"
        assert record["compactor"] == "HandStart+SummarizationMiddleware+HandEnd"
        assert record["after"][1]["content"].endswith(f"\n\n{summary}")
        assert (record["before"], record["after"]) == (by_hand["before"], by_hand["after"])
        assert record["before"][0] == record["after"][0] == {"role": "system", "content": SYSTEM}
    contract = write_contract(tmp_path)
    run_audit(str(tmp_path / "logs"), contract, tmp_path / "out")
    run_audit(str(hand_log(tmp_path / "hand" / "pairs.jsonl", logged)), contract, tmp_path / "hand-out")
    ours_audited, hand_audited = ordered_verdicts(tmp_path / "out"), ordered_verdicts(tmp_path / "hand-out")
    assert ours_audited == hand_audited and len(ours_audited) == len(ours)
    # keeping 6 messages cuts an exchange in half now and then
    assert {status for status, _ in ours_audited} == {"pass", "fail"}


def trimmed(messages: list[BaseMessage]) -> list[BaseMessage]:
    return trim_messages(messages, max_tokens=4, token_counter=len, strategy="last", start_on="human",
                         end_on=("human", "tool"))


def test_trimming_in_before_model_and_in_wrap_model_call_is_captured(tmp_path: Path) -> None:
    @before_model(name="TrimHook")
    def trim_hook(state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        if len(messages) <= 6:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *trimmed(messages)]}

    @wrap_model_call(name="DropOldToolResults")
    def drop_old_results(request: Any, handler: Callable[[Any], Any]) -> Any:
        messages = request.messages
        last_user = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        kept = [m.model_copy(update={"content": "[cleared]"})
                if i < last_user and isinstance(m, ToolMessage) else m for i, m in enumerate(messages)]
        return handler(request.override(messages=kept) if kept != messages else request)

    for name, middleware in (("hook", trim_hook), ("wrap", drop_old_results)):
        writer = PairWriter(tmp_path / name)
        agent = create_agent(ToolCallingFake(messages=agent_script(5)), [read], system_prompt=SYSTEM,
                             middleware=recording(writer, [middleware], compactor=f"trim-{name}",
                                                  tools=name == "wrap"),
                             checkpointer=InMemorySaver())
        for n in range(5):
            agent.invoke({"messages": [HumanMessage(f"question {n}")]}, {"configurable": {"thread_id": name}})
        writer.close()
        logged = records(tmp_path / name)
        assert logged and {r["compactor"] for r in logged} == {f"trim-{name}"}
        for record in logged:
            assert record["before"] != record["after"]
            assert record["before"][0] == record["after"][0] == {"role": "system", "content": SYSTEM}
        if name == "hook":
            assert all(len(r["after"]) < len(r["before"]) for r in logged)
            assert all("tools" not in r for r in logged)
        else:
            assert all(len(r["after"]) == len(r["before"]) for r in logged)
            assert any(m.get("content") == "[cleared]" for r in logged for m in r["after"])
            assert all(r["tools"] == [convert_to_openai_tool(read)] for r in logged)
        summary = run_audit(str(tmp_path / name), write_contract(tmp_path), tmp_path / f"{name}-out")
        assert (summary.pairs, summary.input_errors) == (len(logged), 0)


def test_async_agents_record_too_and_a_contract_can_stop_the_model_call(tmp_path: Path) -> None:
    @before_model(name="DropLatest")
    def drop_latest(state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        if len(messages) < 5:
            return None
        return {"messages": [RemoveMessage(id=messages[-1].id)]}  # loses the latest request

    contract = parse_contract(CONTRACT)
    writer = PairWriter(tmp_path)
    agent = create_agent(ToolCallingFake(messages=agent_script(5)), [read], system_prompt=SYSTEM,
                         middleware=recording(writer, [drop_latest], contract=contract, on_violation="raise"),
                         checkpointer=InMemorySaver())

    async def conversation() -> int:
        config: Any = {"configurable": {"thread_id": "async-1"}}
        for n in range(5):
            try:
                await agent.ainvoke({"messages": [HumanMessage(f"question {n}")]}, config)
            except ContractViolation:
                return n
        return -1

    stopped_at = asyncio.run(conversation())
    writer.close()
    assert stopped_at >= 1
    [record] = records(tmp_path)
    assert record["guard"]["passed"] is False and "RET-LATEST" in record["guard"]["codes"]
    assert record["session_id"] == "async-1"


def test_the_writer_converts_langchain_messages_with_langchains_converter(tmp_path: Path) -> None:
    messages = [SystemMessage(SYSTEM, id="m1"), HumanMessage("hi", id="m2"),
                AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a"}, "id": "c1"}], id="m3"),
                ToolMessage("ok", tool_call_id="c1", id="m4")]
    with PairWriter(tmp_path) as writer:
        writer.record(messages, messages[:2], compactor="c")
    [record] = records(tmp_path)
    assert record["format"] == "openai"
    assert record["before"] == convert_to_openai_messages(messages)
    assert "m2" not in json.dumps(record)  # run-assigned ids are left out


# --- plain LangGraph nodes ------------------------------------------------------------------

def graph_with(node: Callable[..., Any], checkpointer: Any = None) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("compact", node)
    graph.add_edge(START, "compact")
    return graph.compile(checkpointer=checkpointer)


def long_history() -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(SYSTEM)]
    for n in range(4):
        messages += [HumanMessage(f"question {n}"),
                     AIMessage("", tool_calls=[{"name": "read", "args": {"path": f"f{n}"}, "id": f"c{n}"}]),
                     ToolMessage(f"data {n}", tool_call_id=f"c{n}"), AIMessage(f"answer {n}")]
    return [*messages, HumanMessage("latest")]


def remove_old(state: MessagesState) -> dict[str, Any]:
    """Keeps the system prompt and the last exchange: removes the rest by id."""
    messages = state["messages"]
    return {"messages": [RemoveMessage(id=m.id) for m in messages[1:-5] if m.id]}


async def replace_all(state: MessagesState) -> dict[str, Any]:
    messages = state["messages"]
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), messages[0], HumanMessage("Summary."),
                         *messages[-5:]]}


def untouched(state: MessagesState) -> dict[str, Any]:
    return {}


def test_a_langgraph_node_returning_remove_messages_is_recorded(tmp_path: Path) -> None:
    writer = PairWriter(tmp_path / "logs")
    config: Any = {"configurable": {"thread_id": "graph-1"}}
    final = graph_with(recording_node(remove_old, writer), InMemorySaver()).invoke(
        {"messages": long_history()}, config)
    asyncio.run(graph_with(recording_node(replace_all, writer, compactor="replace-all")).ainvoke(
        {"messages": long_history()}))
    graph_with(recording_node(untouched, writer)).invoke({"messages": long_history()})
    writer.close()
    removed, replaced = records(tmp_path / "logs")
    assert removed["compactor"] == f"{__name__}.remove_old" and removed["session_id"] == "graph-1"
    assert removed["before"] == convert_to_openai_messages(long_history())
    assert removed["after"] == convert_to_openai_messages(final["messages"])  # what the graph applied
    assert replaced["compactor"] == "replace-all" and "session_id" not in replaced
    assert [m["content"] for m in replaced["after"]][:2] == [SYSTEM, "Summary."]
    summary = run_audit(str(tmp_path / "logs"), write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.input_errors) == (2, 2, 0)


def test_guard_with_the_node_extractors_stops_a_bad_node() -> None:
    contract = parse_contract(CONTRACT)

    def drop_everything(state: MessagesState) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("Summary.")]}

    graph = graph_with(guard(contract, before=node_messages(), after=updated_messages())(drop_everything))
    with pytest.raises(ContractViolation) as raised:
        graph.invoke({"messages": long_history()})
    assert "PIN-ROLE" in {v.code for v in raised.value.report.violations}
    ok = graph_with(guard(contract, before=node_messages(), after=updated_messages())(untouched))
    assert len(ok.invoke({"messages": long_history()})["messages"]) == len(long_history())


def test_the_hooks_import_without_the_framework_and_name_the_extra() -> None:
    code = (
        "import sys\n"
        "for name in ('langchain', 'langgraph', 'langchain_core', 'agents'):\n"
        "    sys.modules[name] = None\n"
        "import frayproof_audit.capture\n"
        "import frayproof_audit.capture.langchain as lc, frayproof_audit.capture.agents as ag\n"
        "w = frayproof_audit.capture.PairWriter(sys.argv[1])\n"
        "for build in (lambda: lc.recording(w), lambda: ag.recording_filter(lambda d: d, w)):\n"
        "    try:\n"
        "        build()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, "unused"], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    langchain_error, agents_error = done.stdout.splitlines()
    assert "pip install 'frayproof-audit[langchain]'" in langchain_error
    assert "pip install 'frayproof-audit[agents]'" in agents_error


def test_a_wrapped_node_still_gets_what_langgraph_injects(tmp_path: Path) -> None:
    from langchain_core.runnables import RunnableConfig

    seen: list[Any] = []

    def with_config(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        seen.append(config["configurable"]["thread_id"])
        return remove_old(state)

    with PairWriter(tmp_path) as writer:
        graph = graph_with(recording_node(with_config, writer), InMemorySaver())
        graph.invoke({"messages": long_history()}, {"configurable": {"thread_id": "t-7"}})
    assert seen == ["t-7"]
    [record] = records(tmp_path)
    assert record["session_id"] == "t-7"
