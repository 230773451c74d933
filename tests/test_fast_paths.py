"""The check path's fast paths equal their simple references on every input.

* `jsonio.quick_plain_copy` (one orjson round trip) returns None or exactly `plain_copy`'s copy;
* `OPENAI.load_copy` (whole list at once) detaches and validates like message-by-message copies;
* `message_identity`'s shortcut for already-normal messages equals the normalized form's bytes;
* `loads_strict_sized`'s member sizes are the compact sizes of the values, and the quote-count
  proof never accepts a duplicate key hidden by `\\u0022` escapes;
* Parquet batches shrink for big rows.
"""

from __future__ import annotations

import enum
import json
import math
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus.inputs.record_fields import json_size, parse_json_record_sized, snapshot_sizes
from frayproof_audit.corpus.inputs.shard_reader import batch_rows
from frayproof_audit.errors import InputError
from frayproof_audit.formats.openai import OPENAI, _view, message_identity
from frayproof_audit.jsonio import (
    JSONProblem,
    canonical,
    is_plain_json,
    loads_strict,
    plain_copy,
    plain_tree_copy,
    quick_plain_copy,
)
from frayproof_audit.model import MODELLED_FIELDS


class Level(enum.IntEnum):
    LOW = 1


class Colour(enum.Enum):
    RED = "red"


class Text(str):
    pass


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        return (type(value).__name__, [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


class Refused(Exception):
    pass


def reference(value: Any) -> Any:
    try:
        return ("ok", typed(plain_copy(value, Refused)))
    except Refused:
        return ("refused",)


odd_scalars = st.sampled_from([
    float("nan"), float("inf"), -0.0, 2**70, -(2**64), Level.LOW, Colour.RED, Text("t"),
    uuid.UUID(int=5), "\ud800", b"bytes", {1, 2}, 10**30 + 0.5,
])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63),
                    st.floats(allow_nan=False), st.text(max_size=6), odd_scalars)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_quick_plain_copy_is_plain_copy_or_undecided(value: Any) -> None:
    quick = quick_plain_copy(value)
    if quick is not None:
        assert ("ok", typed(quick)) == reference(value)


def containers(value: Any) -> list[Any]:
    """Every list and dict in `value`, each time it occurs (shared ones more than once)."""
    found = [value] if type(value) in (dict, list) else []
    if type(value) in (dict, list, tuple):
        for item in value.values() if type(value) is dict else value:
            found += containers(item)
    return found


def leaves(value: Any) -> list[Any]:
    if type(value) in (dict, list, tuple):
        return [leaf for item in (value.values() if type(value) is dict else value)
                for leaf in leaves(item)]
    return [value]


def sharing(value: Any, pick: int, in_dict: bool) -> Any:
    """`value` with one of its containers placed a second time, in a list or a dict (so it is
    no tree)."""
    inner = containers(value)
    if not inner:
        return value
    again = inner[pick % len(inner)]
    return {"a": value, "b": again} if in_dict else [value, again]


edge_scalars = st.sampled_from([2**64 - 1, 2**64, -(2**63), -(2**63) - 1, "caf\xe9", "\udc80x",
                                "\U0001f600", 1.5, -0.0, True, None])
tree_values = st.recursive(
    st.one_of(scalars, edge_scalars),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3),
                                  st.sampled_from(["\ud800", "\xe9t\xe9", Text("k")])),
                        inner, max_size=3),
    ),
    max_leaves=12,
)


@pytest.mark.parametrize("value", [
    ["\udc80x"], {"k": "\ud800"}, {"\ud800": 1}, [2**64], {"k": -(2**63) - 1}, {1: "a"},
    {Text("k"): 1}, [Text("t")], [float("nan")], {"k": float("inf")}, [(1, 2)], [{1, 2}],
    [Colour.RED], [uuid.UUID(int=5)], [b"bytes"],
])
def test_plain_tree_copy_refuses_what_is_plain_json_refuses(value: Any) -> None:
    assert not is_plain_json(value)
    assert plain_tree_copy(value) is None
    assert plain_tree_copy([["x", value]]) is None and plain_tree_copy({"deep": [value]}) is None


@pytest.mark.parametrize("value", [["caf\xe9", "\U0001f600"], {"\xe9t\xe9": 2**64 - 1},
                                   [-(2**63), -0.0, 1e308, None, True, {"a": []}]])
def test_plain_tree_copy_accepts_what_is_plain_json_accepts(value: Any) -> None:
    assert is_plain_json(value)
    assert plain_tree_copy(value) == value


@pytest.mark.parametrize("depth", [253, 254, 255, 256])
@pytest.mark.parametrize("kind", ["list", "dict"])
def test_plain_tree_copy_refuses_the_nesting_orjson_refuses(depth: int, kind: str) -> None:
    value: Any = [] if kind == "list" else {}
    inner = value
    for _ in range(depth - 1):
        deeper: Any = [] if kind == "list" else {}
        if kind == "list":
            inner.append(deeper)
        else:
            inner["k"] = deeper
        inner = deeper
    assert (plain_tree_copy(value) is not None) == is_plain_json(value) == (depth <= 254)


@settings(max_examples=300, deadline=None)
@given(tree_values, st.sampled_from([None, False, True]), st.integers(0, 20))
def test_plain_tree_copy_is_deepcopy_of_a_plain_tree_or_undecided(
    value: Any, share: bool | None, pick: int
) -> None:
    """A copy only of plain JSON (is_plain_json) in which no container occurs twice, and then
    deepcopy's copy exactly: equal with the same types, fresh containers, the same leaves."""
    import copy

    value = value if share is None else sharing(value, pick, share)
    copied = plain_tree_copy(value)
    found = containers(value)
    tree = len({id(item) for item in found}) == len(found)
    if not (is_plain_json(value) and tree):
        assert copied is None
        return
    assert copied is not None
    assert typed(copied) == typed(copy.deepcopy(value))
    assert not {id(item) for item in containers(copied)} & {id(item) for item in found}
    assert all(mine is theirs for mine, theirs in zip(leaves(copied), leaves(value), strict=True))


@settings(max_examples=150, deadline=None)
@given(st.lists(values, max_size=4))
def test_load_copy_equals_message_by_message(items: list[Any]) -> None:
    messages = [{"role": "user", "content": "x", "meta": item} for item in items]
    try:
        expected: Any = [plain_copy([m], Refused)[0] for m in messages]
    except Refused:
        expected = "refused"
    try:
        loaded = OPENAI.load_copy(messages)
    except InputError:
        assert expected == "refused"
    else:
        assert typed(loaded.wire) == typed(expected)
        assert loaded.views == [_view(m, i) for i, m in enumerate(expected)]


def reference_identity(message: dict[str, Any]) -> bytes:
    """Spec form: metadata minus null optional keys, role, content, calls if any, id/refusal if set."""
    form = {k: v for k, v in message.items() if k not in MODELLED_FIELDS
            and not (v is None and k in ("name", "audio", "annotations", "function_call"))}
    form["role"] = message.get("role") or ""
    form["content"] = message.get("content")
    if message.get("tool_calls"):
        form["tool_calls"] = [
            {**c, "id": c.get("id", ""), "type": c.get("type", ""),
             "function": {**(c.get("function") or {}), "name": (c.get("function") or {}).get("name", ""),
                          "arguments": (c.get("function") or {}).get("arguments", "")}}
            for c in message["tool_calls"]]
    for key in ("tool_call_id", "refusal"):
        if message.get(key) is not None:
            form[key] = message[key]
    return canonical(form)


field_values = st.one_of(st.none(), st.text(max_size=4), st.integers(0, 2), st.just(1.0),
                         st.booleans(), st.lists(st.dictionaries(st.just("type"), st.just("text"))))
functions = st.dictionaries(st.sampled_from(["name", "arguments", "strict"]), field_values, max_size=3)
calls = st.builds(
    lambda fields, function: {**fields, **({} if function is None else {"function": function})},
    st.dictionaries(st.sampled_from(["id", "type", "index"]), field_values, max_size=3),
    st.one_of(st.none(), functions),
)
messages = st.builds(
    lambda fields, tool_calls: {**fields, **({} if tool_calls == "absent" else {"tool_calls": tool_calls})},
    st.dictionaries(
        st.sampled_from(["role", "content", "tool_call_id", "refusal", "name", "audio", "extra"]),
        field_values, max_size=5),
    st.one_of(st.just("absent"), st.none(), st.lists(calls, max_size=2)),
)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_message_identity_shortcut_equals_the_normalized_form(message: dict[str, Any]) -> None:
    assert message_identity(message) == reference_identity(message)


record_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False,
              allow_infinity=False), st.text(alphabet='ab"\\:é\u2028 ', max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner,
                                                                         max_size=3)),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["before", "after", "pair_id", "x"]), record_values, min_size=1),
       st.sampled_from(["orjson", "json", "json-ascii"]))
def test_member_sizes_are_compact_sizes(record: dict[str, Any], writer: str) -> None:
    data = {"orjson": orjson.dumps(record), "json": json.dumps(record, ensure_ascii=False).encode(),
            "json-ascii": json.dumps(record).encode()}[writer]
    value, sizes = parse_json_record_sized(data)
    assert value == record
    if sizes is not None:
        assert sizes == {key: json_size(item) for key, item in record.items()}
    before, after = record.get("before"), record.get("after")
    got = snapshot_sizes(value, sizes, ("before", "after"), (value.get("before"), value.get("after")))
    assert got == (json_size(before), json_size(after))


@pytest.mark.parametrize("text", [
    b'{"k":1,"k":"\\u0022\\u0022"}',  # quote counts of text and rewrite agree: only the escape tells
    b'{"k": 1, "k": "\\u0022\\u0022"}',
    b'[{"a":{"b":1,"b":"\\u0022\\"\\u0022"}}]',
])
def test_duplicate_keys_behind_quote_escapes_are_found(text: bytes) -> None:
    with pytest.raises(JSONProblem, match="duplicate key"):
        loads_strict(text)


def test_parquet_batches_shrink_for_big_rows() -> None:
    assert batch_rows(1000, 10) == 256
    assert batch_rows(10 * 2**20 * 100, 100) == 1  # 10 MiB rows: one at a time
    assert batch_rows(2**20 * 100, 100) == 8
    assert batch_rows(0, 0) == 256


def test_audit_sizes_and_hashes_match_the_lines(tmp_path: Any) -> None:
    """Through a real audit: `bytes_before`/`bytes_after` are the compact sizes whichever writer
    wrote the line (CRLF and a BOM included), and `record_sha256` hashes the line without its
    ending; a truncated line's reason names its own line, not the next."""
    import hashlib
    import random

    from frayproof_audit.corpus import audit, read_table
    from sessiongen import realistic

    records = [realistic.generate_pair(random.Random(seed), n_messages=12) for seed in range(3)]
    lines = [orjson.dumps(records[0]), json.dumps(records[1]).encode(),
             json.dumps(records[2], ensure_ascii=False, separators=(" , ", " : ")).encode(),
             b'{"before": [']
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
    out = tmp_path / "out"
    audit(str(path), None, str(out), jobs=1, mutate=False, fail_on=())
    rows = {row["source_row"]: row for row in read_table(out, "pairs").collect().to_dicts()}
    for number, record in enumerate(records, start=1):
        row = rows[number]
        assert row["status"] != "input_error", row["input_error"]
        assert row["bytes_before"] == len(orjson.dumps(record["before"]))
        assert row["bytes_after"] == len(orjson.dumps(record["after"]))
        assert row["record_sha256"] == hashlib.sha256(lines[number - 1]).hexdigest()
    assert "(line 1, column 13)" in rows[4]["input_error"]


def loaded_outcome(load: Any, messages: Any, fmt: str) -> Any:
    from frayproof_audit.loaded import Loaded

    try:
        loaded: Loaded = load(messages, fmt)
    except InputError as exc:
        return ("error", str(exc))
    return ("ok", typed(loaded.wire), loaded.views, loaded.origins, loaded.notes, loaded.guessed)


wire_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.5, float("nan")]),
              st.sampled_from(["user", "assistant", "tool", "system", "text", "c1", "", "\ud800"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["role", "content", "type", "text", "id", "tool_call_id",
                                         "tool_calls", "function", "name", "arguments", "x"]),
                        inner, max_size=4),
    ),
    max_leaves=14,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(wire_values, max_size=4), st.sampled_from(["openai", "anthropic", "auto",
                                                           "openai-responses", "otel-genai"]))
def test_load_plain_equals_the_detaching_load(messages: list[Any], fmt: str) -> None:
    """`check` and `validate` read a plain list in place: the same `Loaded`, or the same error,
    as the detached copy, in every format."""
    from frayproof_audit.snapshot import load_list, load_plain

    assert loaded_outcome(load_plain, messages, fmt) == loaded_outcome(load_list, messages, fmt)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["before", "after", "x"]),
                       st.lists(record_values, max_size=3) | record_values, min_size=1),
       st.sampled_from(["orjson", "json", "dup"]))
def test_split_rewrite_proves_and_sizes_like_the_whole_one(record: dict[str, Any], writer: str) -> None:
    """Long texts are rewritten element by element (`SPLIT_BYTES`): the same verdicts, values
    and sizes as the exact parser and a whole rewrite; forced here on short texts."""
    from frayproof_audit import jsonio

    data = {"orjson": orjson.dumps(record), "json": json.dumps(record).encode(),
            "dup": b'{"x":1,' + orjson.dumps(record)[1:]}[writer]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonio, "SPLIT_BYTES", 0)
        try:
            value, sizes = jsonio.loads_strict_sized(data)
        except JSONProblem:
            value, sizes = "problem", None
    try:
        expected: Any = jsonio._loads_exact(data)
    except JSONProblem:
        expected = "problem"
    assert typed(value) == typed(expected)
    if sizes is not None:
        assert sizes == {key: json_size(item) for key, item in expected.items()}
