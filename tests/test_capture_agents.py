"""OpenAI Agents SDK capture with the real `openai-agents` package: the SDK's own `ScriptedModel`
drives `Runner.run`, and `OpenAIResponsesCompactionSession` compacts through the real OpenAI
client against a local fake `/v1/responses/compact` server on 127.0.0.1 started here. The
recorded pairs are exactly the compactions, and audit to the verdicts of the same pairs logged
by hand; `call_model_input_filter` trimming is recorded too."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, SQLiteSession, set_tracing_disabled
from agents.memory import OpenAIResponsesCompactionSession, Session
from agents.memory.session import is_openai_responses_compaction_aware_session
from agents.run_config import CallModelData, ModelInputData
from agents.testing import ScriptedModel, assistant_message
from openai import AsyncOpenAI

from frayproof_audit.capture import PairWriter
from frayproof_audit.capture.agents import RecordingSession, recording_filter
from tests.capture_support import hand_log, lines_of, run_audit, verdicts, write_contract

set_tracing_disabled(True)

CONTRACT = """\
format: openai-responses
pins:
  - name: no-prod-writes
    contains: "Never write to production"
retain:
  latest_user_message: exact
  recent_exchanges: 1
"""


class CompactServer:
    """`POST /v1/responses/compact` as the API answers it: every user message of the input,
    then one encrypted `compaction` item."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, **body})
                n = len(server.requests)
                users = [item for item in body.get("input", []) if item.get("role") == "user"]
                output = [{"type": "message", "role": "user", "content": item["content"]}
                          for item in users]
                output.append({"type": "compaction", "id": f"cmp_{n}",
                               "encrypted_content": f"gAAAA-opaque-{n}"})
                answer = json.dumps({
                    "id": f"resp_compact_{n}", "created_at": 0, "object": "response.compaction",
                    "output": output,
                    "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12,
                              "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                              "output_tokens_details": {"reasoning_tokens": 0}},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def client(self) -> AsyncOpenAI:
        return AsyncOpenAI(base_url=f"http://127.0.0.1:{self.http.server_port}/v1", api_key="test",
                           max_retries=0)


@pytest.fixture
def compact_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[CompactServer]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = CompactServer()
    try:
        yield server
    finally:
        server.http.shutdown()
        server.http.server_close()


def agent(turns: int) -> Agent[Any]:
    model = ScriptedModel([[assistant_message(f"answer {n}", item_id=f"msg_{n}")] for n in range(turns)])
    return Agent(name="assistant", instructions="Never write to production.", model=model)


def records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of(root)]


def test_a_compacting_session_records_each_compaction(tmp_path: Path, compact_server: CompactServer) -> None:
    writer = PairWriter(tmp_path / "logs")
    store = SQLiteSession("user-42")
    compacting = OpenAIResponsesCompactionSession(
        "user-42", store, client=compact_server.client(), compaction_mode="input",
        should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= 3)
    session = RecordingSession(compacting, writer)
    assert is_openai_responses_compaction_aware_session(session) and isinstance(session, Session)
    by_hand: list[dict[str, Any]] = []

    async def conversation() -> None:
        runner_agent = agent(6)
        for n in range(6):
            history = await store.get_items()
            compactions = len(compact_server.requests)
            result = await Runner.run(runner_agent, f"question {n}", session=session)
            if len(compact_server.requests) > compactions:  # this turn ended in a compaction
                turn = [{"content": f"question {n}", "role": "user"},
                        *(item.to_input_item() for item in result.new_items)]
                by_hand.append({"pair_id": f"hand-{n}", "compactor": "hand", "session_id": "user-42",
                                "before": [*history, *turn], "after": await store.get_items()})

    asyncio.run(conversation())
    writer.close()
    ours = records(tmp_path / "logs")
    assert len(ours) == len(compact_server.requests) == len(by_hand) >= 2
    for record, request, hand in zip(ours, compact_server.requests, by_hand, strict=True):
        assert request["path"] == "/v1/responses/compact"
        assert record["compactor"] == "OpenAIResponsesCompactionSession:gpt-4.1"
        assert (record["session_id"], record["format"]) == ("user-42", "openai-responses")
        assert record["after"][-1]["type"] == "compaction"
        assert record["after"][-1]["encrypted_content"].startswith("gAAAA-opaque-")
        assert record["before"][-len(request["input"]):] == request["input"]  # what was compacted
        assert (record["before"], record["after"]) == (hand["before"], hand["after"])
    contract = write_contract(tmp_path, CONTRACT)
    run_audit(str(tmp_path / "logs"), contract, tmp_path / "out")
    run_audit(str(hand_log(tmp_path / "hand" / "pairs.jsonl", by_hand)), contract, tmp_path / "hand-out")
    ours_audited, hand_audited = verdicts(tmp_path / "out"), verdicts(tmp_path / "hand-out")
    assert sorted(ours_audited.values()) == sorted(hand_audited.values())
    # The compaction item stands for the turns it replaced: judged on structure, the last
    # exchange is gone from after.
    assert {code for _, findings in ours_audited.values() for _, code, _, _ in findings} == {"RET-EXCHANGE"}


def test_a_session_without_compaction_passes_through(tmp_path: Path) -> None:
    writer = PairWriter(tmp_path)
    store = SQLiteSession("plain")
    session = RecordingSession(store, writer)
    assert not is_openai_responses_compaction_aware_session(session)
    assert session.session_id == "plain" and session.session_settings is store.session_settings

    async def use() -> None:
        result = await Runner.run(agent(2), "question 0", session=session)
        assert result.final_output == "answer 0"
        assert await session.get_items() == await store.get_items()
        await session.add_items([{"role": "user", "content": "extra"}])
        assert (await session.pop_item()) == {"role": "user", "content": "extra"}
        assert len(await session.get_items(limit=1)) == 1
        await session.clear_session()
        assert await store.get_items() == []

    asyncio.run(use())
    writer.close()
    assert writer.stats().recorded == 0


class KeepLastTwo:
    """A user's own compaction-aware Session (the SDK's protocol): `run_compaction` keeps the
    last two items."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.session_settings = None
        self.items: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return list(self.items if limit is None else self.items[-limit:])

    async def add_items(self, items: list[Any]) -> None:
        self.items.extend(items)

    async def pop_item(self) -> Any:
        return self.items.pop() if self.items else None

    async def clear_session(self) -> None:
        self.items = []

    async def run_compaction(self, args: Any = None) -> None:
        self.items = self.items[-2:]


def test_any_compaction_aware_session_and_manual_compaction(tmp_path: Path) -> None:
    writer = PairWriter(tmp_path)
    own = KeepLastTwo("mine")
    session = RecordingSession(own, writer, compactor="keep-last-two")

    async def use() -> None:
        await session.add_items([{"role": "user", "content": f"q{n}"} for n in range(5)])
        await session.run_compaction({"force": True})
        await session.run_compaction({"force": True})  # nothing left to compact: no pair

    asyncio.run(use())
    writer.close()
    [record] = records(tmp_path)
    assert record["compactor"] == "keep-last-two" and record["session_id"] == "mine"
    assert [item["content"] for item in record["before"]] == ["q0", "q1", "q2", "q3", "q4"]
    assert [item["content"] for item in record["after"]] == ["q3", "q4"]


def keep_last_three(data: CallModelData[Any]) -> ModelInputData:
    return ModelInputData(input=data.model_data.input[-3:], instructions=data.model_data.instructions)


async def redact_instructions(data: CallModelData[Any]) -> ModelInputData:
    await asyncio.sleep(0)
    return ModelInputData(input=data.model_data.input, instructions="Be brief.")


def test_the_input_filter_recorder_records_what_the_filter_changed(tmp_path: Path) -> None:
    writer = PairWriter(tmp_path / "logs")
    contract = write_contract(tmp_path, CONTRACT)

    async def conversation() -> None:
        runner_agent = agent(7)
        history: list[Any] = []
        for n, chosen in enumerate([keep_last_three] * 4 + [redact_instructions] * 2):
            config = RunConfig(call_model_input_filter=recording_filter(
                chosen, writer, session_id="conv-1", contract=contract))
            result = await Runner.run(runner_agent, [*history, {"role": "user", "content": f"question {n}"}],
                                      run_config=config)
            history = result.to_input_list()
        unchanged = RunConfig(call_model_input_filter=recording_filter(lambda data: data.model_data, writer))
        await Runner.run(runner_agent, history, run_config=unchanged)

    asyncio.run(conversation())
    writer.close()
    logged = records(tmp_path / "logs")
    trims = [r for r in logged if r["compactor"].endswith("keep_last_three")]
    edits = [r for r in logged if r["compactor"].endswith("redact_instructions")]
    assert len(trims) == 2 and len(edits) == 2 and len(logged) == 4  # turns 0-1 had nothing to trim
    for record in trims:
        assert len(record["after"]["input"]) == 3 < len(record["before"]["input"])
        assert record["before"]["instructions"] == "Never write to production."
        assert record["guard"]["passed"] is True and record["session_id"] == "conv-1"
    for record in edits:
        assert record["after"]["instructions"] == "Be brief."
        assert record["guard"] == {**record["guard"], "passed": False, "codes": ["PIN-TEXT"]}
    summary = run_audit(str(tmp_path / "logs"), contract, tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.failed) == (4, 2, 2)
