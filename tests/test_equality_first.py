"""Comparing messages by Python equality first decides exactly as comparing their keys.

`Loaded.same_key` answers "has after message j before message i's key?" by `==` where that is
safe (no numbers or booleans, which `==` confuses across types) and by the keys otherwise;
retention and `pinned_content` match messages by it, and retention reads before's keys through
`Loaded.keys`, computed on first use. Both must agree with the plain key comparison on every
input, the adversarial ones (`True` vs `1`, `1` vs `1.0`, `0.0` vs `-0.0`, big integers,
nested metadata, key order, unicode) above all. `last_closed_exchanges` (the retained exchanges,
found from the end) equals the tail of `closed_exchanges`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.checks.pinned_content import _unmatched
from frayproof_audit.equivalence import COMPARISONS
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.loaded import Loaded, textual
from frayproof_audit.prepared import closed_exchanges, last_closed_exchanges

leaves = st.one_of(
    st.sampled_from([True, False, 1, 0, -1, 1.0, 0.0, -0.0, 2**70, -(2**64), 1e300, "1", "true",
                     "", "é", "\u2028", "日本", None]),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=8,
)
parts = st.builds(lambda text, extra: {"type": "text", "text": text, **extra},
                  st.text(max_size=4), st.dictionaries(st.sampled_from(["cache", "n"]), values, max_size=1))
calls = st.builds(
    lambda call_id, args, extra: {"id": call_id, "type": "function",
                                  "function": {"name": "f", "arguments": args}, **extra},
    st.sampled_from(["c1", "c2"]), st.sampled_from(["{}", '{"a": 1}', '{"a":1.0}']),
    st.dictionaries(st.just("index"), values, max_size=1),
)
messages = st.builds(
    lambda role, content, calls, extra: {
        "role": role, "content": content, **extra,
        **({"tool_calls": calls} if calls and role == "assistant" else {})},
    st.sampled_from(["system", "user", "assistant"]),
    st.one_of(st.none(), st.text(max_size=6), st.lists(parts, max_size=2)),
    st.lists(calls, max_size=2),
    st.dictionaries(st.sampled_from(["name", "extra", "meta"]), values, max_size=2),
)

_SWAPS: dict[str, Callable[[Any], Any]] = {
    "same": lambda leaf: leaf,
    "bool-int": lambda leaf: int(leaf) if type(leaf) is bool else (
        bool(leaf) if type(leaf) is int and leaf in (0, 1) else leaf),
    "int-float": lambda leaf: float(leaf) if type(leaf) is int and abs(leaf) < 2**53 else (
        int(leaf) if type(leaf) is float and leaf.is_integer() and abs(leaf) < 2**53 else leaf),
    "zero-sign": lambda leaf: -leaf if type(leaf) is float and leaf == 0.0 else leaf,
    "none-dropped": lambda leaf: leaf,
}


def twisted(value: Any, swap: Callable[[Any], Any], reverse: bool) -> Any:
    """A deep copy of `value` with every leaf passed through `swap` and, when `reverse`, every
    object's keys in the opposite order."""
    if type(value) is dict:
        items = [(key, twisted(item, swap, reverse)) for key, item in value.items()]
        return dict(reversed(items) if reverse else items)
    if type(value) is list:
        return [twisted(item, swap, reverse) for item in value]
    return swap(value)


def loaded(wire: list[dict[str, Any]]) -> Loaded:
    return OPENAI.load_copy(json.loads(json.dumps(wire)))


@settings(max_examples=150, deadline=None)
@given(messages, st.sampled_from(sorted(_SWAPS)), st.booleans(), st.sampled_from(COMPARISONS),
       st.booleans(), st.one_of(st.none(), messages))
def test_same_key_equals_the_key_comparison(message: dict[str, Any], swap: str, reverse: bool,
                                           compare: str, cached: bool,
                                           other: dict[str, Any] | None) -> None:
    before = loaded([message])
    if other is not None:
        after_message = other
    else:
        after_message = twisted(message, _SWAPS[swap], reverse)
        if swap == "none-dropped":  # null optional keys: unequal dicts, equal identities
            after_message = {**after_message, "name": None}
    after = loaded([after_message])
    if cached:
        after.key(0, compare)
        before.key(0, compare)
    expected = after.key(0, compare) == before.key(0, compare)
    fresh_after, fresh_before = (after, before) if cached else (loaded(after.wire), loaded(before.wire))
    assert fresh_after.same_key(0, fresh_before, 0, compare) == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, min_size=1, max_size=3), st.data(), st.sampled_from(COMPARISONS))
def test_pin_matching_equals_counting_keys(pool: list[dict[str, Any]], data: st.DataObject,
                                           compare: str) -> None:
    pool = [{**message, "role": "system"} for message in pool]
    picks = st.lists(st.tuples(st.integers(0, len(pool) - 1), st.sampled_from(sorted(_SWAPS))),
                     max_size=5)
    before = loaded([pool[i] for i, _ in data.draw(picks)])
    after = loaded([twisted(pool[i], _SWAPS[swap], False) for i, swap in data.draw(picks)])
    wanted = tuple((index, before.key(index, compare)) for index in range(len(before)))
    available: dict[bytes, int] = {}
    for index in range(len(after)):
        available[after.key(index, compare)] = available.get(after.key(index, compare), 0) + 1
    expected = []
    for index, key in wanted:
        if available.get(key, 0) > 0:
            available[key] -= 1
        else:
            expected.append(index)
    indexes = tuple(index for index, _ in wanted)
    fresh, fresh_before = loaded(after.wire), loaded(before.wire)  # no key computed yet
    # Equality decides where it can, the keys (computed on first use) where it cannot ...
    lazy_keys = fresh_before.keys_of(indexes, compare)
    assert _unmatched(fresh, "system", compare, indexes, lazy_keys, fresh_before) == expected
    # ... and without the before snapshot the keys alone decide, counted.
    assert _unmatched(loaded(after.wire), "system", compare, indexes,
                      tuple(key for _, key in wanted), None) == expected


def test_textual_refuses_every_number_and_boolean() -> None:
    assert textual({"a": ["x", None, {"b": ""}]})
    for leaf in (True, False, 0, 1, 1.0, -0.0, 2**70):
        assert not textual({"a": [{"b": leaf}]})


@settings(max_examples=50, deadline=None)
@given(st.lists(messages, max_size=5), st.integers(0, 5), st.integers(0, 5),
       st.sampled_from(COMPARISONS))
def test_key_span_is_the_keys(wire: list[dict[str, Any]], start: int, stop: int, compare: str) -> None:
    snapshot = loaded(wire)
    start, stop = min(start, len(wire)), min(max(start, stop), len(wire))
    expected = tuple(snapshot.key(index, compare) for index in range(start, stop))
    span = loaded(wire).keys(start, stop, compare)
    assert len(span) == len(expected)
    assert tuple(span) == expected == span[:]
    assert [span[k] for k in range(-len(span), len(span))] == list(expected * 2)
    assert span == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant", "tool", "system", "developer"]), max_size=14),
       st.integers(1, 4))
def test_last_closed_exchanges_are_the_last_of_all(roles: list[str], count: int) -> None:
    assert last_closed_exchanges(roles, count) == closed_exchanges(roles)[-count:]


@settings(max_examples=60, deadline=None)
@given(st.lists(messages, min_size=1, max_size=5), st.data(), st.sampled_from(COMPARISONS))
def test_lazy_keys_are_the_keys_and_computed_only_when_read(
        pool: list[dict[str, Any]], data: st.DataObject, compare: str) -> None:
    """`Loaded.keys_of` / `Loaded.keys` (what the prepared before facts hold for pins, the
    latest user message and the retained exchanges) read as the keys themselves, in order,
    negative positions and slices included, and compute nothing before they are read."""
    snapshot = loaded(pool)
    indexes = tuple(data.draw(st.lists(st.integers(0, len(pool) - 1), max_size=6)))
    lazy = snapshot.keys_of(indexes, compare)
    untouched = all(snapshot.known_identity(i) is None for i in range(len(pool)))
    assert untouched and snapshot._equivalents is None
    plain = tuple(loaded(pool).key(index, compare) for index in indexes)
    assert len(lazy) == len(plain)
    assert tuple(lazy) == plain and lazy == plain and lazy[::-1] == plain[::-1]
    if plain:
        assert lazy[-1] == plain[-1] and lazy[0] == plain[0]
    start, stop = sorted(data.draw(st.lists(st.integers(0, len(pool)), min_size=2, max_size=2)))
    assert tuple(snapshot.keys(start, stop, compare)) == tuple(
        loaded(pool).key(index, compare) for index in range(start, stop))


def _textual_by_stack(value: Any) -> bool:
    """The plain reading of `textual`: walk every value with a stack of pending ones."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is not str and item is not None:
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(values)
def test_textual_reads_as_walking_every_value(value: Any) -> None:
    assert textual(value) == _textual_by_stack(value)


def test_textual_and_equality_first_hold_at_the_deepest_nesting_json_allows() -> None:
    from frayproof_audit.jsonio import MAX_DEPTH

    def nested(leaf: Any) -> Any:
        value: Any = leaf
        for _ in range(MAX_DEPTH - 3):  # the message and its list hold the rest of the depth
            value = [value]
        return value

    assert textual(nested("x")) and not textual(nested(1))
    text = loaded([{"role": "user", "content": "hi", "meta": nested("x")}])
    number = loaded([{"role": "user", "content": "hi", "meta": nested(1.0)}])
    assert text.same_key(0, loaded([{"role": "user", "content": "hi", "meta": nested("x")}]), 0, "exact")
    # equal by ==, but the float cannot be proven by equality: the keys decide
    other = loaded([{"role": "user", "content": "hi", "meta": nested(1)}])
    assert number.same_key(0, other, 0, "exact") == (number.key(0, "exact") == other.key(0, "exact"))
