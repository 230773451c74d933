"""OpenAI Chat Completions: the `openai` format (frayproof's), and the default.

Chat Completions messages are already in the neutral model's shape, so loading is validation
only: the parsed dicts become the neutral messages as they are (no copy), and message i is wire
message i. What is an input error and what is left for the checks to report follows frayproof
exactly, except that `role: null` is treated like a missing role (a structure violation), so
the two spellings of "no role" are the same kind of problem.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.writer import Piece, WireSnapshot, Writer
from frayproof_audit.jsonio import canonical, plain_copy, quick_plain_copy
from frayproof_audit.loaded import CallView, Loaded, MessageView, Origin
from frayproof_audit.model import MODELLED_FIELDS

OPTIONAL_NULL_KEYS = ("name", "audio", "annotations", "function_call")
"""Message-level keys whose explicit null means the same as leaving the key out."""


class ChatShaped:
    """Views and identities of neutral message dicts, which are Chat-shaped: what every format
    that converts into the neutral model inherits (its `load` differs, never these)."""

    def views(self, messages: list[dict[str, Any]]) -> list[MessageView]:
        return [_view(message, index) for index, message in enumerate(messages)]

    def identity(self, message: dict[str, Any]) -> bytes:
        return message_identity(message)


EVIDENCE_FIELDS = ("tool_calls", "tool_call_id", "function_call", "refusal")
EVIDENCE_ROLES = ("tool", "function")


def chat_evidence(index: int, message: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of Chat Completions: a message with `tool_calls`, `tool_call_id`,
    `function_call` or `refusal` (any non-null value), or with role `tool` or `function` (and
    no `parts`)."""
    for key in EVIDENCE_FIELDS:
        if message.get(key) is not None:
            return f"messages[{index}]", f"has {key}"
    role = message.get("role")
    if type(role) is str and role in EVIDENCE_ROLES and "parts" not in message:
        return f"messages[{index}]", f"has role {role!r}"
    return None


class ChatWriter:
    """Chat Completions: a piece is one message."""

    def pieces(self, snapshot: WireSnapshot) -> list[Piece | None]:
        return [Piece(i, i, (message,), message.get("role") == "tool", True)
                for i, message in enumerate(snapshot.wire)]

    def result(self, call_id: str, text: str) -> Piece:
        return Piece(None, None, ({"role": "tool", "tool_call_id": call_id, "content": text},),
                     True, True)

    def assemble(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> Any:
        return [piece.units[0] for piece in plan]

    def hosts(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> list[int | None]:
        return [None] * len(plan)  # every piece is a message of its own


class OpenAIChat(ChatShaped):
    """The `openai` format: Chat Completions message lists."""

    name = "openai"
    containers: tuple[type, ...] = (list,)
    evidence: EvidenceRules | None = EvidenceRules(message=chat_evidence)
    writer: Writer | None = ChatWriter()

    def load(self, messages: list[Any]) -> Loaded:
        return Loaded(messages, self.views(messages), self)

    def load_copy(self, messages: list[Any]) -> Loaded:
        """List and dict subclasses are accepted, as frayproof accepts them; the copy is plain.

        The whole list is copied in one round trip when it is plain JSON (`quick_plain_copy`);
        otherwise message by message, so an error names its message."""
        copied_list = quick_plain_copy(messages)
        if type(copied_list) is list:
            return Loaded(copied_list, self.views(copied_list), self)
        detached: list[Any] = []
        views: list[MessageView] = []
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                raise _fail(index, "", "must be an object")
            # Wrapped in a list so the depth limit counts the outer array, as it does in a file.
            copied = plain_copy([message], functools.partial(_fail, index, ""))[0]
            views.append(_view(copied, index))
            detached.append(copied)
        return Loaded(detached, views, self)



    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        where = f"{snapshot}[{origin.message}]"
        if call is None:
            return where
        where = f"{where}.tool_calls[{call}]"
        return where if argument is None else f"{where}.arguments{argument_step(argument)}"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        return f"{snapshot}[{first.message}:{last.message + 1}]"


OPENAI = OpenAIChat()

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def argument_step(name: str) -> str:
    """`.location` for a name that reads as an identifier, else `["two words"]` (JSON-quoted),
    so every label names exactly one argument."""
    if _NAME.fullmatch(name):
        return f".{name}"
    return f"[{json.dumps(name, ensure_ascii=False)}]"


_ALREADY_NORMAL = frozenset({"role", "content", "tool_calls", "tool_call_id", "refusal"})
"""A message with a string role, a content key and no other keys than these (neither id nor
refusal null; calls absent, or each with its id, type, name and arguments keys) is its own
normalized form: most messages."""


def message_identity(message: dict[str, Any]) -> bytes:
    """Canonical JSON of the normalized wire form: equal bytes ⇔ identical messages."""
    if (
        message.keys() <= _ALREADY_NORMAL
        and "content" in message
        and type(message.get("role")) is str
        and message.get("tool_call_id", "") is not None
        and message.get("refusal", "") is not None
    ):
        calls = message.get("tool_calls", _EMPTY)
        if calls is _EMPTY or (type(calls) is list and calls and all(map(_normal_call, calls))):
            return canonical(message)
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


def _normal_call(call: Any) -> bool:
    """Whether `_call_form(call)` equals `call` (every key it fills in is already there)."""
    if type(call) is not dict or "id" not in call or "type" not in call:
        return False
    function = call.get("function")
    return type(function) is dict and "name" in function and "arguments" in function


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


def _fail(index: int, where: str, problem: str) -> InputError:
    return InputError(f"messages[{index}]{where} {problem}")


_new_view = functools.partial(tuple.__new__, MessageView)
_new_call = functools.partial(tuple.__new__, CallView)


def _view(message: Any, index: int) -> MessageView:
    """Validate one message and return what the checks read.

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


