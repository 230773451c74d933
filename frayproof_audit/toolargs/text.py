"""Evidence text that stays on one line and within a readable width.

Argument values come straight from model output: they can hold newlines, terminal escape
sequences, megabytes of text or wide CJK characters. Evidence is printed in tables and stored in
the `findings` table, so it is made one line (control characters escaped as `\\n`, `\\x1b`, ...)
and cut by display columns (a wide character counts two), always between characters, so the
result is valid UTF-8 and never breaks the table it sits in.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

ELLIPSIS = "..."
EVIDENCE_COLUMNS = 200
"""Width of evidence inside a finding's message (the tool-args table cuts further)."""

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0 or unicodedata.category(char) in ("Cs", "Zl", "Zp"):
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def _columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def one_line(text: str, width: int = EVIDENCE_COLUMNS) -> str:
    """`text` with control characters escaped, cut to at most `width` display columns
    (`...` included when cut)."""
    pieces: list[str] = []
    used = 0
    budget = width - len(ELLIPSIS)
    cut_at: int | None = None
    for char in text:
        piece = _escaped(char)
        size = sum(_columns(c) for c in piece) if len(piece) > 1 else _columns(piece)
        if cut_at is None and used + size > budget:
            cut_at = len(pieces)
        used += size
        pieces.append(piece)
        if used > width:
            break
    if used <= width:
        return "".join(pieces)
    return "".join(pieces[:cut_at]) + ELLIPSIS


def preview(value: Any, width: int = 60) -> str:
    """A short JSON rendering of an argument value for evidence (`"Tokyo"`, `42`, `{...}`)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # pragma: no cover - values come from strict JSON
        text = repr(value)
    return one_line(text, width)


def kind(value: Any) -> str:
    """The JSON type name of a parsed value (`true` is a boolean, never a number)."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int or type(value) is float:
        return "number"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    if type(value) is dict:
        return "object"
    return type(value).__name__  # pragma: no cover - values come from strict JSON
