"""A small seeded corpus for the `suggest` tests: good and buggy compactors (sessiongen.realistic).

Every system prompt carries one policy paragraph all sessions share (`POLICY`) and one line of
its own session (`account_line`), so the tests can tell a stable policy from a fixture string.
Some sessions are logged twice (two compaction points of the same conversation), so a string
one session holds occurs in several pairs. Texts are cut short to keep mutation cheap.
"""

from __future__ import annotations

import random
from typing import Any

from sessiongen.realistic import (
    BUGGY_COMPACTORS,
    COMPACTORS,
    GOOD_COMPACTORS,
    NotApplicable,
    generate_session,
    logged_at,
)

POLICY = "Never run migrations against the production cluster without a change ticket."
MAX_TEXT = 240


def account_line(session: str) -> str:
    return f"Customer account for this session: {session} (billing tier gold)."


def _shrink(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and len(content) > MAX_TEXT and message.get("role") not in ("system", "tool"):
        return {**message, "content": content[:MAX_TEXT]}
    return message


def _session(rng: random.Random, session: str) -> list[dict[str, Any]]:
    messages = [_shrink(m) for m in generate_session(rng, rng.randint(12, 30), max_result=1500)]
    system = messages[0]
    prompt = system["content"][:MAX_TEXT].rstrip()
    messages[0] = {**system, "content": f"{prompt}\n\n{POLICY}\n{account_line(session)}"}
    return messages


def _prefixes(rng: random.Random, messages: list[dict[str, Any]], twice: bool) -> list[list[dict[str, Any]]]:
    """The session itself, and with `twice` an earlier point where it ended on a user message."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user" and i >= len(messages) // 2]
    points = [messages]
    if twice and len(users) > 1:
        points.insert(0, messages[: users[0] + 1])
    return points


def make_records(seed: int, good_sessions: int, bad_per_class: int, *,
                 twice: float = 0.3) -> list[dict[str, Any]]:
    """Records of the good compactors over `good_sessions` sessions (some logged twice), and
    `bad_per_class` records of each buggy compactor, each on a session of its own."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    plan = [name for _ in range(good_sessions) for name in [rng.choice(list(GOOD_COMPACTORS))]]
    plan += [name for name in BUGGY_COMPACTORS for _ in range(bad_per_class)]
    for number, name in enumerate(plan):
        for _ in range(80):
            session = f"sess-{seed}-{number:04d}"
            messages = _session(rng, session)
            logged_twice = name in GOOD_COMPACTORS and rng.random() < twice
            try:
                pairs = [(before, COMPACTORS[name](before, rng))
                         for before in _prefixes(rng, messages, logged_twice)]
            except NotApplicable:
                continue
            for point, (before, after) in enumerate(pairs):
                records.append({"pair_id": f"{session}:{point}", "session_id": session, "compactor": name,
                                "logged_at": logged_at(0, rng.random()), "before": before, "after": after})
            break
        else:
            raise RuntimeError(f"{name}: no applicable session")
    return records
