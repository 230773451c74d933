"""A small, deterministic YAML writer for contracts: block style, every string double-quoted.

PyYAML's own dumper chooses quoting and wrapping by itself and cannot place comments, and a
contract read with YAML 1.1 must mean exactly what was written (`on`, `2024-01-01`, `010` are not
strings there). So every string is written double-quoted with its unsafe characters escaped, a
key is written bare only when no YAML 1.1 resolver could read it as anything but that string,
and comments are wrapped here. `tests/test_suggest_emit.py` reads back arbitrary values.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

WIDTH = 100
"""Column at which comment lines wrap."""

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_YAML11_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
"""Bare words a YAML 1.1 loader reads as booleans or null (in any of their spellings); `y` and
`n` are strings for PyYAML but booleans for other 1.1 loaders, so they are quoted too."""

_SHORT_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def _escaped(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if _printable(code):
        return char
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def _printable(code: int) -> bool:
    """Characters a YAML 1.1 stream may hold literally inside a double-quoted scalar: PyYAML's
    printable set, minus the line breaks YAML 1.1 folds (NEL, LS, PS) and the byte-order mark."""
    if code in (0x85, 0x2028, 0x2029, 0xFEFF):
        return False
    return (0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def string(text: str) -> str:
    """`text` as a YAML double-quoted scalar that reads back as exactly `text`."""
    return '"' + "".join(_escaped(char) for char in text) + '"'


def key(name: str) -> str:
    """A mapping key: bare when it can only be read as this string, else quoted."""
    if _BARE_KEY.fullmatch(name) and name.lower() not in _YAML11_WORDS:
        return name
    return string(name)


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return repr(value)
    if type(value) is str:
        return string(value)
    if value == {}:
        return "{}"
    if value == []:
        return "[]"
    raise TypeError(f"not a YAML scalar: {type(value).__name__}")


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list | tuple) or len(value) == 0


def lines(value: Any, indent: int) -> list[str]:
    """The block lines of a mapping or list, each indented by `indent` spaces."""
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for name, item in value.items():
            if _is_scalar(item):
                out.append(f"{pad}{key(name)}: {scalar(_plain(item))}")
            else:
                out.append(f"{pad}{key(name)}:")
                out.extend(lines(item, indent + 2))
        return out
    for item in value:
        if _is_scalar(item):
            out.append(f"{pad}- {scalar(_plain(item))}")
        else:
            nested = lines(item, indent + 2)
            out.append(f"{pad}- {nested[0][indent + 2:]}")
            out.extend(nested[1:])
    return out


def _plain(value: Any) -> Any:
    return [] if value == () else value


def entry(name: str, value: Any, indent: int) -> list[str]:
    """`name: value` at `indent`, the value inline when scalar, else as a block below."""
    if _is_scalar(value):
        return [f"{' ' * indent}{key(name)}: {scalar(_plain(value))}"]
    return [f"{' ' * indent}{key(name)}:", *lines(value, indent + 2)]


def list_item(value: dict[str, Any], indent: int) -> list[str]:
    """One mapping as an item of a block list at `indent`."""
    nested = lines(value, indent + 2)
    return [f"{' ' * indent}- {nested[0][indent + 2:]}", *nested[1:]]


def comment(text: str, indent: int = 0) -> list[str]:
    """`text` as `# ` comment lines wrapped at `WIDTH`; blank lines of `text` are kept. Any
    character that could end a comment line early (a line break) is escaped first."""
    pad = " " * indent + "# "
    out: list[str] = []
    for paragraph in text.split("\n"):
        safe = "".join(char if _printable(ord(char)) else _escaped(char) for char in paragraph)
        if not safe.strip():
            out.append(pad.rstrip())
            continue
        out.extend(textwrap.wrap(safe, WIDTH, initial_indent=pad, subsequent_indent=pad + "  ",
                                 break_long_words=False, break_on_hyphens=False))
    return out


def document(value: dict[str, Any]) -> str:
    """A whole mapping as YAML text (no comments), for the contracts suggest evaluates."""
    return "\n".join(lines(value, 0)) + "\n"
