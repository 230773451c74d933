"""The request-log classifier (`sources.diffing`, `sources.lineage`), property by property.

Generated agent conversations (user turns, tool batches, answers), logged as one call per
model request: an append-only conversation yields no pair; one planted truncation, summary,
clearing or rewind yields exactly one event of that class (the other transitions `append`),
with before = the previous request and its response and after = the changed request minus its
new turn; a stateful request is never diffed; the order of the log does not matter.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.sources.lineage import Call, pair_calls

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SYSTEM = {"role": "system", "content": "You are a careful agent."}


def _turns(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """Turns of a conversation: each a list of messages ending with the assistant's answer."""
    turns = []
    for turn in range(draw(st.integers(3, 6))):
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"question number {turn}"}]
        for batch in range(draw(st.integers(0, 2))):
            ids = [f"call_{turn}_{batch}_{k}" for k in range(draw(st.integers(1, 2)))]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {"name": "read", "arguments": f'{{"n": "{i}"}}'},
                        }
                        for i in ids
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": i, "content": f"the long result of {i}"} for i in ids
            ]
        messages.append({"role": "assistant", "content": f"answer number {turn}"})
        turns.append(messages)
    return turns


def calls_of(
    history_steps: list[list[dict[str, Any]]],
    responses: list[dict[str, Any]],
    stateful_from: int | None = None,
) -> list[Call]:
    return [
        Call(
            row=n + 1,
            conversation="conv",
            grouped_by="test",
            format="openai",
            request=request,
            response=[response],
            start=1000 * (n + 1),
            stateful="previous_response_id is set"
            if stateful_from is not None and n >= stateful_from
            else None,
        )
        for n, (request, response) in enumerate(zip(history_steps, responses, strict=True))
    ]


def requests(turns: list[list[dict[str, Any]]]) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Every model request of the conversation (before each assistant message) and its response."""
    history = [SYSTEM]
    steps, responses = [], []
    for turn in turns:
        for message in turn:
            if message["role"] == "assistant":
                steps.append(list(history))
                responses.append(message)
            history.append(message)
    return steps, responses


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    return requests(_turns(draw))


@SETTINGS
@given(conversations())
def test_an_append_only_conversation_yields_no_pair(conversation: Any) -> None:
    steps, responses = conversation
    rows, [lineage] = pair_calls("test", calls_of(steps, responses))
    assert rows == []
    assert dict(lineage.counts)["append"] == len(steps) - 1


def planted(
    conversation: Any, kind: str, draw: st.DrawFn
) -> tuple[str, list[Any], list[Any], int, list[Any]]:
    """The conversation with one `kind` change at request k (a truncation where there is no
    tool result to clear); every later request goes on from the changed history. Returns
    (kind, requests, responses, k, the expected after)."""
    steps, responses = conversation
    k = draw(st.integers(1, len(steps) - 1))
    history = steps[k]
    body = history[1 : len(steps[k - 1]) + 1]  # what the previous request and its response held
    new_turn = history[len(steps[k - 1]) + 1 :]
    if kind == "truncate":
        cut = draw(st.integers(1, len(body) - 1))
        changed = [SYSTEM, *body[cut:]]
    elif kind == "summarize":
        cut = draw(st.integers(1, len(body)))
        changed = [
            SYSTEM,
            {"role": "user", "content": "Here is a summary of the conversation to date:\n\nwe read files"},
            *body[cut:],
        ]
    elif kind == "clear":
        results = [i for i, m in enumerate(body) if m["role"] == "tool"]
        if not results:
            return planted(conversation, "truncate", draw)
        chosen = draw(st.sets(st.sampled_from(results), min_size=1))
        changed = [SYSTEM, *({**m, "content": "[cleared]"} if i in chosen else m for i, m in enumerate(body))]
    else:  # rewind: back to before one of the user messages, and a different question
        users = [i for i, m in enumerate(body) if m["role"] == "user"]
        cut = draw(st.sampled_from(users))
        changed = [SYSTEM, *body[:cut]]
        new_turn = [{"role": "user", "content": "a different question"}]
    rewritten = [*steps[:k]]
    for later in steps[k:]:
        tail = new_turn + later[len(history) :] if kind == "rewind" else later[len(steps[k - 1]) + 1 :]
        rewritten.append([*changed, *tail])
    return kind, rewritten, responses, k, changed


@SETTINGS
@given(conversations(), st.sampled_from(["truncate", "summarize", "clear", "rewind"]), st.data())
def test_a_planted_change_yields_exactly_one_event_of_its_class(
    conversation: Any, kind: str, data: Any
) -> None:
    expected, steps, responses, k, after = planted(conversation, kind, data.draw)
    calls = calls_of(steps, responses)
    rows, [lineage] = pair_calls("test", calls)
    [row] = rows
    assert (row.event, row.fidelity, row.source_row) == (expected, "diffed", k + 1)
    assert row.diff is not None and row.diff.classification == expected and row.diff.previous_row == k
    assert row.before == [*steps[k - 1], responses[k - 1]]
    assert row.after == after
    assert [t.classification for t in lineage.transitions if t.row != k + 1][1:] == ["append"] * (
        len(steps) - 2
    )
    shuffled = list(calls)
    random.Random(k).shuffle(shuffled)
    assert pair_calls("test", shuffled)[0] == rows


@SETTINGS
@given(conversations(), st.data())
def test_a_stateful_request_is_never_diffed(conversation: Any, data: Any) -> None:
    steps, responses = conversation
    start = data.draw(st.integers(1, len(steps) - 1))
    deltas = [*steps[:start], *([step[-1]] for step in steps[start:])]  # only the new message
    rows, [lineage] = pair_calls("test", calls_of(deltas, responses, stateful_from=start))
    assert rows == []
    assert dict(lineage.counts)["stateful"] == len(steps) - start
