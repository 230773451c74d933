"""Candidate `contains` pins: instruction lines and paragraphs many sessions share verbatim.

A candidate is a paragraph (text between blank lines) or a line of an instruction text part,
stripped, a leading list marker (`-`, `*`, `3.`, `2)`) removed from a line; so it is always a
substring of one text part, which is what a `contains` pin looks for. It must read like a
policy, not a heading or a number: at least `MIN_WORDS` words with a letter, at most
`MAX_CHARS` characters. Its presence is counted over **distinct sessions** (a session logged
a hundred times is still one voice), and only a text present in at least `min_sessions`
sessions and in at least `min_support` of them is a candidate: nothing one session says (a
fixture, a customer name, a date) can become a pin.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

MIN_WORDS = 3
MAX_CHARS = 500
MAX_CANDIDATES = 200
"""The most texts handed to the engine for measuring (the most widely shared first)."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r]*\n")
_LIST_MARKER = re.compile(r"^(?:[-*•+]|\(?\d{1,3}[.)])\s+")


@dataclass(frozen=True, slots=True)
class TextCandidate:
    text: str
    sessions: int
    """Distinct learned-from sessions whose before's instructions hold the text."""
    first_seen: tuple[int, int, int]
    """(pair, part, offset) of its first occurrence, in pair order: the contract's order."""


def needed(share: float, total: int) -> int:
    """The smallest count that is at least `share` of `total`."""
    return max(0, math.ceil(share * total - 1e-9))


def substantial(text: str) -> bool:
    if not text or len(text) > MAX_CHARS:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file can hold it
        return False
    words = [word for word in text.split() if any(char.isalpha() for char in word)]
    return len(words) >= MIN_WORDS


def pieces(part: str) -> list[str]:
    """The candidate texts of one text part, in order of appearance."""
    found: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(part):
        stripped = paragraph.strip()
        if substantial(stripped):
            found.append(stripped)
        if "\n" in stripped:
            for line in stripped.split("\n"):
                text = _LIST_MARKER.sub("", line.strip(), count=1).strip()
                if substantial(text):
                    found.append(text)
        else:
            text = _LIST_MARKER.sub("", stripped, count=1).strip()
            if text != stripped and substantial(text):
                found.append(text)
    return found


def text_candidates(sessions_parts: Iterable[tuple[str, tuple[str, ...]]], total_sessions: int,
                    min_support: float, min_sessions: int) -> list[TextCandidate]:
    """Texts present in enough sessions, most widely shared first, then first seen.

    `sessions_parts` yields (session, instruction parts) per learned-from pair, in pair order.
    """
    sessions: dict[str, set[str]] = {}
    first: dict[str, tuple[int, int, int]] = {}
    for pair_number, (session, parts) in enumerate(sessions_parts):
        for part_number, part in enumerate(parts):
            for text in pieces(part):
                sessions.setdefault(text, set()).add(session)
                if text not in first:
                    first[text] = (pair_number, part_number, part.find(text))
    floor = max(min_sessions, needed(min_support, total_sessions))
    chosen = [TextCandidate(text, len(holders), first[text]) for text, holders in sessions.items()
              if len(holders) >= floor]
    chosen.sort(key=lambda c: (-c.sessions, c.first_seen, -len(c.text), c.text))
    return chosen[:MAX_CANDIDATES]


def pin_name(text: str, taken: set[str]) -> str:
    """A readable, unique pin name from the text's first words (`never-write-to-production`)."""
    words = re.findall(r"[A-Za-z0-9]+", text.lower())
    base = "-".join(words[:5])[:40].strip("-") or "text"
    name, counter = base, 2
    while name in taken:
        name = f"{base}-{counter}"
        counter += 1
    taken.add(name)
    return name
