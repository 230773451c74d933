"""`repair` and `compact` hand back every message they do not list as changed exactly as it
was: two valid result messages of one batch are never merged, a block keeps its place in its
message, and `compact` keeps an exact suffix whose counts are the real ones. The reproducers
of issue 23 (D7), through the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frayproof_audit.transcript import compact, repair
from tests.helpers import run_cli


def wire(value: Any) -> str:
    """A message as wire data: its JSON text, key order and all."""
    return json.dumps(value, ensure_ascii=False)


def tool_use(call_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


AN_SPLIT: list[dict[str, Any]] = [
    {"role": "user", "content": "Run both checks."},
    {"role": "assistant", "content": [tool_use("t1", "lint"), tool_use("t2", "test")]},
    {"role": "user", "content": [tool_result("t1", "lint ok")]},
    {"role": "user", "content": [tool_result("t2", "tests ok")]},
    {"role": "assistant", "content": "Both pass. Deploying."},
    {"role": "user", "content": "Go."},
    {"role": "assistant", "content": [tool_use("t9", "deploy")]},
]
"""The results of one batch in two consecutive user messages, and a dangling call later."""

OTEL_SPLIT: list[dict[str, Any]] = [
    {"role": "user", "parts": [{"type": "text", "content": "Run both checks."}]},
    {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "t1", "name": "lint", "arguments": {}},
        {"type": "tool_call", "id": "t2", "name": "test", "arguments": {}}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1", "response": "lint ok"}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t2", "response": "tests ok"}]},
    {"role": "assistant", "parts": [{"type": "text", "content": "Both pass. Deploying."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Go."}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "t9", "name": "deploy",
                                     "arguments": {}}]},
]


def repaired_file(tmp_path: Path, transcript: Any, *extra: str, real: bool = False) -> tuple[Any, str]:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(transcript), encoding="utf-8")
    out = tmp_path / "out.json"
    done = run_cli("repair", source, "-o", out, *extra, real=real)
    return json.loads(out.read_text(encoding="utf-8")), done.stdout


def test_anthropic_split_results_stay_two_messages(tmp_path: Path) -> None:
    fixed, account = repaired_file(tmp_path, AN_SPLIT)
    assert [wire(m) for m in fixed[:7]] == [wire(m) for m in AN_SPLIT]
    assert len(fixed) == 8 and fixed[7]["content"][0]["tool_use_id"] == "t9"
    assert account.count("\n  ") == 1 and "synthesize transcript[6].content[0] id=t9" in account


def test_otel_split_tool_messages_stay_two_messages(tmp_path: Path) -> None:
    fixed, account = repaired_file(tmp_path, OTEL_SPLIT, real=True)
    assert [wire(m) for m in fixed[:7]] == [wire(m) for m in OTEL_SPLIT]
    assert len(fixed) == 8 and fixed[7]["parts"][0]["id"] == "t9"
    assert account.count("\n  ") == 1 and "synthesize transcript[6].parts[0] id=t9" in account


def test_a_block_keeps_its_place_in_the_results_message_it_shares() -> None:
    note = {"type": "text", "text": "Both ran; see below."}
    messages = [
        {"role": "user", "content": "Run both checks."},
        {"role": "assistant", "content": [tool_use("t1", "lint"), tool_use("t2", "test")]},
        {"role": "user", "content": [note, tool_result("t1", "lint ok"), tool_result("t1", "lint ok")]},
    ]
    done = repair(messages, "anthropic")
    blocks = done.transcript[2]["content"]
    assert blocks[:2] == [note, tool_result("t1", "lint ok")] and blocks[2]["tool_use_id"] == "t2"
    assert [wire(m) for m in done.transcript[:2]] == [wire(m) for m in messages[:2]]
    assert [(c.action, c.message_index, c.into) for c in done.changes] == [
        ("synthesize", 1, 2), ("drop", 2, None)]
    assert "added to transcript[2]" in done.changes[0].to_text()


def test_compact_keeps_an_exact_suffix_and_counts_it(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "Start the release checklist for version 2.4 and tell me what "
                                    "is pending before we can ship it today."},
        {"role": "assistant", "content": "Two checks are pending: lint and the test suite. I can "
                                         "run both now if you like."},
        *AN_SPLIT[:6],
    ]
    source = tmp_path / "an_split.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    out = tmp_path / "out.json"
    done = run_cli("compact", source, "--max-tokens", "150", "--keep", "1", "-o", out)
    assert "dropped 2 message(s), keeping the leading instructions and every message from 2 on" \
        in done.stdout
    kept = json.loads(out.read_text(encoding="utf-8"))
    assert [wire(m) for m in kept] == [wire(m) for m in messages[2:]]
    result = compact(messages, "anthropic", max_tokens=150, keep=1)
    assert (result.kept_from, result.dropped) == (2, 2)


def test_compact_of_split_otel_results_keeps_them_apart() -> None:
    opening = [
        {"role": "user", "parts": [{"type": "text", "content": "Start the release checklist for "
                                    "version 2.4 and tell me what is pending before we ship."}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Two checks are pending: lint "
                                         "and the test suite. I can run both now."}]},
    ]
    messages = [*opening, *OTEL_SPLIT[:6]]
    shorter = compact(messages, "otel-genai", max_tokens=150, keep=1)
    assert (shorter.kept_from, shorter.dropped) == (2, 2)
    assert [wire(m) for m in shorter.transcript] == [wire(m) for m in messages[2:]]


def test_the_linear_cuts_equal_the_reference_on_long_transcripts_of_every_format() -> None:
    """The hypothesis sessions are short; these hold every rule at once over 600 messages."""
    from benchmarks.huge_check import session
    from frayproof_audit.transcript.compact import compact_transcript, cuts, reference_cuts
    from frayproof_audit.transcript.loading import read_transcript
    from tests.transcript_formats import FORMATS, in_format

    chat = session(150)
    for message in chat:  # compact JSON arguments, as every format can say them
        for called in message.get("tool_calls") or ():
            called["function"]["arguments"] = called["function"]["arguments"].replace(": ", ":")
    for fmt in FORMATS:
        snapshot = in_format(chat, fmt)
        assert snapshot is not None, fmt
        transcript = read_transcript(snapshot, fmt)
        fast = cuts(transcript)
        assert fast == reference_cuts(transcript) and sum(fast.safe) > 100
        for budget in (300, 3000):
            assert compact_transcript(transcript, max_tokens=budget, keep=1) == compact_transcript(
                transcript, max_tokens=budget, keep=1, where=reference_cuts)
