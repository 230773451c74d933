"""OpenAI Responses API items: the `openai-responses` format (as the Agents SDK and Codex log them).

A snapshot is an item list (a bare `input` array), or a whole request object
`{input: [...] | "text", instructions?: "text", ...}`; other request keys are ignored. Items
become Chat-Completions-shaped neutral messages:

* `message` items (also `{role, content}` without `type`) → a message of that role, content as is;
* a run `reasoning* [assistant message] function_call*` → ONE assistant message: the reasoning
  items verbatim as leading non-text content blocks, the message's content, and the calls as
  `tool_calls` with `call_id` as the id. A Chat Completions assistant message with text and
  calls is written exactly so in Responses, so parallel calls form one batch and their outputs
  are that batch's results; a reasoning item and the item it precedes are an atomic pair for
  the provider, so they stay in one neutral message (and a turn holding only reasoning is
  not empty);
* `function_call_output` → a `tool` message (`call_id` → `tool_call_id`, `output` → content);
* any other item (`compaction`, `web_search_call`, `computer_call`, `*_output`,
  `item_reference`, ...) → an assistant message whose content is that item as one opaque block:
  model- or provider-produced context that is neither an instruction, a user turn, nor a
  function call or result the pairing checks could judge;
* `instructions` → a leading `system` message whose origin is the `instructions` field.

Item keys the neutral message does not model (`id`, `status`, ...) are kept under `item`, on
the message or on the call, so identities (canonical JSON of the neutral dict) see them.
Findings point at an item index in the list (or in `input`): at the first `function_call` item
for a turn with calls, since those findings are about calls; message sites spell the whole run
of items (`after[3:6]`), call sites the call's own item (`after[5]`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped, argument_step
from frayproof_audit.formats.writer import Piece, WireSnapshot, Writer
from frayproof_audit.jsonio import plain_copy
from frayproof_audit.loaded import Loaded, Origin, run_origin, wire_span

MESSAGE = "message"
CALL = "function_call"
OUTPUT = "function_call_output"
REASONING = "reasoning"
_MODELLED = {MESSAGE: ("type", "role", "content"), CALL: ("type", "call_id", "name", "arguments"),
             OUTPUT: ("type", "call_id", "output")}
"""Item keys a neutral message (or call) models itself; the rest are kept under `item`."""


class ResponsesInputError(InputError):
    """A Responses snapshot that is not an item list or a request object, or an item whose
    fields have the wrong JSON types. Names the item: `items[3].call_id must be a string`."""


EVIDENCE_ITEMS = frozenset({"function_call", "function_call_output", "reasoning", "compaction",
                            "item_reference"})
EVIDENCE_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file",
                            "input_audio", "refusal"})


def items_evidence(index: int, item: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of Responses items: an item of a Responses type other than `message`
    (`function_call`, `function_call_output`, `reasoning`, `compaction`, `item_reference`,
    `*_call`, `*_call_output`, `mcp_*`), or a `message`-typed item whose content is a string or
    holds a Responses part (`input_text`, `output_text`, `input_image`, `input_file`,
    `input_audio`, `refusal`); a `message` type on Anthropic blocks is an Anthropic SDK dump,
    no evidence. A request object with `input` or `instructions` is evidence too."""
    kind = item.get("type")
    if type(kind) is not str:
        return None
    if kind in EVIDENCE_ITEMS or kind.endswith(("_call", "_call_output")) or kind.startswith("mcp_"):
        return f"messages[{index}]", f"is a {kind} item"
    if kind != MESSAGE:
        return None
    content = item.get("content")
    if type(content) is str:
        return f"messages[{index}]", "is a message item with string content"
    if isinstance(content, list | tuple):
        for position, part in enumerate(content):
            part_kind = part.get("type") if isinstance(part, dict) else None
            if type(part_kind) is str and part_kind in EVIDENCE_PARTS:
                return (f"messages[{index}].content[{position}]",
                        f"is an {part_kind} part of a message item")
    return None


class ItemsWriter:
    """Responses items: a piece is the run of items one neutral message was read from."""

    def _items(self, wire: Any) -> list[Any]:
        if isinstance(wire, dict):
            items = wire.get("input")
            return items if isinstance(items, list) else []
        return list(wire)

    def pieces(self, snapshot: WireSnapshot) -> list[Piece | None]:
        items = self._items(snapshot.wire)
        loaded = snapshot.loaded
        found: list[Piece | None] = []
        for index in range(len(loaded)):
            origin = loaded.origin(index)
            if origin.field is not None:
                found.append(None)
                continue
            start, stop = wire_span(origin)
            result = loaded.views[index].role == "tool"
            found.append(Piece(index, start, tuple(items[start:stop]), result, True))
        return found

    def result(self, call_id: str, text: str) -> Piece:
        item = {"type": "function_call_output", "call_id": call_id, "output": text}
        return Piece(None, None, (item,), True, True)

    def assemble(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> Any:
        items = [item for piece in plan for item in piece.units]
        wire = snapshot.wire
        if isinstance(wire, dict):
            return {**wire, "input": items} if isinstance(wire.get("input"), list) else dict(wire)
        return items

    def hosts(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> list[int | None]:
        return [None] * len(plan)  # every piece is items of its own


class OpenAIResponses(ChatShaped):
    """The `openai-responses` format: Responses API input items."""

    name = "openai-responses"
    containers: tuple[type, ...] = (list, dict)
    evidence: EvidenceRules | None = EvidenceRules(
        message=items_evidence, request=("input", "instructions"), messages_key="input")
    writer: Writer | None = ItemsWriter()

    def load(self, snapshot: Any) -> Loaded:
        return _read(snapshot, copy=False, fmt=self)

    def load_copy(self, snapshot: Any) -> Loaded:
        """Items are detached one by one (`jsonio.plain_copy`), so an error names its item."""
        return _read(snapshot, copy=True, fmt=self)



    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        if origin.field is not None:
            return f"{snapshot}.{origin.field}"
        if call is not None:
            where = f"{snapshot}[{origin.message + call}]"
            return where if argument is None else f"{where}.arguments{argument_step(argument)}"
        start, stop = wire_span(origin)
        return f"{snapshot}[{start}]" if stop - start == 1 else f"{snapshot}[{start}:{stop}]"

    def block_site(self, snapshot: str, origin: Origin, position: int) -> str:
        """A turn's leading reasoning block `position` is its own item, `start + position`."""
        if origin.field is not None:
            return f"{snapshot}.{origin.field}"
        return f"{snapshot}[{wire_span(origin)[0] + position}]"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        if last.field is not None:  # only fields: instructions, or a string input after it
            fields = dict.fromkeys((first.field, last.field))
            return ", ".join(f"{snapshot}.{field}" for field in fields)
        stop = wire_span(last)[1]
        if first.field is not None:
            return f"{snapshot}.{first.field}, {snapshot}[0:{stop}]"
        return f"{snapshot}[{wire_span(first)[0]}:{stop}]"


OPENAI_RESPONSES = OpenAIResponses()


class ItemRef(NamedTuple):
    """One Responses item a neutral message stands for: its `type`, its `id` (None when it has
    none), where it sits in the message (`call`: position in `tool_calls`; `block`: position
    in content, for a reasoning item) and whether the model produced it (only such an item can
    be the one a reasoning item requires after it)."""

    kind: str
    id: str | None
    call: int | None = None
    block: int | None = None
    produced: bool = False


MESSAGE_PART_TYPES = frozenset({"output_text", "input_text", "text", "refusal", "input_image",
                                "input_file", "input_audio"})
"""Content part types of a message item; an assistant message whose one block is anything else
(and not reasoning) is an opaque item read whole."""


def items_of(message: dict[str, Any]) -> list[ItemRef]:
    """The items a neutral message was read from, in order (the inverse of the reading for
    every message this format builds; any neutral message gets an answer)."""
    role = message.get("role")
    if role == "tool":
        return [ItemRef(OUTPUT, _item_id(message))]
    if role != "assistant":
        return [ItemRef(MESSAGE, _item_id(message))]
    content = message.get("content")
    calls = message.get("tool_calls")
    calls = calls if type(calls) is list else []
    blocks = content if type(content) is list else []
    if (not calls and "item" not in message and len(blocks) == 1 and type(blocks[0]) is dict
            and blocks[0].get("type") not in MESSAGE_PART_TYPES
            and blocks[0].get("type") != REASONING and type(blocks[0].get("type")) is str):
        opaque = blocks[0]
        kind = opaque["type"]
        ident = opaque.get("id")
        return [ItemRef(kind, ident if type(ident) is str else None,
                        produced=not kind.endswith("_output"))]
    found: list[ItemRef] = []
    lead = 0
    while lead < len(blocks) and type(blocks[lead]) is dict and blocks[lead].get("type") == REASONING:
        ident = blocks[lead].get("id")
        found.append(ItemRef(REASONING, ident if type(ident) is str else None, block=lead,
                             produced=True))
        lead += 1
    if lead < len(blocks) or type(content) is str or "item" in message or not (lead or calls):
        found.append(ItemRef(MESSAGE, _item_id(message), produced=True))
    for position, call in enumerate(calls):
        found.append(ItemRef(CALL, _item_id(call) if type(call) is dict else None,
                             call=position, produced=True))
    return found


def _item_id(neutral: dict[str, Any]) -> str | None:
    extras = neutral.get("item")
    ident = extras.get("id") if type(extras) is dict else None
    return ident if type(ident) is str else None


def _read(snapshot: Any, *, copy: bool, fmt: OpenAIResponses) -> Loaded:
    """Validate and convert; `copy` detaches every value the neutral messages keep."""
    if isinstance(snapshot, list):
        return _convert(snapshot, "items", None, copy, fmt)
    if not isinstance(snapshot, dict):
        raise ResponsesInputError("A snapshot must be an item array or a request object")
    instructions = snapshot.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise ResponsesInputError("request.instructions must be a string or null")
    items = snapshot.get("input")
    if isinstance(items, str):
        lead = [] if instructions is None else [_instructions(instructions)]
        loaded = [*lead, ({"role": "user", "content": items}, Origin(0, None, "input"))]
        messages = [message for message, _ in loaded]
        return Loaded(messages, OPENAI.views(messages), fmt,
                      origins=tuple(origin for _, origin in loaded))
    if not isinstance(items, list):
        raise ResponsesInputError("request.input must be an item array or a string")
    return _convert(items, "input", instructions, copy, fmt)


def _instructions(text: str) -> tuple[dict[str, Any], Origin]:
    return {"role": "system", "content": text}, Origin(0, None, "instructions")


def _convert(
    items: list[Any], name: str, instructions: str | None, copy: bool, fmt: OpenAIResponses
) -> Loaded:
    if copy:
        items = [_detached(item, name, index) for index, item in enumerate(items)]
    kinds = [_kind(item, name, index) for index, item in enumerate(items)]
    messages: list[dict[str, Any]] = []
    origins: list[Origin] = []
    if instructions is not None:
        message, origin = _instructions(instructions)
        messages.append(message)
        origins.append(origin)
    index = 0
    count = len(items)
    while index < count:
        kind = kinds[index]
        if kind in (REASONING, CALL) or (kind == MESSAGE and _role(items[index]) == "assistant"):
            start = index
            while index < count and kinds[index] == REASONING:
                index += 1
            reasoning = items[start:index]
            said = None
            if index < count and kinds[index] == MESSAGE and _role(items[index]) == "assistant":
                said = index
                index += 1
            first_call = index
            while index < count and kinds[index] == CALL:
                index += 1
            calls = items[first_call:index]
            message = _turn(reasoning, None if said is None else items[said], calls, name, first_call)
            anchor = first_call if calls else (start if said is None else said)
            origins.append(run_origin(anchor, start, index))
        else:
            item = items[index]
            if kind == MESSAGE:
                message = _message(item, name, index)
            elif kind == OUTPUT:
                message = _output(item, name, index)
            else:
                message = {"role": "assistant", "content": [item]}
            origins.append(Origin(index))
            index += 1
        messages.append(message)
    return Loaded(messages, OPENAI.views(messages), fmt, origins=tuple(origins))


def _fail(name: str, index: int, where: str, problem: str) -> ResponsesInputError:
    return ResponsesInputError(f"{name}[{index}]{where} {problem}")


def _detached(item: Any, name: str, index: int) -> Any:
    if not isinstance(item, dict):
        raise _fail(name, index, "", "must be an object")
    # Wrapped in a list so the depth limit counts the outer array, as it does in a file.
    return plain_copy([item], functools.partial(_fail, name, index, ""))[0]


def _kind(item: Any, name: str, index: int) -> str:
    """The item's type; an item without one is an easy-input message (`{role, content}`)."""
    if type(item) is not dict:
        raise _fail(name, index, "", "must be an object")
    kind = item.get("type", MESSAGE)
    if type(kind) is not str:
        raise _fail(name, index, ".type", "must be a string")
    return kind


def _role(item: dict[str, Any]) -> Any:
    return item.get("role")


def _extras(item: dict[str, Any], kind: str) -> dict[str, Any]:
    modelled = _MODELLED[kind]
    return {key: value for key, value in item.items() if key not in modelled}


def _with_extras(neutral: dict[str, Any], item: dict[str, Any], kind: str) -> dict[str, Any]:
    extras = _extras(item, kind)
    if extras:
        neutral["item"] = extras
    return neutral


def _parts(value: Any, name: str, index: int, field: str, what: str) -> None:
    """A content value: a string, null, or an array of objects with a string `type`."""
    if value is None or type(value) is str:
        return
    if type(value) is not list:
        raise _fail(name, index, f".{field}", f"must be a string, {what}, or null")
    for position, part in enumerate(value):
        if type(part) is not dict:
            raise _fail(name, index, f".{field}[{position}]", "must be an object")
        if "type" in part and type(part["type"]) is not str:
            raise _fail(name, index, f".{field}[{position}].type", "must be a string")


def _message(item: dict[str, Any], name: str, index: int) -> dict[str, Any]:
    """A message item; `role: null` is a missing role (as in `openai`), left to the checks."""
    role = item.get("role")
    if role is not None and type(role) is not str:
        raise _fail(name, index, ".role", "must be a string")
    content = item.get("content")
    _parts(content, name, index, "content", "an array of objects")
    return _with_extras({"role": role or "", "content": content}, item, MESSAGE)


def _output(item: dict[str, Any], name: str, index: int) -> dict[str, Any]:
    """A `function_call_output`: a missing `call_id` is left to the checks (ST-TOOL-NOID)."""
    call_id = item.get("call_id")
    if call_id is not None and type(call_id) is not str:
        raise _fail(name, index, ".call_id", "must be a string or null")
    output = item.get("output")
    _parts(output, name, index, "output", "an array of objects")
    neutral: dict[str, Any] = {"role": "tool", "content": output}
    if call_id is not None:
        neutral["tool_call_id"] = call_id
    return _with_extras(neutral, item, OUTPUT)


def _call(item: dict[str, Any], name: str, index: int) -> dict[str, Any]:
    """A `function_call`: absent fields are "" (left to the checks), wrong types are errors."""
    fields = {}
    for field in ("call_id", "name", "arguments"):
        value = item.get(field, "")
        if type(value) is not str:
            raise _fail(name, index, f".{field}", "must be a string")
        fields[field] = value
    call = {"id": fields["call_id"], "type": "function",
            "function": {"name": fields["name"], "arguments": fields["arguments"]}}
    return _with_extras(call, item, CALL)


def _turn(
    reasoning: list[dict[str, Any]], said: dict[str, Any] | None, calls: list[dict[str, Any]],
    name: str, first_call: int,
) -> dict[str, Any]:
    """One assistant turn. Without reasoning, the message's content stays as it is; with it,
    content is the reasoning items followed by the message's parts (a string becomes one
    `output_text` part, which the provider reads as the same text)."""
    if said is None:
        neutral: dict[str, Any] = {"role": "assistant", "content": None}
    else:
        neutral = _message(said, name, first_call - 1)
    if reasoning:
        content = neutral["content"]
        if type(content) is str:
            content = [{"type": "output_text", "text": content}]
        neutral["content"] = [*reasoning, *(content or ())]
    if calls:
        neutral["tool_calls"] = [_call(item, name, first_call + k) for k, item in enumerate(calls)]
    return neutral
