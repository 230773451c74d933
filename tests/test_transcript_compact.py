"""Compaction keeps what belongs together, and token counting is pluggable."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from frayproof_audit.transcript import (
    TokenizerUnavailable,
    compact,
    find_safe_boundary,
    inspect,
    tiktoken_counter,
)
from tests.helpers import FIXTURES, run_cli

HAS_TIKTOKEN = importlib.util.find_spec("tiktoken") is not None


def test_a_reasoning_item_is_never_cut_from_its_calls() -> None:
    items = [
        {"role": "user", "content": "q1 " * 50},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x" * 200},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "y" * 200},
        {"role": "user", "content": "q2"},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "z"},
        {"type": "message", "role": "assistant", "content": "a2"},
    ]
    assert inspect(items, "openai-responses").valid
    assert [find_safe_boundary(items, i, "openai-responses") for i in range(8)] == [
        0, 0, 0, 0, 4, 4, 4, 7]
    done = compact(items, "openai-responses", max_tokens=60, keep=1)
    assert done.transcript == items[4:] and done.kept_from == 4


def test_a_thinking_block_stays_with_its_message() -> None:
    request = {"system": "rules", "messages": [
        {"role": "user", "content": "q1 " * 80},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t" * 100, "signature": "s"},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
            {"type": "text", "text": "q2"}]},
        {"role": "assistant", "content": "a2"},
    ]}
    # The results message also holds the next question: no cut can start inside it.
    assert find_safe_boundary(request, 3, "anthropic") == 0
    done = compact(request, "anthropic", max_tokens=10_000)
    assert not done.changed and done.transcript == request


@pytest.mark.skipif(HAS_TIKTOKEN, reason="tiktoken is installed")
def test_tiktoken_absent_is_a_named_error_and_exit_2() -> None:
    with pytest.raises(TokenizerUnavailable, match="tokens"):
        tiktoken_counter()
    out = run_cli("compact", FIXTURES / "transcripts" / "openai.json", "--max-tokens", "50",
                  "--tokenizer", "tiktoken", expect=2)
    assert "pip install" in out.stderr


@pytest.mark.skipif(not HAS_TIKTOKEN, reason="the `tokens` extra (tiktoken) is not installed")
def test_tiktoken_counts_tokens(tmp_path: Path) -> None:
    try:
        count = tiktoken_counter()
    except TokenizerUnavailable as exc:  # its encoding file cannot be fetched offline
        pytest.skip(str(exc))
    messages = json.loads((FIXTURES / "transcripts" / "openai.json").read_text(encoding="utf-8"))
    assert 0 < count(messages) < len(json.dumps(messages))
    assert compact(messages[:2], "openai", max_tokens=10_000, counter=count).tokens_after == count(
        messages[:2])
