"""Anthropic Messages: the `anthropic` format.

A snapshot is the `messages` array of a Messages request, or a saved request object
`{system?, messages, ...}` (its other keys, `model`, `tools` and so on, are not read). Anthropic
nests in blocks what Chat Completions spreads over messages, so reading converts into the
neutral (Chat-shaped) model, and `origins` say where each neutral message came from:

* top-level `system` (a string, or an array of text blocks) → system messages first, one per
  block; their origins name the field (`after.system`, `after.system[1]`), so findings on them
  carry no message index;
* `tool_use` blocks → the message's neutral `tool_calls` (`arguments` is the compact JSON of
  `input`, key order kept), whatever the role, so a call in a user message is reported by
  `structure` exactly as it is for openai;
* `tool_result` blocks of a user message → one neutral `tool` message each, emitted before the
  rest of that message (they answer the previous assistant turn, and the API wants them
  first); a user message of results only therefore is a tool turn, never "the latest user
  message". Elsewhere a `tool_result` answers nothing (the API rejects it) and stays content;
* every other block (text, thinking, redacted_thinking, server_tool_use, web search and other
  server results, images, documents) is content, verbatim: content, not emptiness, and never
  pairing (server tools are paired by the provider inside one turn).

A wire message's keys other than `role` and `content` (an SDK dump's `id`, `model`,
`stop_reason`, `usage`) are metadata of every neutral message read from it, as a block's own
extra keys (`cache_control`, `is_error`) are of the call or result it becomes. The Chat-only
fields `tool_calls`, `tool_call_id` and `refusal`, and the role `tool`, are input errors (a null
field is ignored): they mean the data is Chat Completions, and reading them as metadata would
hide calls and results.

Sites follow the user's data: `after[4]`, `after[4].content[2]` for a result or a call (the
block's own position), `after[4].content[2].input.path` for an argument, `after.system[0]`.
The protocol's `site` sees only an `Origin`, so `load` returns a `Loaded` whose format is a copy
bound to each wire message's `tool_use` block positions; neutral dicts carry no private keys.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from copy import deepcopy
from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats.block_writer import BlockWriter
from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped, argument_step
from frayproof_audit.formats.writer import Writer
from frayproof_audit.jsonio import plain_copy
from frayproof_audit.loaded import Loaded, Origin
from frayproof_audit.model import MODELLED_FIELDS

SYSTEM = "system"
"""The `Origin.field` of messages read from the top-level `system`."""
CHAT_ONLY_FIELDS = ("tool_calls", "tool_call_id", "refusal")
"""Neutral (Chat Completions) message fields Anthropic never writes."""
SWITCH = "read this snapshot as openai"

_MESSAGE_KEYS = MODELLED_FIELDS
_CALL_KEYS = frozenset({"type", "id", "name", "input", "function"})
_RESULT_KEYS = MODELLED_FIELDS | {"type", "tool_use_id"}
_BLOCKS = "must be a string, an array of content blocks, or null"


class AnthropicInputError(InputError):
    """An Anthropic snapshot that cannot be read; the text names the wire field."""


class _Read(NamedTuple):
    messages: list[dict[str, Any]]
    origins: tuple[Origin, ...] | None
    call_blocks: dict[int, tuple[int, ...]]


EVIDENCE_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking",
                             "server_tool_use"})


def blocks_evidence(index: int, message: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of Anthropic Messages in a message: a content block of type
    `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, `server_tool_use` or
    `*_tool_result` (a request object with `messages` or `system` is evidence too)."""
    content = message.get("content")
    if not isinstance(content, list | tuple):
        return None
    for position, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if type(kind) is str and (kind in EVIDENCE_BLOCKS or kind.endswith("_tool_result")):
            return f"messages[{index}].content[{position}]", f"is a {kind} block"
    return None


class AnthropicMessages(ChatShaped):
    """The `anthropic` format. The registered instance knows no call positions; each `Loaded`
    gets a copy that knows its own (`call_blocks`: wire message → block index of call k)."""

    name = "anthropic"
    containers: tuple[type, ...] = (list, dict)
    evidence: EvidenceRules | None = EvidenceRules(
        message=blocks_evidence, request=("messages", SYSTEM), messages_key="messages")
    writer: Writer | None = BlockWriter("content", "user")

    def __init__(self, call_blocks: Mapping[int, tuple[int, ...]] | None = None) -> None:
        self._call_blocks: Mapping[int, tuple[int, ...]] = call_blocks or {}

    def load(self, snapshot: Any) -> Loaded:
        read = read_snapshot(snapshot)
        bound = AnthropicMessages(read.call_blocks) if read.call_blocks else ANTHROPIC
        return Loaded(read.messages, OPENAI.views(read.messages), bound, origins=read.origins)

    def load_copy(self, snapshot: Any) -> Loaded:
        """Caller-owned values are detached part by part (as openai does message by message),
        so a value JSON cannot hold is named where it sits; other request keys are not read."""
        if isinstance(snapshot, dict):
            copied: dict[str, Any] = {}
            if "system" in snapshot:
                copied["system"] = _detached(snapshot["system"], "system", 1)
            messages = snapshot.get("messages")
            copied["messages"] = (
                [_detached_message(m, i, 2) for i, m in enumerate(messages)]
                if isinstance(messages, list) else messages
            )
            return self.load(copied)
        return self.load([_detached_message(m, i, 1) for i, m in enumerate(snapshot)])



    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        where = _place(snapshot, origin)
        if call is None:
            return where
        blocks = self._call_blocks.get(origin.message, ())
        if origin.field is not None or origin.block is not None or call >= len(blocks):
            # Not a position of a loaded snapshot (a mutant's own labels): say which call.
            where = f"{where}.tool_use[{call}]"
        else:
            where = f"{where}.content[{blocks[call]}]"
        return where if argument is None else f"{where}.input{argument_step(argument)}"

    def wire_block(self, origin: Origin, position: int) -> int:
        """The wire block index of content block `position` of an assistant message (its
        `tool_use` blocks are calls, not content, so they are counted back in)."""
        if origin.field is not None or origin.block is not None:
            return position
        wire = position
        for block in self._call_blocks.get(origin.message, ()):
            if block > wire:
                break
            wire += 1
        return wire

    def block_site(self, snapshot: str, origin: Origin, position: int) -> str:
        """Content block `position` of an assistant message (a thinking block), or of a
        tool result; a top-level system block is named whole."""
        if origin.field is not None:
            return _place(snapshot, origin)
        return f"{_place(snapshot, origin)}.content[{self.wire_block(origin, position)}]"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        if first == last:
            return _place(snapshot, first)
        if _whole(first) and _whole(last):
            return f"{snapshot}[{first.message}:{last.message + 1}]"
        return f"{_place(snapshot, first)}..{_place(snapshot, last)}"


ANTHROPIC = AnthropicMessages()


def _whole(origin: Origin) -> bool:
    return origin.field is None and origin.block is None


def _place(snapshot: str, origin: Origin) -> str:
    if origin.field is not None:
        where = f"{snapshot}.{origin.field}"
        return where if origin.block is None else f"{where}[{origin.block}]"
    where = f"{snapshot}[{origin.message}]"
    return where if origin.block is None else f"{where}.content[{origin.block}]"


def _fail(where: str, problem: str) -> AnthropicInputError:
    return AnthropicInputError(f"{where} {problem}")


def _detached(value: Any, where: str, depth: int) -> Any:
    """A plain JSON copy; wrapped so the depth limit counts the containers above `value`."""
    wrapped = value
    for _ in range(depth):
        wrapped = [wrapped]
    copied = plain_copy(wrapped, functools.partial(_fail, where))
    for _ in range(depth):
        copied = copied[0]
    return copied


def _detached_message(message: Any, index: int, depth: int) -> Any:
    if not isinstance(message, dict):
        raise _fail(f"messages[{index}]", "must be an object")
    return _detached(message, f"messages[{index}]", depth)


def compact_json(value: Any) -> str:
    """A call's `input` as the arguments text: compact, key order kept, non-ASCII as is (the
    layout the argument operators write back)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def read_snapshot(snapshot: Any) -> _Read:
    """Validate a freshly parsed snapshot and convert it into neutral message dicts."""
    reader = _Reader()
    if type(snapshot) is dict:
        messages = snapshot.get("messages")
        if type(messages) is not list:
            raise _fail("messages", "must be an array of message objects")
        reader.system(snapshot.get("system"))
    elif type(snapshot) is list:
        messages = snapshot
    else:
        raise AnthropicInputError(
            "A snapshot must be an array of messages or an object with a messages array")
    for index, message in enumerate(messages):
        reader.message(index, message)
    origins = tuple(reader.origins)
    plain = all(origin == Origin(index) for index, origin in enumerate(origins))
    return _Read(reader.neutral, None if plain else origins, reader.call_blocks)


class _Reader:
    """Accumulates neutral messages, their origins and the call block positions."""

    def __init__(self) -> None:
        self.neutral: list[dict[str, Any]] = []
        self.origins: list[Origin] = []
        self.call_blocks: dict[int, tuple[int, ...]] = {}

    def add(self, message: dict[str, Any], origin: Origin) -> None:
        self.neutral.append(message)
        self.origins.append(origin)

    def system(self, value: Any) -> None:
        if value is None:
            return
        if type(value) is str:
            self.add({"role": "system", "content": value}, Origin(0, None, SYSTEM))
            return
        if type(value) is not list:
            raise _fail("system", "must be a string or an array of text blocks")
        for position, block in enumerate(value):
            if (type(block) is not dict or block.get("type") != "text"
                    or type(block.get("text")) is not str):
                raise _fail(f"system[{position}]",
                            'must be a text block ({"type": "text", "text": "..."})')
            self.add({"role": "system", "content": [block]}, Origin(0, position, SYSTEM))

    def message(self, index: int, message: Any) -> None:
        where = f"messages[{index}]"
        if type(message) is not dict:
            raise _fail(where, "must be an object")
        role = _role(message, where)
        extras = {key: value for key, value in message.items() if key not in _MESSAGE_KEYS}
        content = message.get("content")
        if content is None or type(content) is str:
            self.add({**extras, "role": role, "content": content}, Origin(index))
            return
        if type(content) is not list:
            raise _fail(f"{where}.content", _BLOCKS)
        kept: list[Any] = []
        calls: list[dict[str, Any]] = []
        call_positions: list[int] = []
        results: list[tuple[int, dict[str, Any]]] = []
        for position, block in enumerate(content):
            at = f"{where}.content[{position}]"
            kind = _block_type(block, at)
            if kind == "tool_use":
                calls.append(_call(block, at))
                call_positions.append(position)
            elif kind == "tool_result" and role == "user":
                results.append((position, _result(block, at)))
            else:
                kept.append(block)
        fresh = fresh_copies(extras)
        for position, result in results:
            self.add({**fresh(), **result}, Origin(index, position))
        if results and not kept and not calls:
            return  # a turn of tool results only: no user message
        # An assistant turn of calls only has null content, as in Chat; any other role keeps
        # its (empty) block list, so structure does not call wire content null.
        neutral: dict[str, Any] = {
            **fresh(), "role": role,
            "content": None if calls and not kept and role == "assistant" else kept}
        if calls:
            neutral["tool_calls"] = calls
            self.call_blocks[index] = tuple(call_positions)
        self.add(neutral, Origin(index))


def fresh_copies(extras: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    """The message's metadata for each neutral message read from it: the values themselves
    the first time, deep copies after, so no two neutral messages share an object (mutation
    edits copies of them independently)."""
    used = False

    def fresh() -> dict[str, Any]:
        nonlocal used
        if not used:
            used = True
            return extras
        return deepcopy(extras)

    return fresh


def _role(message: dict[str, Any], where: str) -> str:
    role = message.get("role")
    if role is None:
        role = ""  # missing: reported by structure, as for openai
    elif type(role) is not str:
        raise _fail(f"{where}.role", "must be a string")
    elif role == "tool":
        raise _fail(f"{where}.role", "is 'tool', a Chat Completions role (Anthropic tool results "
                    f"are tool_result blocks in a user message): {SWITCH}")
    for key in CHAT_ONLY_FIELDS:
        if message.get(key) is not None:
            raise _fail(f"{where}.{key}", f"is a Chat Completions field, not Anthropic: {SWITCH}")
    return role


def _block_type(block: Any, at: str) -> Any:
    if type(block) is not dict:
        raise _fail(at, "must be an object")
    kind = block.get("type")
    if kind is not None and type(kind) is not str:
        raise _fail(f"{at}.type", "must be a string")
    return kind


def _call(block: dict[str, Any], at: str) -> dict[str, Any]:
    """A `tool_use` block as a neutral call; a missing id or name reads as "" (reported by
    structure), a missing `input` as empty arguments text."""
    call_id = block.get("id", "")
    name = block.get("name", "")
    if type(call_id) is not str:
        raise _fail(f"{at}.id", "must be a string")
    if type(name) is not str:
        raise _fail(f"{at}.name", "must be a string")
    try:
        arguments = compact_json(block["input"]) if "input" in block else ""
    except (TypeError, ValueError) as exc:  # only reachable with values no JSON parser returns
        raise _fail(f"{at}.input", f"must be a JSON value ({exc})") from None
    extras = {key: value for key, value in block.items() if key not in _CALL_KEYS}
    return {**extras, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def _result(block: dict[str, Any], at: str) -> dict[str, Any]:
    """A `tool_result` block as a neutral tool message. A missing `content` is an empty result
    (the API allows it); a null one is kept null (structure reports it, as for openai)."""
    call_id = block.get("tool_use_id")
    if call_id is not None and type(call_id) is not str:
        raise _fail(f"{at}.tool_use_id", "must be a string")
    content = block.get("content", "")
    if content is not None and type(content) is not str:
        if type(content) is not list:
            raise _fail(f"{at}.content", _BLOCKS)
        for position, part in enumerate(content):
            _block_type(part, f"{at}.content[{position}]")
    neutral = {key: value for key, value in block.items() if key not in _RESULT_KEYS}
    neutral["role"] = "tool"
    if call_id is not None:
        neutral["tool_call_id"] = call_id
    neutral["content"] = content
    return neutral
