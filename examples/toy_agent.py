"""An offline toy agent, a context compactor that is safe, and one with a planted bug.

No model and no network: `scripted_model` plays the model, `list_migrations` is the only tool.
Both compactors are wrapped in `frayproof_audit.guard`, which checks every output against
`examples/contract.yaml` before the agent may use it.

    python examples/toy_agent.py

prints the size of the safe compaction, then the report that blocked the broken one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frayproof_audit import ContractViolation, guard

CONTRACT = Path(__file__).with_name("contract.yaml")
SYSTEM_PROMPT = (
    "You are the release assistant for the payments service. Never write to production: "
    "stage every change and wait for a human to approve it."
)
Message = dict[str, Any]


def list_migrations(status: str) -> str:
    """The agent's only tool: the migrations in a given state, one per line."""
    pending = ["0042_add_refund_index", "0043_backfill_currency_codes"]
    return "\n".join(pending) if status == "pending" else ""


def scripted_model(messages: list[Message]) -> Message:
    """Stands in for the LLM: ask the tool first, then answer from its result."""
    last = messages[-1]
    if last["role"] == "user":
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": "list_migrations", "arguments": '{"status": "pending"}'},
            }],
        }
    names = last["content"].splitlines()
    return {
        "role": "assistant",
        "content": f"Two migrations are pending: {names[0]} and {names[1]}.",
    }


def run_turn(messages: list[Message], request: str) -> None:
    """Append a user request and let the agent work until it answers in text."""
    messages.append({"role": "user", "content": request})
    while True:
        reply = scripted_model(messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return
        for call in reply["tool_calls"]:
            arguments = json.loads(call["function"]["arguments"])
            messages.append({
                "role": "tool",
                "tool_call_id": call["id"],
                "content": list_migrations(**arguments),
            })


def build_session() -> list[Message]:
    """The conversation in fixtures/clean_session.json: one finished turn, one new request."""
    session: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT}]
    run_turn(session, "Which database migrations are still waiting to be applied?")
    session.append({
        "role": "user",
        "content": "Stage 0042 on the staging database and tell me how long it took.",
    })
    return session


def compact(messages: list[Message]) -> list[Message]:
    """Keep the leading instructions and the open turn verbatim; summarise what lies between.

    The open turn starts at the last user message and keeps everything after it, so a tool
    batch still waiting for results is never split. Whole exchanges are summarised, so no
    call loses its result and no result loses its call.
    """
    head = 0
    while head < len(messages) and messages[head].get("role") in ("system", "developer"):
        head += 1
    last_user = max(
        (index for index, message in enumerate(messages) if message.get("role") == "user"),
        default=None,
    )
    if last_user is None or last_user <= head:
        return [dict(message) for message in messages]
    middle = messages[head:last_user]
    said = [
        message["content"]
        for message in middle
        if message.get("role") == "assistant" and isinstance(message.get("content"), str)
    ]
    summary = f"Summary of {len(middle)} earlier messages: " + " ".join(said)
    return [
        *(dict(message) for message in messages[:head]),
        {"role": "assistant", "content": summary.rstrip(": ")},
        *(dict(message) for message in messages[last_user:]),
    ]


def compact_broken(messages: list[Message]) -> list[Message]:
    """The planted bug: "drop messages with no text to save tokens".

    An assistant message that only calls a tool has no text, so it goes, and its result is
    left answering a call that no longer exists: the provider would reject the request.
    """
    return [dict(message) for message in messages if message.get("content")]


safe_compact = guard(CONTRACT, on_violation="raise")(compact)
broken_compact = guard(CONTRACT, on_violation="raise")(compact_broken)


def main() -> None:
    session = build_session()
    compacted = safe_compact(session)
    print(f"Safe compaction: {len(session)} -> {len(compacted)} messages")
    try:
        broken_compact(session)
    except ContractViolation as blocked:
        print("Broken compaction blocked:")
        print(blocked.report.to_text())
    else:
        raise SystemExit("the planted bug was not caught")


if __name__ == "__main__":
    main()
