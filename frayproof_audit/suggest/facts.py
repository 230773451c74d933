"""What `suggest` reads of a pair's neutral messages: instruction texts, exchanges, calls.

These facts decide which rules a pair is evidence for (a pair with no system message says
nothing about a system-prompt pin) and which texts and arguments are candidates. The verdicts
themselves always come from the engine (`frayproof_audit.check`), never from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frayproof_audit.model import Message, Snapshot

INSTRUCTION_ROLES = ("system", "developer")
TEXT_TYPES = ("text", "input_text", "output_text")


@dataclass(frozen=True, slots=True)
class Facts:
    instruction_parts: tuple[str, ...]
    """The text parts of before's system and developer messages, in order."""
    before_roles: frozenset[str]
    has_user: bool
    closed_exchanges: int
    """Closed exchanges of before, as `retention` counts them."""
    after_has_tools: bool
    """After holds a tool call or a tool message."""
    calls: tuple[tuple[str, str], ...]
    """(tool name, arguments) of every call of before."""


def text_parts(message: Message) -> list[str]:
    """A message's text parts: its string content, or the `text` of each text block."""
    content: Any = message.content
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [block["text"] for block in content
                if isinstance(block, dict) and block.get("type") in TEXT_TYPES
                and isinstance(block.get("text"), str)]
    return []


def closed_exchanges(roles: list[str]) -> int:
    """Spans from a user message to the next one holding an assistant or tool message."""
    count = 0
    inside = None
    for role in roles:
        if role == "user":
            if inside:
                count += 1
            inside = False
        elif inside is not None and role in ("assistant", "tool"):
            inside = True
    return count


def facts_of(before: Snapshot, after: Snapshot) -> Facts:
    roles = [message.role for message in before.messages]
    parts = tuple(part for message in before.messages if message.role in INSTRUCTION_ROLES
                  for part in text_parts(message))
    calls = tuple((call.name, call.arguments) for message in before.messages
                  for call in message.tool_calls)
    after_tools = any(message.tool_calls or message.role == "tool" for message in after.messages)
    return Facts(parts, frozenset(roles), "user" in roles, closed_exchanges(roles), after_tools, calls)
