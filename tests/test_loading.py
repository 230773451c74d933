"""Snapshot loading: what is an input error, and message identity ."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import InputError, Snapshot, check, load_snapshot, validate
from frayproof_audit.jsonio import MAX_DEPTH
from frayproof_audit.model import Message, ToolCall
from frayproof_audit.snapshot import load_list
from tests.helpers import call, conditions, make_contract, result, tool_call, user

# --- sources -------------------------------------------------------------------------

NOT_SNAPSHOTS = {
    "dict": {}, "none": None, "int": 3, "tuple": (), "iterator": iter([user()]),
    "bytes": b"[]", "set": set(),
}


@pytest.mark.parametrize("source", NOT_SNAPSHOTS.values(), ids=NOT_SNAPSHOTS.keys())
def test_non_list_sources_are_input_errors(source: Any) -> None:
    with pytest.raises(InputError, match="array of message objects"):
        validate(source)


def test_a_string_is_always_a_path_never_json_text() -> None:
    with pytest.raises(InputError, match=r"Cannot read snapshot '\[\]'"):
        validate("[]")


def test_path_objects_and_strings_are_read(write_json: Callable[..., Path]) -> None:
    path = write_json([user()])
    assert validate(path).passed
    assert validate(str(path)).passed


def test_list_and_dict_subclasses_are_accepted() -> None:
    class Messages(list[Any]):
        pass

    class Wire(dict[str, Any]):
        pass

    assert validate(Messages([Wire(role="user", content="x")])).passed


# --- files ---------------------------------------------------------------------------

BAD_FILES = {
    "syntax-error": b"[",
    "open-brace": b"{",
    "object-top-level": b"{}",
    "string-top-level": b'"[]"',
    "number-top-level": b"3",
    "trailing-data": b"[] trailing",
    "second-document": b"[] []",
    "empty-file": b"",
    "whitespace-only": b" \n\t",
    "bad-utf8": b'[{"role": "user", "content": "\xff"}]',
    "utf16": "[]".encode("utf-16"),
    "two-boms": b"\xef\xbb\xbf\xef\xbb\xbf[]",
    "nan": b'[{"role": "user", "content": "x", "n": NaN}]',
    "infinity": b'[{"role": "user", "content": "x", "n": Infinity}]',
    "minus-infinity": b'[{"role": "user", "content": "x", "n": -Infinity}]',
    "overflowing-float": b'[{"role": "user", "content": "x", "n": 1e999}]',
    "nan-message": b"[NaN]",
    "single-quotes": b"[{'role': 'user'}]",
    "trailing-comma": b'[{"role": "user", "content": "x"},]',
    "raw-control-char": b'[{"role": "user", "content": "a\tb"}]',
    "comment": b'[] // nothing',
}


@pytest.mark.parametrize("data", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_malformed_files_are_input_errors(data: bytes, write_json: Callable[..., Path]) -> None:
    path = write_json(data)
    with pytest.raises(InputError, match=r"snapshot '.*'"):
        validate(path)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"Cannot read snapshot '.*nope\.json'"):
        validate(tmp_path / "nope.json")


def test_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Cannot read snapshot"):
        validate(tmp_path)


DUPLICATES = {
    "message-level": b'[{"role": "user", "content": "x", "role": "user"}]',
    "in-a-content-block": b'[{"role": "user", "content": [{"type": "text", "text": "a", "text": "b"}]}]',
    "deep-in-metadata": b'[{"role": "user", "content": "x", "m": {"a": [{"b": {"c": 1, "c": 1}}]}}]',
    "in-a-tool-call": b'[{"role": "assistant", "tool_calls": [{"id": "a", "id": "b"}]}]',
    "in-a-function": b'[{"role": "assistant", "tool_calls": [{"function": {"name": "r", "name": "r"}}]}]',
    "escaped-spelling": b'[{"role": "user", "content": "x", "\\u0072ole": "user"}]',
    "space-before-colon": b'[{"role" : "user", "content" : "x", "role" : "user"}]',
    "in-a-later-message": b'[{"role": "user", "content": "x"}, {"k": 1, "k": 2}]',
}


@pytest.mark.parametrize("data", DUPLICATES.values(), ids=DUPLICATES.keys())
def test_duplicate_keys_at_any_depth_are_input_errors(
    data: bytes, write_json: Callable[..., Path]
) -> None:
    with pytest.raises(InputError, match="duplicate key"):
        validate(write_json(data))


def test_duplicate_keys_are_found_before_per_message_checks(write_json: Callable[..., Path]) -> None:
    # Message 0 is malformed, but the duplicate in message 1 is reported: the file is rejected
    # as a whole before any message is looked at.
    data = b'[{"role": 2}, {"role": "user", "content": "x", "content": "y"}]'
    with pytest.raises(InputError, match="duplicate key 'content'"):
        validate(write_json(data))


def test_bom_and_non_ascii_load(write_json: Callable[..., Path]) -> None:
    messages = [{"role": "system", "content": "Ne jamais écrire en production ✓ 漢字"}]
    path = write_json(b"\xef\xbb\xbf" + json.dumps(messages, ensure_ascii=False).encode())
    assert load_snapshot(path).messages[0].content == messages[0]["content"]


def test_big_integers_load_exactly(write_json: Callable[..., Path]) -> None:
    path = write_json(b'[{"role": "user", "content": "x", "n": 123456789012345678901234567890}]')
    assert load_snapshot(path).messages[0].metadata["n"] == 123456789012345678901234567890


def test_lone_surrogate_escapes_are_an_input_error(write_json: Callable[..., Path]) -> None:
    # Valid JSON syntax, but not Unicode text: no UTF-8 table, file or terminal can hold it.
    path = write_json(b'[{"role": "user", "content": "\\ud800 x"}, {"role": "user", "content": "\\udfff"}]')
    with pytest.raises(InputError, match=r"lone surrogate \\ud800"):
        load_snapshot(path)
    paired = write_json(b'[{"role": "user", "content": "\\ud83d\\ude00"}]')
    assert load_snapshot(paired).messages[0].content == "\U0001f600"


def nested(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_deep_nesting_is_an_input_error_not_a_crash(write_json: Callable[..., Path]) -> None:
    """frayproof's B1: 100k nested arrays crash it; for us anything over 512 levels is bad input."""
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(InputError, match="nested deeper"):
        validate(write_json(deep))
    with pytest.raises(InputError, match="nested deeper"):
        validate([{"role": "user", "content": "x", "m": nested(100_000)}])


@pytest.mark.parametrize("api", [False, True], ids=["file", "list"])
def test_depth_limit_counts_the_outer_array_in_files_and_lists(
    api: bool, write_json: Callable[..., Path]
) -> None:
    def snapshot(levels: int) -> Any:  # levels counted from the outer array
        messages = [{"role": "user", "content": "x", "m": nested(levels - 2)}]
        return messages if api else write_json(messages)

    assert validate(snapshot(MAX_DEPTH)).passed
    with pytest.raises(InputError, match="nested deeper"):
        validate(snapshot(MAX_DEPTH + 1))


# --- per message ---------------------------------------------------------------------

def calls(*items: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(items)}


PER_MESSAGE_ERRORS: dict[str, tuple[Any, str]] = {
    "string-message": ("text", r"messages\[0\] must be an object"),
    "null-message": (None, r"messages\[0\] must be an object"),
    "list-message": ([], r"messages\[0\] must be an object"),
    "nan-message": (float("nan"), r"messages\[0\] must be an object"),
    "nan-in-metadata": ({"role": "user", "content": "x", "m": [float("nan")]}, r"messages\[0\]"),
    "infinity-in-content-block": (
        {"role": "user", "content": [{"type": "x", "v": float("inf")}]}, r"messages\[0\]"),
    "set-value": ({"role": "user", "content": "x", "m": {1, 2}}, r"messages\[0\]"),
    "non-string-key": ({"role": "user", "content": "x", 1: "one"}, r"messages\[0\]"),
    "object-value": ({"role": "user", "content": "x", "m": object()}, r"messages\[0\]"),
    "role-int": ({"role": 2, "content": "x"}, r"messages\[0\]\.role"),
    "role-list": ({"role": ["user"], "content": "x"}, r"messages\[0\]\.role"),
    "role-bool": ({"role": True, "content": "x"}, r"messages\[0\]\.role"),
    "content-int": ({"role": "user", "content": 3}, r"messages\[0\]\.content"),
    "content-bool": ({"role": "user", "content": False}, r"messages\[0\]\.content"),
    "content-object": ({"role": "user", "content": {"type": "text", "text": "x"}},
                       r"messages\[0\]\.content"),
    "content-string-item": ({"role": "user", "content": ["x"]}, r"messages\[0\]\.content\[0\]"),
    "content-null-item": ({"role": "user", "content": [{"type": "text", "text": "a"}, None]},
                          r"messages\[0\]\.content\[1\]"),
    "block-type-null": ({"role": "user", "content": [{"type": None}]},
                        r"messages\[0\]\.content\[0\]\.type"),
    "block-type-int": ({"role": "user", "content": [{"type": 1}]}, r"content\[0\]\.type"),
    "block-type-bool": ({"role": "user", "content": [{"type": True}]}, r"content\[0\]\.type"),
    "block-type-list": ({"role": "user", "content": [{"type": []}]}, r"content\[0\]\.type"),
    "block-type-object": ({"role": "user", "content": [{"type": {}}]}, r"content\[0\]\.type"),
    "tool-calls-string": ({"role": "assistant", "tool_calls": "read"}, r"\.tool_calls"),
    "tool-calls-object": ({"role": "assistant", "tool_calls": {}}, r"\.tool_calls"),
    "tool-call-null": (calls(None), r"\.tool_calls\[0\]"),
    "tool-call-string": (calls("read"), r"\.tool_calls\[0\]"),
    "function-null": (calls({"id": "a", "function": None}), r"\.tool_calls\[0\]\.function"),
    "function-string": (calls({"id": "a", "function": "read"}), r"\.tool_calls\[0\]\.function"),
    "call-id-int": (calls({**tool_call("a"), "id": 3}), r"\.tool_calls\[0\]\.id"),
    "call-id-null": (calls({**tool_call("a"), "id": None}), r"\.tool_calls\[0\]\.id"),
    "name-null": (calls({"id": "a", "function": {"name": None}}), r"\.function\.name"),
    "arguments-object": (calls({"id": "a", "function": {"name": "r", "arguments": {}}}),
                         r"\.function\.arguments"),
    "call-type-null": (calls({**tool_call("a"), "type": None}), r"\.tool_calls\[0\]\.type"),
    "calls-on-user-parsed-too": ({"role": "user", "content": "x", "tool_calls": [{"id": 1}]},
                                 r"\.tool_calls\[0\]\.id"),
    "tool-call-id-int": ({"role": "tool", "content": "x", "tool_call_id": 4}, r"\.tool_call_id"),
    "refusal-int": ({"role": "assistant", "content": "x", "refusal": 4}, r"\.refusal"),
    "refusal-list": ({"role": "assistant", "content": "x", "refusal": []}, r"\.refusal"),
}


@pytest.mark.parametrize("message, where", PER_MESSAGE_ERRORS.values(), ids=PER_MESSAGE_ERRORS.keys())
def test_per_message_input_errors(message: Any, where: str) -> None:
    with pytest.raises(InputError, match=where):
        validate([message])
    with pytest.raises(InputError, match=where.replace(r"messages\[0\]", r"messages\[1\]")):
        check([user()], [user(), message])
    with pytest.raises(InputError):
        check([message], [user()])


# Values JSON cannot spell are not file cases; non-finite numbers fail while parsing a file
# (see BAD_FILES), before any message is looked at.
NOT_IN_FILES = {"set-value", "non-string-key", "object-value", "nan-message", "nan-in-metadata",
                "infinity-in-content-block"}
IN_FILES = {k: v for k, v in PER_MESSAGE_ERRORS.items() if k not in NOT_IN_FILES}


@pytest.mark.parametrize("message, where", IN_FILES.values(), ids=IN_FILES.keys())
def test_per_message_input_errors_in_files(
    message: Any, where: str, write_json: Callable[..., Path]
) -> None:
    path = write_json([user(), message])
    with pytest.raises(InputError, match=where.replace(r"messages\[0\]", r"messages\[1\]")):
        validate(path)


def test_the_first_bad_message_is_reported() -> None:
    with pytest.raises(InputError, match=r"messages\[1\]\.content"):
        validate([user(), {"role": "user", "content": 1}, {"role": 2}])


def test_role_null_is_a_missing_role_not_an_input_error() -> None:
    """frayproof's B3, fixed: `role: null` and no role are the same structure violation."""
    absent = validate([{"content": "x"}])
    null = validate([{"role": None, "content": "x"}])
    assert conditions(absent) == conditions(null) == ["ST-ROLE"]


NOT_INPUT_ERRORS = {
    "unknown-role": {"role": "alien", "content": "x"},
    "empty-role": {"role": "", "content": "x"},
    "missing-role": {"content": "x"},
    "missing-call-ids": calls({"type": "function", "function": {"name": "r", "arguments": ""}}),
    "custom-call-type": calls({**tool_call("a"), "type": "custom"}),
    "empty-function-name": calls(tool_call("a", name="")),
    "missing-function": calls({"id": "a", "type": "function"}),
    "null-content": {"role": "user", "content": None},
    "calls-on-a-tool": {**result("a"), "tool_calls": [tool_call("b")]},
    "blank-tool-call-id": {"role": "tool", "content": "x", "tool_call_id": " "},
    "block-without-type": {"role": "user", "content": [{"text": "x"}]},
    "unknown-block-type": {"role": "user", "content": [{"type": "hologram"}]},
    "unknown-keys": {"role": "user", "content": "x", "audio": {"id": "a"}, "function_call": None},
}


@pytest.mark.parametrize("message", NOT_INPUT_ERRORS.values(), ids=NOT_INPUT_ERRORS.keys())
def test_shape_problems_that_are_violations_or_nothing(message: Any) -> None:
    validate([message])  # no InputError


def test_metadata_keeps_unknown_keys_verbatim() -> None:
    message = {"role": "assistant", "content": "x", "name": "bot", "audio": None,
               "annotations": [{"type": "url_citation"}], "function_call": None, "z": {"k": [1]}}
    loaded = load_snapshot([message]).messages[0]
    assert dict(loaded.metadata) == {k: v for k, v in message.items() if k not in ("role", "content")}


def test_tuples_in_api_lists_become_arrays() -> None:
    message = {"role": "user", "content": ({"type": "text", "text": "x"},)}
    snapshot = load_snapshot([message])
    assert snapshot.messages[0].content == [{"type": "text", "text": "x"}]


def test_loading_detaches_from_the_caller() -> None:
    messages = [user("original")]
    snapshot = load_snapshot(messages)
    messages[0]["content"] = "edited"
    assert snapshot.messages[0].content == "original"


# --- identity ------------------------------------------------------------------------

def identical(a: Any, b: Any) -> bool:
    loaded = load_list([a, b])
    return loaded.identity(0) == loaded.identity(1)


IDENTICAL = {
    "key-order": ({"role": "user", "content": "x", "name": "a"},
                  {"name": "a", "content": "x", "role": "user"}),
    "nested-key-order": (
        {"role": "user", "content": [{"type": "text", "text": "x", "meta": {"a": 1, "b": 2}}]},
        {"role": "user", "content": [{"meta": {"b": 2, "a": 1}, "text": "x", "type": "text"}]}),
    "call-key-order": (calls({"id": "a", "type": "function", "function": {"name": "r", "arguments": ""}}),
                       calls({"function": {"arguments": "", "name": "r"}, "type": "function", "id": "a"})),
    "absent-content-is-null": ({"role": "assistant"}, {"role": "assistant", "content": None}),
    "null-name": ({"role": "user", "content": "x", "name": None}, user("x")),
    "null-audio-annotations-function-call": (
        {"role": "assistant", "content": "x", "audio": None, "annotations": None,
         "function_call": None}, {"role": "assistant", "content": "x"}),
    "null-tool-calls": ({"role": "assistant", "content": "x", "tool_calls": None},
                        {"role": "assistant", "content": "x"}),
    "empty-tool-calls": ({"role": "assistant", "content": "x", "tool_calls": []},
                         {"role": "assistant", "content": "x", "tool_calls": None}),
    "null-tool-call-id": ({"role": "user", "content": "x", "tool_call_id": None}, user("x")),
    "null-refusal": ({"role": "assistant", "content": "x", "refusal": None},
                     {"role": "assistant", "content": "x"}),
    "absent-call-fields": (calls({}), calls({"id": "", "type": "", "function": {}})),
    "absent-function-fields": (calls({"id": "a", "function": {}}),
                               calls({"id": "a", "type": "", "function": {"name": "", "arguments": ""}})),
    "tuple-and-list": ({"role": "user", "content": ({"type": "text", "text": "x"},)},
                       {"role": "user", "content": [{"type": "text", "text": "x"}]}),
    "null-role-and-missing-role": ({"role": None, "content": "x"}, {"content": "x"}),
    "big-integers": ({"role": "user", "content": "x", "n": 2**70},
                     {"role": "user", "content": "x", "n": 2**70}),
}

DIFFERENT = {
    "content": (user("x"), user("y")),
    "block-order": (user([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
                    user([{"type": "text", "text": "b"}, {"type": "text", "text": "a"}])),
    "call-order": (call("a", "b"), call("b", "a")),
    "int-and-float": ({"role": "user", "content": "x", "n": 1}, {"role": "user", "content": "x", "n": 1.0}),
    "zero-and-minus-zero": ({"role": "user", "content": "x", "n": 0.0},
                            {"role": "user", "content": "x", "n": -0.0}),
    "true-and-one": ({"role": "user", "content": "x", "n": True}, {"role": "user", "content": "x", "n": 1}),
    "big-integers": ({"role": "user", "content": "x", "n": 2**70},
                     {"role": "user", "content": "x", "n": 2**70 + 1}),
    "unicode-normalization": (user("é"), user("e\u0301")),
    "custom-null": ({"role": "user", "content": "x", "custom": None}, user("x")),
    "nested-null": ({"role": "user", "content": [{"type": "text", "text": "x", "name": None}]},
                    {"role": "user", "content": [{"type": "text", "text": "x"}]}),
    "non-null-name": ({"role": "user", "content": "x", "name": "a"}, user("x")),
    "empty-tool-call-id": ({"role": "user", "content": "x", "tool_call_id": ""}, user("x")),
    "empty-refusal": ({"role": "assistant", "content": "x", "refusal": ""},
                      {"role": "assistant", "content": "x"}),
    "empty-string-and-null-content": (user(""), user(None)),
    "string-and-block": (user("x"), user([{"type": "text", "text": "x"}])),
    "arguments": (calls(tool_call("a", arguments="{}")), calls(tool_call("a", arguments="{ }"))),
    "call-metadata": (calls({**tool_call("a"), "index": 0}), calls(tool_call("a"))),
    "function-metadata": (calls({"id": "a", "type": "function",
                                 "function": {"name": "r", "arguments": "", "strict": True}}),
                          calls(tool_call("a", name="r", arguments=""))),
    "role": (user("x"), {"role": "system", "content": "x"}),
}


@pytest.mark.parametrize("a, b", IDENTICAL.values(), ids=IDENTICAL.keys())
def test_identical_messages(a: Any, b: Any) -> None:
    assert identical(a, b)
    assert identical(b, a)


@pytest.mark.parametrize("a, b", DIFFERENT.values(), ids=DIFFERENT.keys())
def test_different_messages(a: Any, b: Any) -> None:
    assert not identical(a, b)


FILE_SPELLINGS = {
    "exponent-and-decimal": (b"1e2", b"100.0", True),
    "exponent-and-integer": (b"1e2", b"100", False),
    "escaped-and-literal": (b'"\\u00e9"', '"é"'.encode(), True),
    "escaped-slash": (b'"a\\/b"', b'"a/b"', True),
    "negative-zero-integer": (b"-0", b"0", True),
    "negative-zero-float": (b"-0.0", b"0.0", False),
}


@pytest.mark.parametrize("left, right, same", FILE_SPELLINGS.values(), ids=FILE_SPELLINGS.keys())
def test_identity_of_json_spellings_in_files(
    left: bytes, right: bytes, same: bool, write_json: Callable[..., Path]
) -> None:
    before = write_json(b'[{"role": "system", "content": "x", "v": ' + left + b"}]")
    after = write_json(b'[{"role": "system", "content": "x", "v": ' + right + b"}]")
    pins = make_contract({"pins": [{"name": "sys", "role": "system"}]})
    assert check(before, after, pins).passed is same


def test_identity_is_the_same_for_lists_and_files(write_json: Callable[..., Path]) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "é ✓"}], "n": 2**70, "f": 0.1}
    from_file = load_list(json.loads(write_json([message]).read_text("utf-8")))
    from_list = load_list([message])
    assert from_file.identity(0) == from_list.identity(0)


# --- neutral snapshots ---------------------------------------------------------------

def test_neutral_round_trip_keeps_every_field() -> None:
    messages = [
        {"role": "system", "content": "rules", "name": "ops"},
        {"role": "assistant", "content": None, "refusal": "no",
         "tool_calls": [{"id": "a", "type": "function", "index": 0,
                         "function": {"name": "r", "arguments": "{}", "strict": True}}]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "ok"}]},
    ]
    snapshot = load_snapshot(messages)
    assert isinstance(snapshot, Snapshot)
    assert snapshot.messages[1].tool_calls[0] == ToolCall(
        "a", "r", "{}", "function", {"index": 0}, {"strict": True})
    assert snapshot.to_wire()[1]["tool_calls"] == messages[1]["tool_calls"]
    pins = make_contract({"pins": [{"name": r, "role": r} for r in ("system", "assistant", "tool")]})
    assert check(messages, snapshot, pins).passed
    assert check(snapshot, messages, pins).passed


BAD_NEUTRAL: dict[str, Any] = {
    "generator-container": Snapshot(iter([Message("user", "x")])),  # type: ignore[arg-type]
    "dict-container": Snapshot({"m": Message("user", "x")}),  # type: ignore[arg-type]
    "wire-dict-item": Snapshot(({"role": "user", "content": "x"},)),  # type: ignore[arg-type]
    "none-item": Snapshot((None,)),  # type: ignore[arg-type]
    "none-metadata": Snapshot((Message("user", "x", metadata=None),)),  # type: ignore[arg-type]
    "none-call": Snapshot((Message("assistant", None, tool_calls=(None,)),)),  # type: ignore[arg-type]
    "string-calls": Snapshot((Message("assistant", None, tool_calls="ab"),)),  # type: ignore[arg-type]
    "role-int": Snapshot((Message(3, "x"),)),  # type: ignore[arg-type]
    "content-int": Snapshot((Message("user", 3),)),  # type: ignore[arg-type]
    "nan-metadata": Snapshot((Message("user", "x", metadata={"n": float("nan")}),)),
    "call-id-int": Snapshot((Message("assistant", None, tool_calls=(ToolCall(1, "r", ""),)),)),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("snapshot", BAD_NEUTRAL.values(), ids=BAD_NEUTRAL.keys())
def test_bad_neutral_snapshots_are_input_errors(snapshot: Snapshot) -> None:
    with pytest.raises(InputError):
        validate(snapshot)
    with pytest.raises(InputError):
        check(snapshot, [user()])


def test_neutral_container_error_mentions_snapshot_messages() -> None:
    with pytest.raises(InputError, match=r"Snapshot\.messages"):
        validate(Snapshot(iter([])))  # type: ignore[arg-type]


def test_neutral_metadata_cannot_supply_modelled_fields() -> None:
    """A `tool_call_id`, `tool_calls` or `refusal` hidden in metadata is not the real field."""
    snapshot = Snapshot((
        Message("user", "x", metadata={"tool_call_id": "a", "tool_calls": [tool_call("b")]}),
        Message("assistant", None, metadata={"refusal": "no", "role": "user", "content": "y"}),
    ))
    assert conditions(validate(snapshot)) == ["ST-EMPTY-ASSISTANT"]


def test_neutral_lists_of_calls_are_accepted() -> None:
    snapshot = Snapshot((Message("user", "go"),
                         Message("assistant", None, tool_calls=[ToolCall("a", "r", "{}")]),  # type: ignore[arg-type]
                         Message("tool", "ok", tool_call_id="a")))
    assert validate(snapshot).passed
