"""Mutation cases whose assistant turns carry thinking blocks or reasoning items.

`sessiongen.small`'s sessions hold no provider reasoning, so the thinking and reasoning
operators would find no site in them. Here both snapshots of a small case get, in front of
their assistant messages, either Anthropic thinking blocks (`thinking`, sometimes also
`redacted_thinking`) or an OpenAI Responses reasoning item with item ids on the message and its
calls, each derived from the undecorated message itself: identical messages get identical
blocks, so a compaction that keeps a message keeps its blocks, and one that changed it carries
changed blocks (a modified thinking block for the provider). The contract mostly turns on
`provider_validity`, under the profile the blocks belong to or another. Builders take a
`Source`, as in `small`, so hypothesis can shrink them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from frayproof_audit.jsonio import canonical
from sessiongen import small
from sessiongen.source import Source

STYLES = ("thinking", "reasoning")
PROFILES: tuple[Any, ...] = (True, {"profile": "anthropic"}, {"profile": "openai-responses"},
                             {"profile": "gemini"}, {"profile": "openai-chat"},
                             {"profile": "anthropic", "allow_trailing_pending_call": True})


def _digest(message: dict[str, Any]) -> str:
    try:
        return hashlib.sha256(canonical(message)).hexdigest()[:10]
    except (TypeError, ValueError):
        return "0" * 10


def _parts(content: Any) -> list[Any] | None:
    if content is None:
        return []
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is list and all(type(block) is dict for block in content):
        return list(content)
    return None  # content the loaders refuse or no block list can extend: left as it is


def decorate(messages: list[Any], style: str) -> list[Any]:
    """The messages with blocks in front of four in five assistant messages (chosen by their
    own digest, so before and after agree)."""
    out = []
    for message in messages:
        if type(message) is not dict or message.get("role") != "assistant":
            out.append(message)
            continue
        digest = _digest(message)
        parts = _parts(message.get("content"))
        if parts is None or int(digest, 16) % 5 == 0:
            out.append(message)
            continue
        decorated = dict(message)
        if style == "thinking":
            blocks: list[Any] = [{"type": "thinking", "thinking": f"Plan {digest}.",
                                  "signature": f"sig-{digest}"}]
            if int(digest, 16) % 3 == 0:
                blocks.insert(0, {"type": "redacted_thinking", "data": f"enc-{digest}"})
        else:
            blocks = [{"type": "reasoning", "id": f"rs_{digest}", "summary": []}]
            if parts:
                decorated["item"] = {"id": f"msg_{digest}"}
            calls = message.get("tool_calls")
            if type(calls) is list and all(type(call) is dict for call in calls):
                decorated["tool_calls"] = [
                    {**call, "item": {"id": f"fc_{digest}_{k}"}} for k, call in enumerate(calls)]
        decorated["content"] = blocks + parts
        out.append(decorated)
    return out


def reasoning_case(src: Source, style: str | None = None) -> small.MutationCase:
    """A small mutation case (clean or noisy) with thinking or reasoning (`style`, else drawn),
    and a contract."""
    before, after, contract_yaml = (
        small.clean_mutation_case(src) if src.chance(0.6) else small.mutation_case(src))
    style = style or src.pick(STYLES)
    document = yaml.safe_load(contract_yaml) or {}
    if not src.chance(0.2):
        document.setdefault("checks", {})["provider_validity"] = src.pick(PROFILES)
    return decorate(before, style), decorate(after, style), small.to_yaml(document)
