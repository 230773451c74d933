"""Random sessions and contracts for the mutation equivalence and differential tests.

Sessions are built from a small vocabulary on purpose: few call ids and few texts make reused
ids, identical messages (dedupe), literal pins that match, blank and split text common, which
is where operators and checks have their corner cases. Half of the sessions are well-formed
agent transcripts (so baselines pass and mutants get judged), the rest add noise. Everything
is drawn from one `random.Random`, so a seed reproduces a case exactly.
"""

from __future__ import annotations

import json
import random
from typing import Any

import yaml

Message = dict[str, Any]

TEXTS = ("Never write to production", "ok", "hello", "aba", "aababa", "line one\nline two",
         "Continue", "x", "", " ", "Never write", "done")
LITERALS = ("Never write to production", "aba", "ok", "line two", "Continue")
IDS = ("a", "b", "c", "d")


def _text(rng: random.Random) -> Any:
    text = rng.choice(TEXTS)
    shape = rng.random()
    if shape < 0.7:
        return text
    if shape < 0.85:
        return [{"type": "text", "text": text}]
    if shape < 0.95:
        return [{"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "https://example.com/i.png"}},
                {"type": "output_text", "text": rng.choice(TEXTS)}]
    return [{"type": "text", "text": text}, {"type": "text", "text": text}]


def _call(call_id: str, rng: random.Random) -> dict[str, Any]:
    call: dict[str, Any] = {"id": call_id, "type": "function",
                            "function": {"name": rng.choice(("read", "write")), "arguments": "{}"}}
    if rng.random() < 0.05:
        call["type"] = "custom"
    return call


def _decorate(message: Message, rng: random.Random) -> Message:
    roll = rng.random()
    if roll < 0.08:
        message["name"] = None
    elif roll < 0.12:
        message["name"] = "agent"
    elif roll < 0.15:
        message["custom"] = {"n": 1}
    return message


def clean_session(rng: random.Random) -> list[Message]:
    """A well-formed transcript: instructions, closed exchanges with parallel calls, a tail."""
    messages: list[Message] = [{"role": "system", "content": _text(rng)}]
    if rng.random() < 0.3:
        messages.append({"role": "developer", "content": rng.choice(TEXTS)})
    counter = 0
    for _ in range(rng.randint(0, 4)):
        messages.append(_decorate({"role": "user", "content": _text(rng)}, rng))
        for _ in range(rng.randint(0, 2)):
            ids = []
            for _ in range(rng.randint(1, 3)):
                counter += 1
                ids.append(f"call_{counter}")
            content = None if rng.random() < 0.7 else rng.choice(TEXTS)
            messages.append(_decorate({"role": "assistant", "content": content,
                                       "tool_calls": [_call(i, rng) for i in ids]}, rng))
            for call_id in rng.sample(ids, len(ids)):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": _text(rng)})
        if rng.random() < 0.7:
            messages.append(_decorate({"role": "assistant", "content": _text(rng)}, rng))
    messages.append({"role": "user", "content": _text(rng)})
    if rng.random() < 0.2:
        counter += 1
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [_call(f"call_{counter}", rng)]})
    return messages


def noisy_message(rng: random.Random) -> Message:
    """Any shape the loaders accept, including ones the checks reject."""
    kind = rng.choice(("system", "developer", "user", "assistant", "calls", "tool", "tool",
                       "odd"))
    if kind == "calls":
        ids = [rng.choice((*IDS, "")) for _ in range(rng.randint(1, 3))]
        message: Message = {"role": "assistant", "content": rng.choice((None, "", "hi")),
                            "tool_calls": [_call(i, rng) for i in ids]}
        if rng.random() < 0.1:
            message["refusal"] = rng.choice(("no", " "))
        return message
    if kind == "tool":
        message = {"role": "tool", "content": _text(rng) if rng.random() < 0.9 else None}
        if rng.random() < 0.9:
            message["tool_call_id"] = rng.choice(IDS)
        return message
    if kind == "odd":
        return rng.choice(({"role": "critic", "content": "?"}, {"content": "no role"},
                           {"role": "assistant", "content": None},
                           {"role": "user", "content": None, "tool_call_id": "a"}))
    return _decorate({"role": kind, "content": _text(rng)}, rng)


def session(rng: random.Random) -> list[Message]:
    messages = clean_session(rng)
    if rng.random() < 0.5:
        for _ in range(rng.randint(1, 3)):
            messages.insert(rng.randint(0, len(messages)), noisy_message(rng))
    if rng.random() < 0.2 and messages:
        # An identical copy somewhere, so identical mutants and role-pin copies occur.
        source = rng.randrange(len(messages))
        messages.insert(rng.randint(0, len(messages)), json.loads(json.dumps(messages[source])))
    return messages


def compaction(before: list[Message], rng: random.Random) -> list[Message]:
    """A plausible output: unchanged, a suffix behind the instructions, or with a summary."""
    lead = 0
    while lead < len(before) and before[lead].get("role") in ("system", "developer"):
        lead += 1
    users = [i for i, m in enumerate(before) if m.get("role") == "user" and i >= lead]
    roll = rng.random()
    if roll < 0.35 or len(users) < 2:
        after = before
    else:
        start = rng.choice(users)
        summary = [{"role": rng.choice(("assistant", "system", "user")), "content": "summary"}]
        after = [*before[:lead], *(summary if roll < 0.7 else []), *before[start:]]
    copied: list[Message] = json.loads(json.dumps(after))
    return copied


def contract_document(rng: random.Random) -> dict[str, Any]:
    """A random contract as the YAML mapping a user would write."""
    document: dict[str, Any] = {"version": 1}
    checks: dict[str, Any] = {}
    for key in ("tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention"):
        roll = rng.random()
        if roll < 0.1:
            checks[key] = False
        elif roll < 0.3:
            checks[key] = {"severity": "warning"}
        elif roll < 0.4:
            checks[key] = {"enabled": True}
    if rng.random() < 0.3:
        checks.setdefault("tool_pairs", {})
        if isinstance(checks["tool_pairs"], dict):
            checks["tool_pairs"]["allow_trailing_pending_call"] = True
    if rng.random() < 0.6:
        policy = rng.choice(("leading_only", "anywhere", "anywhere", "forbidden"))
        if isinstance(checks.get("structure", {}), dict):
            checks.setdefault("structure", {})["system_messages"] = policy
    if checks:
        document["checks"] = checks
    pins = []
    for index in range(rng.choice((0, 0, 1, 2, 3))):
        pin: dict[str, Any] = {"name": f"pin-{index}"}
        if rng.random() < 0.5:
            pin["role"] = rng.choice(("system", "system", "developer", "user", "tool", "assistant"))
        else:
            pin["contains"] = rng.choice(LITERALS)
        if rng.random() < 0.2:
            pin["severity"] = "warning"
        pins.append(pin)
    if pins:
        document["pins"] = pins
    retain: dict[str, Any] = {}
    if rng.random() < 0.4:
        retain["latest_user_message"] = "exact"
    if rng.random() < 0.4:
        retain["recent_exchanges"] = rng.randint(0, 3)
    if rng.random() < 0.4:
        retain["tool_results"] = "complete"
    if retain:
        document["retain"] = retain
    return document


def contract_yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False)


def case(seed: int) -> tuple[list[Message], list[Message], str]:
    """(before, after, contract YAML) for one seed."""
    rng = random.Random(seed)
    before = session(rng)
    after = compaction(before, rng)
    return before, after, contract_yaml(contract_document(rng))
