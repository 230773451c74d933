"""Snapshot loading: wire message lists → validated `Loaded` snapshots (spec §1).

What is an input error and what is left for the checks to report follows frayproof exactly,
except that `role: null` is treated like a missing role (a structure violation), so the two
spellings of "no role" are the same kind of problem.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.jsonio import JSONProblem, canonical, loads_strict, plain_copy, strip_bom
from frayproof_audit.model import MODELLED_FIELDS, OPTIONAL_NULL_KEYS, Message, Snapshot, ToolCall

_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


class CallView(NamedTuple):
    """What the checks need of one tool call."""

    id: str
    name: str
    type: str


class MessageView(NamedTuple):
    """What the checks need of one message; absent fields already normalized."""

    role: str
    content: str | list[Any] | None
    calls: tuple[CallView, ...]
    tool_call_id: str | None
    refusal: str | None


class Loaded:
    """A validated snapshot: the wire dicts, a view per message, identities computed once."""

    __slots__ = ("_identities", "views", "wire")

    def __init__(
        self,
        wire: list[dict[str, Any]],
        views: list[MessageView],
        identities: list[bytes | None] | None = None,
    ) -> None:
        self.wire = wire
        self.views = views
        self._identities: list[bytes | None] = (
            identities if identities is not None else [None] * len(wire)
        )

    def known_identity(self, index: int) -> bytes | None:
        """The identity if already computed (lets derived snapshots reuse it)."""
        return self._identities[index]

    def __len__(self) -> int:
        return len(self.views)

    def identity(self, index: int) -> bytes:
        """Canonical identity of message `index` (spec §1.5), computed on first use."""
        found = self._identities[index]
        if found is None:
            found = message_identity(self.wire[index])
            self._identities[index] = found
        return found

    def last_index(self, role: str) -> int | None:
        """Index of the last message with `role`, or None."""
        views = self.views
        for index in range(len(views) - 1, -1, -1):
            if views[index].role == role:
                return index
        return None

    def to_snapshot(self) -> Snapshot:
        return Snapshot(tuple(neutral_message(message) for message in self.wire))


def message_identity(message: dict[str, Any]) -> bytes:
    """Canonical JSON of the normalized wire form: equal bytes ⇔ identical messages."""
    form = {
        key: value
        for key, value in message.items()
        if key not in MODELLED_FIELDS and not (value is None and key in OPTIONAL_NULL_KEYS)
    }
    form["role"] = message.get("role") or ""
    form["content"] = message.get("content")
    calls = message.get("tool_calls")
    if calls:
        form["tool_calls"] = [_call_form(call) for call in calls]
    for key in ("tool_call_id", "refusal"):
        value = message.get(key)
        if value is not None:
            form[key] = value
    return canonical(form)


def _call_form(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        **call,
        "id": call.get("id", ""),
        "type": call.get("type", ""),
        "function": {
            **function,
            "name": function.get("name", ""),
            "arguments": function.get("arguments", ""),
        },
    }


def neutral_message(message: dict[str, Any]) -> Message:
    calls = tuple(
        ToolCall(
            id=call.get("id", ""),
            name=(call.get("function") or {}).get("name", ""),
            arguments=(call.get("function") or {}).get("arguments", ""),
            type=call.get("type", ""),
            metadata={k: v for k, v in call.items() if k not in _CALL_KEYS},
            function_metadata={
                k: v for k, v in (call.get("function") or {}).items() if k not in _FUNCTION_KEYS
            },
        )
        for call in message.get("tool_calls") or ()
    )
    return Message(
        role=message.get("role") or "",
        content=message.get("content"),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id"),
        refusal=message.get("refusal"),
        metadata={k: v for k, v in message.items() if k not in MODELLED_FIELDS},
    )


def load_wire(messages: list[Any]) -> Loaded:
    """Validate a freshly parsed (already detached, finite, plain JSON) message list."""
    views = [_view(message, index) for index, message in enumerate(messages)]
    return Loaded(messages, views)


def _fail(index: int, where: str, problem: str) -> InputError:
    return InputError(f"messages[{index}]{where} {problem}")


_new_view = functools.partial(tuple.__new__, MessageView)
_new_call = functools.partial(tuple.__new__, CallView)


def _view(message: Any, index: int) -> MessageView:
    """Validate one message (spec §1.3 steps 3–7) and return what the checks read.

    The common shapes (plain strings, no calls) are settled with a few type tests; anything
    else goes through the detailed checks that name the offending field.
    """
    if type(message) is not dict:
        raise _fail(index, "", "must be an object")
    get = message.get
    role = get("role")
    content = get("content")
    raw_calls = get("tool_calls")
    tool_call_id = get("tool_call_id")
    refusal = get("refusal")
    if role is None:
        role = ""
    elif type(role) is not str:
        raise _fail(index, ".role", "must be a string")
    if content is not None and type(content) is not str:
        _check_blocks(content, index)
    calls: tuple[CallView, ...] = ()
    if raw_calls is not None:
        if type(raw_calls) is not list:
            raise _fail(index, ".tool_calls", "must be an array or null")
        if raw_calls:
            calls = tuple([_call_view(call, index, position) for position, call in enumerate(raw_calls)])
    if tool_call_id is not None and type(tool_call_id) is not str:
        raise _fail(index, ".tool_call_id", "must be a string or null")
    if refusal is not None and type(refusal) is not str:
        raise _fail(index, ".refusal", "must be a string or null")
    return _new_view((role, content, calls, tool_call_id, refusal))


def _check_blocks(content: Any, index: int) -> None:
    if type(content) is not list:
        raise _fail(index, ".content", "must be a string, an array of objects, or null")
    for position, block in enumerate(content):
        if type(block) is not dict:
            raise _fail(index, f".content[{position}]", "must be an object")
        if "type" in block and type(block["type"]) is not str:
            raise _fail(index, f".content[{position}].type", "must be a string")


def _call_view(call: Any, index: int, position: int) -> CallView:
    if type(call) is dict:
        function = call.get("function", _EMPTY)
        if type(function) is dict:
            call_id = call.get("id", "")
            name = function.get("name", "")
            call_type = call.get("type", "")
            if (
                type(call_id) is str
                and type(name) is str
                and type(call_type) is str
                and type(function.get("arguments", "")) is str
            ):
                return _new_call((call_id, name, call_type))
    raise _call_problem(call, index, position)


_EMPTY: dict[str, Any] = {}


def _call_problem(call: Any, index: int, position: int) -> InputError:
    """The first problem of a call that failed the fast shape test, in frayproof's order."""
    where = f".tool_calls[{position}]"
    if type(call) is not dict:
        return _fail(index, where, "must be an object")
    function = call.get("function", {})
    if type(function) is not dict:
        return _fail(index, f"{where}.function", "must be an object")
    for value, field in (
        (call.get("id", ""), ".id"),
        (function.get("name", ""), ".function.name"),
        (function.get("arguments", ""), ".function.arguments"),
        (call.get("type", ""), ".type"),
    ):
        if type(value) is not str:
            return _fail(index, f"{where}{field}", "must be a string")
    raise AssertionError("unreachable: the call passed every test")  # pragma: no cover


NOT_A_LIST = "must be an array of message objects"


def load_list(messages: Any) -> Loaded:
    """Validate a caller-supplied list, message by message, on a detached JSON copy.

    List and dict subclasses are accepted, as frayproof accepts them; the copy is plain.
    """
    if not isinstance(messages, list):
        raise InputError(f"A snapshot {NOT_A_LIST}")
    detached: list[Any] = []
    views: list[MessageView] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _fail(index, "", "must be an object")
        # Wrapped in a list so the depth limit counts the outer array, as it does in a file.
        copied = plain_copy([message], functools.partial(_fail, index, ""))[0]
        views.append(_view(copied, index))
        detached.append(copied)
    return Loaded(detached, views)


def parse_snapshot_bytes(data: bytes) -> Any:
    """Parse snapshot file bytes (an optional BOM is allowed) into raw JSON, strictly."""
    return loads_strict(strip_bom(data))


def load_file(path: str | os.PathLike[str]) -> Loaded:
    """Read a snapshot file: strict UTF-8 JSON whose top level is an array of messages."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': {reason}") from None
    try:
        value = parse_snapshot_bytes(data)
    except JSONProblem as exc:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': {exc}") from None
    if type(value) is not list:
        raise InputError(f"Cannot read snapshot '{os.fspath(path)}': top level {NOT_A_LIST}")
    try:
        return load_wire(value)
    except InputError as exc:
        raise InputError(f"Snapshot '{os.fspath(path)}': {exc}") from None


def load_neutral(snapshot: Snapshot) -> Loaded:
    """Rebuild wire dicts from neutral values, then validate them like any list."""
    messages = snapshot.messages
    if not isinstance(messages, tuple | list):
        raise InputError("Snapshot.messages must be a tuple or list of Message values")
    try:
        wire = [_neutral_to_wire(message) for message in messages]
    except (TypeError, AttributeError, ValueError):
        raise InputError("Snapshot.messages holds a value that is not a valid Message") from None
    return load_list(wire)


def _neutral_to_wire(message: Any) -> dict[str, Any]:
    if not isinstance(message, Message):
        raise TypeError("not a Message")
    if not isinstance(message.tool_calls, tuple | list):
        raise TypeError("tool_calls must be a tuple or list")
    for call in message.tool_calls:
        if not isinstance(call, ToolCall):
            raise TypeError("not a ToolCall")
    return message.to_wire()


def load_source(source: Any) -> Loaded:
    """Accept a message list, a neutral `Snapshot`, or a file path (never JSON text)."""
    if isinstance(source, Snapshot):
        return load_neutral(source)
    if isinstance(source, str | os.PathLike):
        return load_file(source)
    if isinstance(source, list):
        return load_list(source)
    raise InputError(f"A snapshot {NOT_A_LIST}")


def load_snapshot(source: Any) -> Snapshot:
    """Load and validate a snapshot from a list, a `Snapshot` or a file path."""
    return load_source(source).to_snapshot()
