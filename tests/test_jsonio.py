"""The fast strict parser must equal the exact reference parser on every document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.jsonio import (
    MAX_DEPTH,
    JSONProblem,
    _loads_exact,
    canonical,
    loads_strict,
)


def typed(value: Any) -> Any:
    """A structure that also compares types (1 != 1.0 != True) and dict key order."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, value)


def outcome(parse: Any, data: bytes) -> Any:
    try:
        return ("ok", typed(parse(data)))
    except JSONProblem:
        return ("problem",)


# High and low surrogates: drawn next to each other in order they make a pair (one emoji),
# anywhere else they are lone. `json.dumps` escapes them, so the documents hold
# `\ud800`-style escapes that only the exact path can see.
SURROGATES = ["\ud83d", "\ude00", "\udfff"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.sampled_from(['a', 'b', ':', '"', '\\', ' ', '\u00e9', '\n', '{', '}',
                                      *SURROGATES]), max_size=8),
)
keys = st.text(alphabet=st.sampled_from(['a', 'b', ':', '"', '\\', ' ', *SURROGATES]), max_size=5)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.tuples(keys, inner), max_size=4),  # member lists may repeat keys
    ),
    max_leaves=20,
)


def write(value: Any, style: str) -> str:
    """Serialize, writing tuples-lists as objects so duplicate keys can appear."""
    sep = {
        "compact": (",", ":"),
        "spaced": (", ", ": "),
        "odd": (" ,", " : "),
        "layout": (",\n\t", "\r\n :\t"),
    }[style]
    if isinstance(value, list) and value and all(isinstance(x, tuple) for x in value):
        members = [json.dumps(k) + sep[1] + write(v, style) for k, v in value]
        return "{" + sep[0].join(members) + "}"
    if isinstance(value, list):
        return "[" + sep[0].join(write(v, style) for v in value) + "]"
    if isinstance(value, tuple):
        return "{" + json.dumps(value[0]) + sep[1] + write(value[1], style) + "}"
    return json.dumps(value, ensure_ascii=style == "spaced")


@settings(max_examples=600, deadline=None)
@given(values, st.sampled_from(["compact", "spaced", "odd", "layout"]))
def test_fast_parser_equals_exact_parser(value: Any, style: str) -> None:
    # Non-ASCII styles write surrogates raw: "surrogatepass" gives the invalid UTF-8 a log
    # written by a careless encoder holds, which both paths must refuse alike.
    data = write(value, style).encode("utf-8", "surrogatepass")
    assert outcome(loads_strict, data) == outcome(_loads_exact, data)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["compact", "spaced", "odd", "layout"]))
def test_one_piece_and_member_by_member_proofs_agree(value: Any, style: str) -> None:
    """Small texts are proved with one rewrite (and sized member by member), larger ones piece
    by piece as they are rewritten: forced either way, the same documents are accepted, with
    the same values and the same member sizes."""
    from unittest import mock

    import orjson

    import frayproof_audit.jsonio as jsonio

    data = write(value, style).encode("utf-8", "surrogatepass")

    def sized(text: bytes) -> Any:
        parsed, sizes = jsonio.loads_strict_sized(text)
        return typed(parsed), sizes

    def both() -> Any:
        try:
            return sized(data)
        except JSONProblem:
            return ("problem",)

    with mock.patch.object(jsonio, "SMALL_BYTES", 1 << 30):
        one_piece = both()
    with mock.patch.object(jsonio, "SMALL_BYTES", 0):
        piecewise = both()
    assert one_piece == piecewise
    assert outcome(jsonio.loads_strict, data)[0] == ("problem" if one_piece == ("problem",) else "ok")
    if one_piece != ("problem",) and one_piece[1] is not None:
        parsed = jsonio.loads_strict(data)
        assert one_piece[1] == {key: len(orjson.dumps(item)) for key, item in parsed.items()}


def holds_lone_surrogate(value: Any) -> bool:
    """True when a string or key of the written value keeps a surrogate once pairs are joined."""
    if isinstance(value, list):
        return any(holds_lone_surrogate(item) for item in value)
    if isinstance(value, tuple):
        return holds_lone_surrogate(value[0]) or holds_lone_surrogate(value[1])
    if not isinstance(value, str):
        return False
    joined = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return any("\ud800" <= char <= "\udfff" for char in joined)


@settings(max_examples=300, deadline=None)
@given(values)
def test_escaped_lone_surrogates_are_refused_and_pairs_read(value: Any) -> None:
    data = write(value, "spaced").encode("ascii")  # every surrogate as a \\u escape
    result = outcome(loads_strict, data)
    assert (result == ("problem",)) == (
        holds_lone_surrogate(value) or result == outcome(_loads_exact, data) == ("problem",)
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2}',
        '[{"x":{"a":1,"a":1}}]',
        '{"a" :1,"a":2}',
        '{"a":1,"a":"\\u0022:"}',
        '{"a\\\\":1,"a\\\\":2}',
        '[NaN]',
        '[Infinity]',
        '[-Infinity]',
        '[1e999]',
        '',
        '[] []',
        '{',
    ],
)
def test_rejected_documents(text: str) -> None:
    with pytest.raises(JSONProblem):
        loads_strict(text.encode())


def test_big_integers_stay_integers() -> None:
    assert loads_strict(b"[18446744073709551616, -9223372036854775809]") == [
        18446744073709551616,
        -9223372036854775809,
    ]
    assert type(loads_strict(b"[18446744073709551616]")[0]) is int


@pytest.mark.parametrize(
    "text",
    ['["\\ud800"]', '["x\\uDFFF"]', '{"\\ud83d":1}', '["\\ude00\\ud83d"]', '{"a":["\\udbff "]}'],
)
def test_lone_surrogate_escapes_are_not_text(text: str) -> None:
    with pytest.raises(JSONProblem, match=r"lone surrogate \\u[0-9a-f]{4}"):
        loads_strict(text.encode())


def test_paired_surrogate_escapes_are_one_character() -> None:
    assert loads_strict(b'["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]


def test_canonical_still_writes_lone_surrogates_from_python_callers() -> None:
    assert canonical(["\ud800"]) == '["\ud800"]'.encode("utf-8", "surrogatepass")


def test_integer_literals_over_the_conversion_limit_are_a_problem() -> None:
    with pytest.raises(JSONProblem, match="more than 4300 digits"):
        loads_strict(b"[" + b"7" * 4301 + b"]")
    assert loads_strict(b"[" + b"7" * 4300 + b"]") == [int("7" * 4300)]


@pytest.mark.parametrize("text", [b"\x0b", b" \x0c ", b"\x0b\x0c"])
def test_vertical_tab_and_form_feed_are_not_json_whitespace(text: bytes) -> None:
    with pytest.raises(JSONProblem, match="whitespace JSON does not allow"):
        loads_strict(text)


def test_nesting_limit() -> None:
    ok = b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)
    assert loads_strict(ok) is not None
    for depth in (MAX_DEPTH + 1, 100_000):
        with pytest.raises(JSONProblem, match="nested deeper"):
            loads_strict(b"[" * depth + b"]" * depth)


def test_bad_utf8() -> None:
    with pytest.raises(JSONProblem, match="UTF-8"):
        loads_strict(b'["\xff"]')


def test_canonical_is_key_order_free_and_type_strict() -> None:
    assert canonical({"b": 1, "a": [1, 2]}) == canonical({"a": [1, 2], "b": 1})
    assert canonical([1]) != canonical([1.0])
    assert canonical([0.0]) != canonical([-0.0])
    assert canonical([True]) != canonical([1])
    assert canonical([1e2]) == canonical([100.0])
    assert canonical({"k": "\u00e9"}) == '{"k":"\u00e9"}'.encode()


@pytest.mark.parametrize(
    "document",
    [
        {"a": [1, {"b": "x"}], "c": "é"},
        {"args": json.dumps({"path": "/x", "q": 'say "hi": now'}), "text": "a : b ? c : d"},
        {"k\\": "v\\\\", "nested": json.dumps(json.dumps({"deep": 1}))},
    ],
)
@pytest.mark.parametrize("writer", ["orjson", "json.dumps", "json.dumps-indent"])
def test_common_logs_never_need_the_slow_parser(
    document: Any, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson

    import frayproof_audit.jsonio as jsonio

    data = {
        "orjson": lambda d: orjson.dumps(d),
        "json.dumps": lambda d: json.dumps(d).encode(),
        "json.dumps-indent": lambda d: json.dumps(d, indent=2).encode(),
    }[writer](document)

    def refuse(_: bytes) -> Any:
        raise AssertionError("took the exact path")

    monkeypatch.setattr(jsonio, "_loads_exact", refuse)
    assert jsonio.loads_strict(data + b"\n") == document
