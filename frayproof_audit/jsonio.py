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
from collections.abc import Callable, Iterator
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

    Below `SPLIT_BYTES` the value is written back in one piece (no member sizes are wanted
    here): a tool call's arguments are a few hundred bytes, where writing member by member
    cost more in Python steps than the writing itself.
    """
    if len(data) >= SPLIT_BYTES:
        return loads_strict_sized(data)[0]
    return _loads_one_piece(data)[0]


def _loads_one_piece(data: bytes) -> tuple[Any, bool]:
    """`loads_strict` by one rewrite of the whole value; and whether orjson's value was proved
    (False: the exact parser decided)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_exact(data), False
    try:
        written = orjson.dumps(value)
    except TypeError:  # nested deeper than orjson writes (255 levels): let the exact path judge
        return _loads_exact(data), False
    if data.startswith(written) and _same_as_rewritten(data, len(written)):
        return value, True
    if _fast_result_is_exact(data, written.count(b'"'), b"+" in written, value):
        return value, True
    return _loads_exact(data), False


def loads_strict_sized(data: bytes) -> tuple[Any, dict[str, int] | None]:
    """`loads_strict`, and for an object, the size of each member's value as compact JSON when
    the fast path already wrote it (None otherwise): a caller gets sizes without writing again.

    Under `SMALL_BYTES` (a record of a few KB) the proof is one rewrite and each member is
    written once more for its size: fewer Python steps than the rewrite piece by piece, which
    wins above it, where writing the large members twice would cost more (measured on the
    benchmark corpora: 0.72x the time under 8 KB, 0.88x at 8-32 KB, 1.08x at 32-128 KB)."""
    if len(data) < SMALL_BYTES:
        value, proved = _loads_one_piece(data)
        if proved and type(value) is dict:
            dumps = orjson.dumps
            return value, {key: len(dumps(item)) for key, item in value.items()}
        return value, None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_exact(data), None
    try:
        sizes = _proved_sizes(data, value)
    except TypeError:  # nested deeper than orjson writes (255 levels): rare, let the exact path judge
        return _loads_exact(data), None
    if sizes is None:
        return _loads_exact(data), None
    return value, (dict(zip(value, sizes, strict=True)) if type(value) is dict else None)


SMALL_BYTES = 16 * 1024
"""Texts shorter than this are proved with one rewrite (`loads_strict_sized`)."""
SPLIT_BYTES = 1024 * 1024
"""Texts at least this long are rewritten element by element of their top-level members' arrays,
so no more than one message's rewrite is held at a time (memory stays near the record's size)."""


def _rewrite(value: Any, split: bool = False) -> Iterator[tuple[int, bytes]]:
    """orjson's compact rewrite of `value` in pieces that join to it, each with the number of
    the top-level member whose value it belongs to (-1: names and punctuation). An object is
    written member by member, so its members' sizes come for free; with `split`, an array
    member element by element."""
    if type(value) is not dict or not value:
        yield -1, orjson.dumps(value)
        return
    yield -1, b"{"
    for number, (key, item) in enumerate(value.items()):
        if number:
            yield -1, b","
        yield -1, orjson.dumps(key)
        yield -1, b":"
        if split and type(item) is list and item:
            yield number, b"["
            for index, element in enumerate(item):
                if index:
                    yield number, b","
                yield number, orjson.dumps(element)
            yield number, b"]"
        else:
            yield number, orjson.dumps(item)
    yield -1, b"}"


def _proved_sizes(data: bytes, value: Any) -> list[int] | None:
    """The sizes of the top-level members' values as compact JSON when orjson's `value` is
    certainly what the exact parser would return for `data`, else None.

    The rewrite is compared with the text piece by piece as it is written (`_same_as_rewritten`)
    and each piece let go; from the first difference on, its quote bytes and `+` signs are
    counted instead, for `_fast_result_is_exact` (the equal prefix's are the text's own).
    """
    sizes = [0] * len(value) if type(value) is dict else []
    position, equal, quotes, plus = 0, True, 0, False
    for member, piece in _rewrite(value, len(data) >= SPLIT_BYTES):
        if member >= 0:
            sizes[member] += len(piece)
        if equal:
            if data.startswith(piece, position):
                position += len(piece)
                continue
            equal = False
        quotes += piece.count(b'"')
        plus = plus or b"+" in piece
    if equal and _same_as_rewritten(data, position):
        return sizes
    quotes += data.count(b'"', 0, position)
    plus = plus or data.find(b"+", 0, position) >= 0
    return sizes if _fast_result_is_exact(data, quotes, plus, value) else None


def _same_as_rewritten(data: bytes, written: int) -> bool:
    """True when `data` is exactly orjson's rewrite of the value parsed from it, whose first
    `written` bytes it is (compact logs written by orjson, JavaScript or similar). Text equal to
    a serialization of a parsed value can hold no duplicate key and no number that parsing
    changed, so the value is exact.
    """
    return len(data) - written <= 2 and data[written:] in (b"", b"\n", b"\r\n")


def _fast_result_is_exact(data: bytes, quotes: int, plus: bool, value: Any) -> bool:
    """True when orjson's value is certainly what the exact parser would return for `data`;
    its compact rewrite holds `quotes` quote bytes and a `+` when `plus`.

    Duplicate keys: outside strings a quote byte only opens or closes a string, and inside one a
    quote character is spelled `\\"` or `\\u0022`. orjson writes every string of the value
    with two quotes and every quote character in it as `\\"`. Without `\\u0022` in the text,
    its quote bytes are therefore twice its strings plus the quote characters in them, and both
    only shrink when parsing drops a member (whose name alone is one string). So equal quote
    counts prove no member was dropped.

    Numbers: orjson reads an integer beyond 64 bits as a float of at least 9.2e18, which it
    writes with an exponent (`1e+19`); without a `+` in the rewrite there is none, else the
    values are walked (cheaper than searching the text for `e+`, which base64 data often has).
    """
    if data.count(b'"') != quotes or b"\\u0022" in data:
        return False
    if plus:
        try:
            _check_numbers([value])
        except _NotExact:
            return False
    return True


class _NotExact(Exception):
    pass


def _check_numbers(value: Any) -> None:
    """Raise `_NotExact` for a float as large as an integer beyond 64 bits becomes."""
    items: Any = value.values() if type(value) is dict else value
    for item in items:
        kind = type(item)
        if kind is dict or kind is list:
            _check_numbers(item)
        elif kind is float and (item >= _BIG_FLOAT or item <= -_BIG_FLOAT):
            raise _NotExact


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


def compact(value: Any) -> bytes:
    """Compact JSON bytes of a parsed JSON value, its keys in their own order, UTF-8 text.

    orjson writes every ordinary record; what it cannot write, yet input may hold (integers
    beyond 64 bits up to the 4,300 digits Python reads, nesting past 254 levels up to
    `MAX_DEPTH`), the standard library writes exactly, in the same layout. So writing a record
    again costs the exact path only for the records that need it.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8", "surrogatepass")


def _canonical_fallback(value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", "surrogatepass")


_PLAIN_ONLY = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _not_plain(value: Any) -> Any:
    raise TypeError("not a plain JSON value")


def quick_plain_copy(value: Any) -> Any | None:
    """`plain_copy` in one orjson round trip, or None when it cannot tell (then `plain_copy`
    decides, with its exact reason).

    orjson writes only plain values here: subclasses, dataclasses and datetimes go to
    `_not_plain`, as do other unknown types; integers beyond 64 bits, lone surrogates and
    nesting past 254 levels raise. What it writes differently from `json.dumps` (NaN and
    infinities as null, tuples as arrays, UUIDs and enums as their values) makes the copy
    unequal to the original, so an equal copy is exactly the one `plain_copy` would return.
    """
    try:
        copied = orjson.loads(orjson.dumps(value, default=_not_plain, option=_PLAIN_ONLY))
    except TypeError:
        return None
    return copied if copied == value else None


def is_plain_json(value: Any) -> bool:
    """Whether `value` is plain JSON that `plain_copy` would copy unchanged: only dict (string
    keys), list, str, int, float (finite), bool and None; no lone surrogate, no integer beyond
    64 bits, no nesting past 254 levels (those and anything else: False, and `plain_copy`
    decides). orjson checks keys, strings, integers and depth in C; one walk checks the types
    orjson would also write (tuples, enums, UUIDs) and the floats it would write as null."""
    try:
        orjson.dumps(value, default=_not_plain, option=_PLAIN_ONLY)
    except TypeError:
        return False
    return type(value) in (dict, list) and _plain_values(value)


def _plain_values(value: Any) -> bool:
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict or kind is list:
            if not _plain_values(item):
                return False
        elif kind is not float or item - item != 0.0:  # NaN and infinities: x - x is NaN
            return False
    return True


def plain_tree_copy(value: Any) -> Any | None:
    """`copy.deepcopy(value)` when `value` is plain JSON (`is_plain_json`) and a tree, no list
    or dict occurring in it twice; else None (the caller deep-copies, keeping the sharing).

    One walk tests what `is_plain_json` tests and builds the copy: the types, and what
    orjson's strict write would refuse (keys that are not `str`, integers beyond 64 bits, lone
    surrogates, nesting past 254 levels: a non-ASCII text is encoded to find a surrogate,
    an ASCII one holds none). The copy has new dicts (key order kept) and lists, and the
    leaves (strings, numbers, booleans, None) shared, exactly as deepcopy returns them; and,
    nothing being shared, no sharing to keep. Property-tested against `is_plain_json`.
    """
    if type(value) not in (dict, list):
        return None
    try:
        return _tree_copy(value, {id(value)}, 1)
    except _NotTree:
        return None


class _NotTree(Exception):
    """A container met twice, or a value `is_plain_json` refuses."""


_INT_RANGE = (-(2**63), 2**64 - 1)
"""The integers orjson writes (signed and unsigned 64 bits)."""
_DEEPEST = 254
"""The deepest nesting orjson writes (255 containers raise)."""


def _unicode(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate); ASCII always can."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _tree_copy(value: Any, seen: set[int], depth: int) -> Any:
    # Two loops written out (no call per leaf): this walk is most of what copying costs.
    if depth > _DEEPEST:
        raise _NotTree
    low, high = _INT_RANGE
    if type(value) is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str or (not key.isascii() and not _unicode(key)):
                raise _NotTree
            kind = type(item)
            if kind is str:
                if not item.isascii() and not _unicode(item):
                    raise _NotTree
            elif kind is int:
                if not low <= item <= high:
                    raise _NotTree
            elif kind is dict or kind is list:
                size = len(seen)
                seen.add(id(item))
                if len(seen) == size:
                    raise _NotTree
                item = _tree_copy(item, seen, depth + 1)
            elif not (item is None or kind is bool or (kind is float and item - item == 0.0)):
                raise _NotTree  # NaN and infinities: x - x is NaN
            copied[key] = item
        return copied
    items: list[Any] = []
    append = items.append
    for item in value:
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _unicode(item):
                raise _NotTree
        elif kind is int:
            if not low <= item <= high:
                raise _NotTree
        elif kind is dict or kind is list:
            size = len(seen)
            seen.add(id(item))
            if len(seen) == size:
                raise _NotTree
            item = _tree_copy(item, seen, depth + 1)
        elif not (item is None or kind is bool or (kind is float and item - item == 0.0)):
            raise _NotTree
        append(item)
    return items


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
