"""An example compactor for `frayproof-audit mutate`: keep the leading instructions, replace
older turns with a one-message summary, and keep the last two closed exchanges (every call
with its results) and the latest user request verbatim.

    frayproof-audit mutate --input fixtures/mutation_session.json \\
        --target examples/mutation_compactor.py:compact --contract examples/mutation_contract.yaml
"""

from __future__ import annotations

import itertools
from typing import Any

KEEP_EXCHANGES = 2
INSTRUCTION_ROLES = ("system", "developer")

Message = dict[str, Any]


def closed_exchanges(messages: list[Message]) -> list[tuple[int, int]]:
    """Spans from one user message to the next that hold an assistant or tool message."""
    users = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    return [
        (start, end)
        for start, end in itertools.pairwise(users)
        if any(messages[k].get("role") in ("assistant", "tool") for k in range(start + 1, end))
    ]


def compact(messages: list[Message]) -> list[Message]:
    lead = 0
    while lead < len(messages) and messages[lead].get("role") in INSTRUCTION_ROLES:
        lead += 1
    exchanges = closed_exchanges(messages)
    if len(exchanges) <= KEEP_EXCHANGES:
        return list(messages)
    start = exchanges[-KEEP_EXCHANGES][0]
    answers = [
        message["content"]
        for message in messages[lead:start]
        if message.get("role") == "assistant" and isinstance(message.get("content"), str)
    ]
    summary = {
        "role": "assistant",
        "content": f"Summary of {start - lead} earlier messages: " + " ".join(answers),
    }
    return [*messages[:lead], summary, *messages[start:]]
