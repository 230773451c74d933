"""Strict JSON reading and canonical JSON writing.

The fast path parses with orjson. orjson silently keeps the last of duplicate keys and turns
integers beyond 64 bits into floats, so a cheap, conservative test decides whether the text could
hide either; when it could, the exact (slower) standard-library path decides. Both paths accept
and reject exactly the same documents and produce the same values.

Text is Unicode text: an escaped lone surrogate (`"\\ud800"`, valid JSON syntax) is refused,
because no UTF-8 table cell, file or terminal can hold it. orjson already refuses it, so only
the exact path has to look, and only when the raw bytes hold a `\\uD8`-`\\uDF` escape at all.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

import orjson

MAX_DEPTH = 512
"""Deepest array/object nesting accepted. Deeper input is an input error, never a crash."""

_BOM = b"\xef\xbb\xbf"
_JSON_WHITESPACE = " \t\r\n"
"""The only whitespace JSON allows (RFC 8259); `str.strip()` would also eat \\x0b and \\x0c."""
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""Any escape of a surrogate code point (paired or not): the cheap test before the exact one."""
_BIG_FLOAT = 9.2e18  # orjson turns integers outside the 64-bit range into floats this large


class JSONProblem(ValueError):
    """A JSON document is malformed; the message says what is wrong, without any location."""


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(_BOM) else data


def loads_strict(data: bytes) -> Any:
    """Parse JSON text, rejecting duplicate keys at any depth, non-finite numbers and deep nesting.

    Raises `JSONProblem` with a short reason. `data` must not start with a BOM (strip it first
    where a BOM is allowed).
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_exact(data)
    if _same_as_rewritten(data, value) or _fast_result_is_exact(data, value):
        return value
    return _loads_exact(data)


def _same_as_rewritten(data: bytes, value: Any) -> bool:
    """True when orjson writes `value` back as exactly `data` (compact logs written by orjson,
    JavaScript or similar). Text equal to a serialization of a parsed value can hold no
    duplicate key and no number that parsing changed, so the value is exact.
    """
    head = data[:256]
    if b'": ' in head or b'", ' in head:
        return False  # spaced separators (Python's json.dumps): a compact rewrite cannot match
    try:
        written = orjson.dumps(value)
    except TypeError:
        return False
    return data.startswith(written) and data[len(written):] in (b"", b"\n", b"\r\n")


_QUOTE_SPACE_COLON = re.compile(rb'"[ \t\r\n]+:')


def _fast_result_is_exact(data: bytes, value: Any) -> bool:
    """True when orjson's value is certainly what the exact parser would return.

    `keys` counts the object members orjson kept. `bound` counts, from above, the members the
    text holds: every member name ends with an unescaped quote, then optional whitespace, then a
    colon, and a quote is unescaped exactly when an even run of backslashes precedes it. The
    only other such quotes open a string that starts with a colon, which can only raise the
    bound. So `bound == keys` proves no member was dropped.
    """
    try:
        keys = _count_keys([value], -1)
    except _NotExact:
        return False
    bound = _count_unescaped(data, b'":')
    body = data.rstrip(b"\r\n")
    if b" :" in body or b"\t" in body or b"\n" in body or b"\r" in body:
        for match in _QUOTE_SPACE_COLON.finditer(body):
            if _backslashes_before(body, match.start()) % 2 == 0:
                bound += 1
    return bound == keys


def _count_unescaped(data: bytes, tail: bytes) -> int:
    """Occurrences of `tail` (which starts with a quote) whose quote is not escaped.

    `data.count(m backslashes + tail)` counts the places with at least m backslashes before the
    quote; the alternating sum keeps exactly those with an even run.
    """
    total, sign, run = 0, 1, 0
    while True:
        found = data.count(b"\\" * run + tail)
        if not found:
            return total
        total += sign * found
        sign, run = -sign, run + 1


def _backslashes_before(data: bytes, position: int) -> int:
    run = 0
    while position - run - 1 >= 0 and data[position - run - 1] == 0x5C:
        run += 1
    return run


class _NotExact(Exception):
    pass


def _count_keys(value: Any, depth: int) -> int:
    if depth >= MAX_DEPTH:
        raise _NotExact
    count = 0
    if type(value) is dict:
        count = len(value)
        items: Any = value.values()
    elif type(value) is list:
        items = value
    else:
        return 0
    for item in items:
        kind = type(item)
        if kind is dict or kind is list:
            count += _count_keys(item, depth + 1)
        elif kind is float and (item >= _BIG_FLOAT or item <= -_BIG_FLOAT):
            raise _NotExact
    return count


def _reject_constant(name: str) -> Any:
    raise JSONProblem(f"non-finite number {name} is not allowed")


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, item in pairs:
        if key in result:
            raise JSONProblem(f"duplicate key {key!r}")
        result[key] = item
    return result


def _parse_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise JSONProblem(f"number {text} is too large to be finite")
    return number


_EXACT_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_hook, parse_constant=_reject_constant, parse_float=_parse_float
)


def _loads_exact(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONProblem(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip(_JSON_WHITESPACE):
        raise JSONProblem("empty document")
    if not text.strip():
        odd = "".join(sorted(set(text) - set(_JSON_WHITESPACE)))
        shown = ascii(odd)[1:-1]
        raise JSONProblem(f"no value, only whitespace JSON does not allow ({shown})")
    try:
        value = _EXACT_DECODER.decode(text)
    except RecursionError:
        raise JSONProblem(f"nested deeper than {MAX_DEPTH} levels") from None
    except JSONProblem:
        raise
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError:
        # int() refuses literals over sys.get_int_max_str_digits() (4300 by default): the
        # quadratic conversion is a denial of service, so such a number is a bad document.
        limit = sys.get_int_max_str_digits()
        raise JSONProblem(f"an integer literal has more than {limit} digits") from None
    check_depth(value)
    if _SURROGATE_ESCAPE.search(data):
        check_unicode(value)
    return value


def check_unicode(value: Any) -> None:
    """Raise `JSONProblem` when a string or key of `value` holds a lone surrogate.

    A paired escape (`\\ud83d\\ude00`) was already joined into one code point by the parser, so
    whatever surrogate is left is unpaired. Iterative, like `check_depth`.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            _check_text(item)
        elif type(item) is dict:
            stack.extend(reversed([part for member in item.items() for part in member]))
        elif type(item) is list:
            stack.extend(reversed(item))  # reversed: the first bad string in the text is named


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise JSONProblem(
            f"string holds a lone surrogate \\u{code:04x} (an escape that is not Unicode text)"
        ) from None


def check_depth(value: Any) -> None:
    """Raise `JSONProblem` when `value` nests deeper than `MAX_DEPTH` (iteratively, no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            children: Any = item.values()
        elif type(item) is list or type(item) is tuple:
            children = item
        else:
            continue
        if depth >= MAX_DEPTH:
            raise JSONProblem(f"nested deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))


_SORTED = orjson.OPT_SORT_KEYS


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: keys sorted at every depth, no whitespace, UTF-8 text.

    Two JSON values are "identical" for the contract exactly when these bytes are equal. Values
    orjson cannot write (integers beyond 64 bits, non-string keys from Python callers, lone
    surrogates) fall back to the standard library with the same layout.
    """
    try:
        return orjson.dumps(value, option=_SORTED)
    except TypeError:
        return _canonical_fallback(value)


def _canonical_fallback(value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", "surrogatepass")


def plain_copy(value: Any, on_error: Callable[[str], Exception]) -> Any:
    """Deep-copy a Python value through JSON semantics (tuples become lists).

    Refuses non-finite numbers, non-JSON values, unsortable keys and over-deep nesting by
    raising `on_error(reason)`. This is how caller-supplied lists are detached and checked.
    """
    try:
        check_depth(value)
        # sort_keys makes mixed-type keys fail here, as they would in a canonical identity.
        json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except JSONProblem as exc:
        raise on_error(str(exc)) from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise on_error(f"must contain only finite JSON values ({exc})") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: not Unicode text, as in files
        raise on_error(f"holds a lone surrogate \\u{ord(text[exc.start]):04x}"
                       " (a string that is not Unicode text)") from None
    return json.loads(text)


def is_unicode_text(value: str) -> bool:
    """Whether a string can be written as UTF-8: False when it holds a lone surrogate (a YAML
    or JSON escape such as `\\ud800`, or a file name's undecodable byte under PEP 383)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
