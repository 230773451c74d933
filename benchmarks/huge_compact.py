"""`compact` on one huge valid transcript: does it stay linear in the transcript's length?

`bench_check --compact N,N,...` builds, per size, a valid transcript of about N messages (a
system prompt, then exchanges of a user turn, an assistant call, its result and an answer, as
`huge_check.session` writes them) in Chat Completions and in Anthropic Messages, and times
`compact(..., max_tokens=2000)` on it in process (CPU time, best of `--repeat`), beside
`inspect` of the same transcript (every compaction reads and inspects it first).

Issue 23 (D12) measured compact quadratic: 16k messages 3.5 s, 64k 51.9 s. The goal is 64k
messages well under 2 s; the figure printed per format is the largest size's seconds and the
cost per message at the largest size over the smallest (about 1 when linear). It is a
measurement, not a test (nothing fails on a slow machine).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from benchmarks.huge_check import session
from benchmarks.results import best_cpu_seconds
from frayproof_audit.transcript import compact, inspect

BUDGET = 2000
GOAL_MESSAGES = 64_000
GOAL_SECONDS = 2.0


def anthropic(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The Chat session as an Anthropic request: `system` on top, calls as `tool_use` blocks,
    each result a `tool_result` block of its own user message."""
    out: list[dict[str, Any]] = []
    for message in messages[1:]:
        if message.get("tool_calls"):
            out.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                 "input": {"path": "src/m.py"}} for call in message["tool_calls"]]})
        elif message["role"] == "tool":
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": message["tool_call_id"],
                 "content": message["content"]}]})
        else:
            out.append({"role": message["role"], "content": message["content"]})
    return {"system": messages[0]["content"], "messages": out}


FORMATS: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "openai": lambda messages: messages,
    "anthropic": anthropic,
}


def run(sizes: Sequence[int], repeat: int) -> int:
    sizes = sorted(sizes)
    print(f"compact of huge valid transcripts to {BUDGET} tokens: {', '.join(map(str, sizes))} "
          f"messages; best of {repeat}, CPU time, in process")
    for name, build in FORMATS.items():
        per_message = []
        for size in sizes:
            transcript = build(session(max(1, size // 4)))
            result = compact(transcript, name, max_tokens=BUDGET)
            seconds = best_cpu_seconds(partial(compact, transcript, name, max_tokens=BUDGET), repeat)
            inspecting = best_cpu_seconds(partial(inspect, transcript, name), repeat)
            messages = result.dropped + len(
                result.transcript if isinstance(result.transcript, list)
                else result.transcript["messages"])
            per_message.append(seconds / messages)
            print(f"  {name:10s} {messages:7d} messages  compact {seconds:7.3f} s  "
                  f"(inspect {inspecting:6.3f} s)  {seconds / messages * 1e6:6.2f} us/message  "
                  f"kept {messages - result.dropped}")
            if size == GOAL_MESSAGES:
                print(f"  {name:10s} {GOAL_MESSAGES} messages: {seconds:.3f} s (goal: under "
                      f"{GOAL_SECONDS:.0f} s: {'met' if seconds < GOAL_SECONDS else 'NOT met'})")
        if len(sizes) > 1:
            print(f"  {name:10s} cost per message, largest / smallest: "
                  f"{per_message[-1] / per_message[0]:.2f}x (1.0 = linear)")
    return 0
