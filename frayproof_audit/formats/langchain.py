"""LangChain messages: the `langchain` format (LangGraph state, LangSmith runs, chat histories).

A snapshot is a list of LangChain messages in any of the three spellings LangChain writes:

* serialized (`langchain_core.load.dumpd`, what LangSmith stores in a run's `inputs` and what a
  checkpoint's messages dump to): `{"lc": 1, "type": "constructor", "id": ["langchain",
  "schema", "messages", "AIMessage"], "kwargs": {...}}`; sites name `after[4].kwargs...`;
* `messages_to_dict` (chat message histories): `{"type": "ai", "data": {...}}`; sites name
  `after[4].data...`;
* a message's own fields (`message.model_dump()`): `{"type": "ai", "content": ..., ...}`.

The neutral reading is what LangChain itself sends an OpenAI-compatible model,
`langchain_core.messages.convert_to_openai_messages` (`libs/core/langchain_core/messages/utils.py`,
default `text_format="string"`), so the pair a LangGraph checkpoint or a LangSmith run yields
gets the verdicts of the same messages captured live (`capture.langchain` records them with the
same function) or logged as Chat Completions. The reading is done here on the plain dicts, with
no LangChain installed, and is the same as LangChain's (`tests/test_format_langchain.py` proves
it against `load` + `convert_to_openai_messages`):

* `HumanMessage` is role `user`, `AIMessage` `assistant`, `ToolMessage` `tool` (with its
  `tool_call_id`), `SystemMessage` `system` (or its `additional_kwargs.__openai_role__`, e.g.
  `developer`), `ChatMessage` its `role`, `FunctionMessage` `function`; a non-empty `name` is
  kept; `additional_kwargs.refusal` is the refusal;
* an `AIMessage`'s `tool_calls` `{name, args, id}` are calls whose arguments are
  `json.dumps(args, ensure_ascii=False)` (LangChain's spelling: `", "` and `": "`);
  `invalid_tool_calls` are not sent;
* empty content is `""`; string content as is; a list of text blocks (or strings) is their
  texts joined by newlines; other lists are converted block by block (`image_url`,
  `input_audio` and unknown blocks as written, `text` reduced to its text, `json` to a text block
  of its JSON, `guard_content` to its text, a `refusal` block with text kept, an Anthropic
  `tool_use` or Responses `function_call` block a call when `tool_calls` does not hold it, and
  dropped from content), then joined as above when only text blocks remain;
* an Anthropic `tool_result` block is a `tool` message of its own right after its message
  (origin `(i, j)`, site `after[i].kwargs.content[j]`); a message holding nothing else is only
  its results;
* message ids, `additional_kwargs`, `response_metadata`, `usage_metadata`, a tool message's
  `status` and `artifact` are not sent, so they are no part of a message's identity.

Two readings are LangChain's own, not redone here: multimodal data blocks (`image`, `audio`,
`file`, `video`, `text-plain` with `url` / `base64` / `file_id`, Bedrock `image` bytes,
Vertex `media`), streamed `*MessageChunk`s and raw `additional_kwargs.tool_calls` without
`tool_calls`. Such a message is read by LangChain when `langchain-core` is installed (the same
function, so the same result) and is an input error naming it otherwise. A `RemoveMessage` is
no message (LangGraph's `add_messages` reads it as an instruction to delete): it is skipped, and
the reading notes it (`format_notes`).
"""

from __future__ import annotations

import collections
import functools
import importlib
import json
from collections.abc import Sequence
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped, argument_step
from frayproof_audit.formats.writer import Piece, WireSnapshot, Writer
from frayproof_audit.jsonio import plain_copy
from frayproof_audit.loaded import Loaded, Origin

EXTRA = "pip install 'frayproof-audit[langchain]'"
CLASSES = {
    "HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
    "ChatMessage": "chat", "FunctionMessage": "function", "RemoveMessage": "remove",
}
"""Serialized class names (`id[-1]`) → message type."""
TYPES = frozenset(CLASSES.values())
CHUNKS = frozenset(f"{name}Chunk" for name in CLASSES if name != "RemoveMessage")
"""Streamed chunks: serialized under these names, dumped with `type` equal to them."""
ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "function": "function"}
DATA_BLOCK_TYPES = frozenset({"image", "video", "audio", "text-plain", "file"})
"""`langchain_core.messages.content` data block types: converted by LangChain's own
`convert_to_openai_data_block`, not here."""
SERIALIZED_NAMESPACES = frozenset({"langchain", "langchain_core"})


class LangChainInputError(InputError):
    """A `langchain` snapshot that cannot be read; the message names the message and field."""


class _NotPlain(Exception):
    """A message whose reading is LangChain's own (see the module docstring): `reason` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Spelled(Origin):
    """The origin of a neutral message read from a LangChain message: `prefix` is where its
    fields sit in the wire message (`.kwargs`, `.data` or none), `call_sites` where each of its
    calls sits (`.tool_calls[1]`, `.content[3]`) and how its arguments are reached (`.args`,
    `.input`); attributes kept out of the tuple, as `responses.Run`'s are."""

    prefix: str
    call_sites: tuple[tuple[str, str], ...]


def _origin(message: int, block: int | None, prefix: str,
            call_sites: tuple[tuple[str, str], ...] = ()) -> Origin:
    origin = Spelled(message, block)
    origin.prefix = prefix
    origin.call_sites = call_sites
    return origin


def spelling(message: Any) -> tuple[str, dict[str, Any], str] | None:
    """(message type, its fields, where they sit) of a wire message in one of the three
    spellings, or None for a value that is none of them."""
    if type(message) is not dict:
        return None
    if message.get("lc") == 1 and message.get("type") == "constructor":
        ident = message.get("id")
        kwargs = message.get("kwargs", {})
        if type(ident) is list and ident and type(ident[-1]) is str and type(kwargs) is dict:
            name = ident[-1]
            kind = CLASSES.get(name) or (name if name in CHUNKS else None)
            if kind is not None:
                return kind, kwargs, ".kwargs"
        return None
    kind = message.get("type")
    if type(kind) is not str or (kind not in TYPES and kind not in CHUNKS) or (
            "role" in message and kind != "chat"):
        return None
    data = message.get("data")
    if type(data) is dict and "content" not in message:
        return kind, data, ".data"
    if "content" in message:
        return kind, message, ""
    return None


def message_evidence(index: int, message: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of LangChain messages: a serialized message (`lc`, `type:
    "constructor"`, a message class in `id`), or a message dict typed `human`, `ai`, `system`,
    `tool`, `chat`, `function` or `remove` (or a chunk) with `content` or `data` and no `role`."""
    found = spelling(message)
    if found is None:
        return None
    kind, _, prefix = found
    if prefix == ".kwargs":
        return f"messages[{index}]", "is a serialized LangChain message"
    return f"messages[{index}]", f"is a LangChain message dict (type {kind!r})"


class LangChainWriter:
    """A piece is one whole wire message, as for Chat Completions: every LangChain message a
    LangGraph state or a LangSmith run holds reads as one neutral message, and is rewritten
    message by message, an untouched message being the very object it was. A new result is a
    `ToolMessage` (`status: "error"`) spelled like the snapshot's first message (serialized,
    `messages_to_dict` or fields). A snapshot holding a message that reads as several neutral
    ones (Anthropic `tool_result` blocks in a `HumanMessage`) or a `RemoveMessage` marker is
    refused by name: it cannot be rewritten piece by piece."""

    def pieces(self, snapshot: WireSnapshot) -> list[Piece | None]:
        loaded = snapshot.loaded
        wire = snapshot.wire
        numbers = [loaded.origin(index).message for index in range(len(loaded))]
        counts = collections.Counter(numbers)
        for number in range(len(wire)):
            count = counts[number]
            if count != 1:
                what = ("a RemoveMessage marker" if count == 0 else
                        f"one message read as {count} (its tool_result blocks)")
                raise LangChainInputError(f"messages[{number}] is {what}: a LangChain snapshot "
                                          "is rewritten message by message, and this one cannot be")
        return [Piece(index, number, (wire[number],), loaded.views[index].role == "tool", True)
                for index, number in enumerate(numbers)]

    def result(self, call_id: str, text: str) -> Piece:
        return Piece(None, None, (_tool_message(call_id, text),), True, True)

    def assemble(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> Any:
        shape = next((found[2] for found in map(spelling, snapshot.wire) if found is not None),
                     ".kwargs")
        return [_respelled(piece.units[0], shape) if piece.source is None else piece.units[0]
                for piece in plan]

    def hosts(self, snapshot: WireSnapshot, plan: Sequence[Piece]) -> list[int | None]:
        return [None] * len(plan)  # every piece is a message of its own


def _tool_message(call_id: str, text: str) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"content": text, "type": "tool", "tool_call_id": call_id, "status": "error"}}


def _respelled(message: dict[str, Any], shape: str) -> dict[str, Any]:
    if shape == ".kwargs":
        return message
    fields = dict(message["kwargs"])
    return {"type": fields["type"], "data": fields} if shape == ".data" else fields


class LangChainMessages(ChatShaped):
    """The `langchain` format: LangChain message lists, read as LangChain converts them."""

    name = "langchain"
    containers: tuple[type, ...] = (list,)
    evidence: EvidenceRules | None = EvidenceRules(message=message_evidence)
    writer: Writer | None = LangChainWriter()

    def load(self, messages: list[Any]) -> Loaded:
        if type(messages) is not list:
            raise LangChainInputError("A snapshot must be an array of LangChain messages")
        neutral: list[dict[str, Any]] = []
        origins: list[Origin] = []
        notes: list[str] = []
        for index, message in enumerate(messages):
            _read(index, message, neutral, origins, notes)
        return Loaded(neutral, OPENAI.views(neutral), self, origins=tuple(origins),
                      notes=tuple(notes))

    def load_copy(self, messages: list[Any]) -> Loaded:
        if not isinstance(messages, list):
            raise LangChainInputError("A snapshot must be an array of LangChain messages")
        return self.load([
            plain_copy([message], functools.partial(_fail, index, ""))[0]
            for index, message in enumerate(messages)
        ])

    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        prefix = origin.prefix if isinstance(origin, Spelled) else ""
        where = f"{snapshot}[{origin.message}]"
        if call is None:
            return where if origin.block is None else f"{where}{prefix}.content[{origin.block}]"
        sites = origin.call_sites if isinstance(origin, Spelled) else ()
        path, arguments = sites[call] if call < len(sites) else (f".tool_calls[{call}]", ".args")
        where = f"{where}{prefix}{path}"
        return where if argument is None else f"{where}{arguments}{argument_step(argument)}"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        if first.message == last.message and first.block is not None and last.block is not None:
            prefix = first.prefix if isinstance(first, Spelled) else ""
            return f"{snapshot}[{first.message}]{prefix}.content[{first.block}:{last.block + 1}]"
        return f"{snapshot}[{first.message}:{last.message + 1}]"


LANGCHAIN = LangChainMessages()


def _fail(index: int, where: str, problem: str) -> LangChainInputError:
    return LangChainInputError(f"messages[{index}]{where} {problem}")


def _read(index: int, message: Any, neutral: list[dict[str, Any]], origins: list[Origin],
          notes: list[str]) -> None:
    found = spelling(message)
    if found is None:
        raise _fail(index, "", "is no LangChain message (serialized with lc and kwargs, "
                               "{type, data}, or a message's fields with type and content)")
    kind, fields, prefix = found
    if kind == "remove":
        notes.append(f"messages[{index}]: a RemoveMessage (an instruction to LangGraph's "
                     "add_messages, not a message) is not read")
        return
    try:
        converted, blocks, sites = _convert(index, kind, fields, prefix)
    except _NotPlain as exc:
        converted, blocks = _by_langchain(index, message, prefix, exc.reason)
        sites = ()
    for position, item in enumerate(converted):
        block = blocks[position]
        neutral.append(item)
        origins.append(_origin(index, block, prefix, sites if block is None else ()))


def _convert(index: int, kind: str, fields: dict[str, Any], prefix: str) -> tuple[
        list[dict[str, Any]], list[int | None], tuple[tuple[str, str], ...]]:
    """The message as `convert_to_openai_messages` converts it: the message (unless it held
    only tool results), then one `tool` message per `tool_result` block; the block each comes
    from (None: the message itself); where each call of the message sits."""
    if kind in CHUNKS:
        raise _NotPlain("a streamed message chunk")
    at = functools.partial(_fail, index)
    extra = fields.get("additional_kwargs") or {}
    if type(extra) is not dict:
        raise at(f"{prefix}.additional_kwargs", "must be an object")
    if kind == "system":
        role = extra.get("__openai_role__", "system")
        if type(role) is not str:
            raise at(f"{prefix}.additional_kwargs.__openai_role__", "must be a string")
    elif kind == "chat":
        role = fields.get("role")
        if type(role) is not str:
            raise at(f"{prefix}.role", "must be a string")
    else:
        role = ROLES[kind]
    out: dict[str, Any] = {"role": role}
    name = fields.get("name")
    if name is not None and type(name) is not str:
        raise at(f"{prefix}.name", "must be a string or null")
    if kind == "function" and not name:
        raise at(f"{prefix}.name", "must be a string (a FunctionMessage's name)")
    if name:
        out["name"] = name
    calls: list[dict[str, Any]] = []
    sites: list[tuple[str, str]] = []
    if kind == "ai":
        raw = fields.get("tool_calls") or []
        if type(raw) is not list:
            raise at(f"{prefix}.tool_calls", "must be an array")
        if not raw and not fields.get("invalid_tool_calls") and extra.get("tool_calls"):
            raise _NotPlain("raw additional_kwargs.tool_calls without tool_calls")
        for position, call in enumerate(raw):
            calls.append(_call(index, f"{prefix}.tool_calls[{position}]", call))
            sites.append((f".tool_calls[{position}]", ".args"))
        if calls:
            out["tool_calls"] = calls
    if extra.get("refusal"):
        out["refusal"] = extra["refusal"]
    if kind == "tool":
        call_id = fields.get("tool_call_id")
        if type(call_id) in (int, float):
            call_id = str(call_id)
        if type(call_id) is not str:
            raise at(f"{prefix}.tool_call_id", "must be a string")
        out["tool_call_id"] = call_id
    if "content" not in fields:
        raise at(f"{prefix}.content", "is missing")
    content = fields["content"]
    if kind == "tool":
        content = _tool_content(content)
    if type(content) is not str and type(content) is not list:
        raise at(f"{prefix}.content", "must be a string or an array")
    results: list[tuple[int, dict[str, Any]]] = []
    out["content"] = _content(index, prefix, content, kind, calls, out, sites, results)
    converted = [] if content and not out["content"] and results else [out]
    blocks: list[int | None] = [None] * len(converted)
    for position, result in results:
        converted.append(result)
        blocks.append(position)
    return converted, blocks, tuple(sites)


def _tool_content(content: Any) -> Any:
    """`ToolMessage.coerce_args`: content that is neither a string nor a list is its `str`,
    and so is each list item that is neither a string nor an object."""
    if type(content) is list:
        return [item if type(item) in (str, dict) else str(item) for item in content]
    if type(content) is str:
        return content
    return str(content)


def _call(index: int, where: str, call: Any) -> dict[str, Any]:
    if type(call) is not dict:
        raise _fail(index, where, "must be an object")
    name, args, call_id = call.get("name"), call.get("args"), call.get("id")
    if type(name) is not str:
        raise _fail(index, f"{where}.name", "must be a string")
    if type(args) is not dict:
        raise _fail(index, f"{where}.args", "must be an object")
    if call_id is not None and type(call_id) is not str:
        raise _fail(index, f"{where}.id", "must be a string or null")
    return {"type": "function", "id": call_id,
            "function": {"name": name, "arguments": _dumps(args)}}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _content(index: int, prefix: str, content: str | list[Any], kind: str,
             calls: list[dict[str, Any]], out: dict[str, Any], sites: list[tuple[str, str]],
             results: list[tuple[int, dict[str, Any]]]) -> str | list[Any]:
    if not content:
        return ""
    if type(content) is str:
        return content
    where = f"{prefix}.content"
    for position, block in enumerate(content):
        if type(block) is not str and type(block) is not dict:
            raise _fail(index, f"{where}[{position}]", "must be a string or an object")
    if all(isinstance(block, str) or block.get("type") == "text" for block in content):
        return "\n".join(_text(index, f"{where}[{p}]", block) for p, block in enumerate(content))
    blocks: list[Any] = []
    for position, block in enumerate(content):
        place = f"{where}[{position}]"
        if type(block) is str:
            blocks.append({"type": "text", "text": block})
            continue
        kind_of = block.get("type")
        if kind_of == "text":
            blocks.append({"type": "text", "text": _text(index, place, block)})
        elif kind_of == "image_url":
            if "image_url" not in block:
                raise _fail(index, place, "is an image_url block without image_url")
            blocks.append({"type": "image_url", "image_url": block["image_url"]})
        elif kind_of in DATA_BLOCK_TYPES or "image" in block or kind_of == "media":
            raise _NotPlain(f"a multimodal {kind_of or 'image'} block")
        elif kind_of == "input_audio":
            blocks.append(block)
        elif kind_of == "tool_use":
            _tool_use(index, place, block, kind, calls, out, sites, position)
        elif kind_of == "function_call":
            _function_call(index, place, block, kind, calls, out, sites, position)
            blocks.append(block)
        elif kind_of == "tool_result":
            results += [(position, result) for result in _tool_result(index, place, block)]
        elif kind_of == "json" or "json" in block:
            if "json" not in block:
                raise _fail(index, place, "is a json block without json")
            blocks.append({"type": "text", "text": json.dumps(block["json"])})
        elif kind_of == "guard_content" or "guard_content" in block:
            guarded = block.get("guard_content")
            if type(guarded) is not dict or "text" not in guarded:
                raise _fail(index, place, "is a guard_content block without guard_content.text")
            text = guarded["text"]
            blocks.append({"type": "text", "text": text["text"] if type(text) is dict else text})
        elif kind_of == "refusal":
            if block.get("refusal"):
                blocks.append({"type": "refusal", "refusal": block["refusal"]})
        else:
            blocks.append(block)
    for position, block in enumerate(blocks):
        if type(block) is not dict or "type" not in block:
            raise _fail(index, where, f"holds a block without a type (block {position} read)")
    if all(block["type"] == "text" for block in blocks):
        return "\n".join(_text(index, where, block) for block in blocks)
    return blocks


def _text(index: int, place: str, block: Any) -> str:
    if type(block) is str:
        return block
    text = block.get("text")
    if type(text) is not str:
        raise _fail(index, f"{place}.text", "must be a string")
    return text


def _known(calls: list[dict[str, Any]], call_id: Any) -> bool:
    return any(call["id"] == call_id for call in calls)


def _tool_use(index: int, place: str, block: dict[str, Any], kind: str,
              calls: list[dict[str, Any]], out: dict[str, Any], sites: list[tuple[str, str]],
              position: int) -> None:
    missing = [key for key in ("id", "name", "input") if key not in block]
    if missing:
        raise _fail(index, place, f"is a tool_use block without {', '.join(missing)}")
    if kind != "ai":
        raise _fail(index, place, "is a tool_use block outside an AIMessage")
    if not _known(calls[:len(fields_calls(sites))], block["id"]):
        call = {"type": "function", "id": block["id"],
                "function": {"name": block["name"], "arguments": _dumps(block["input"])}}
        calls.append(call)
        out["tool_calls"] = calls
        sites.append((f".content[{position}]", ".input"))


def _function_call(index: int, place: str, block: dict[str, Any], kind: str,
                   calls: list[dict[str, Any]], out: dict[str, Any],
                   sites: list[tuple[str, str]], position: int) -> None:
    if kind != "ai":
        raise _fail(index, place, "is a function_call block outside an AIMessage")
    if not _known(calls[:len(fields_calls(sites))], block.get("call_id")):
        missing = [key for key in ("call_id", "name", "arguments") if key not in block]
        if missing:
            raise _fail(index, place, f"is a function_call block without {', '.join(missing)}")
        calls.append({"type": "function", "id": block.get("call_id"),
                      "function": {"name": block.get("name"), "arguments": block.get("arguments")}})
        out["tool_calls"] = calls
        sites.append((f".content[{position}]", ".arguments"))


def fields_calls(sites: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls read from `tool_calls` (LangChain matches content blocks against those only)."""
    return [site for site in sites if site[0].startswith(".tool_calls")]


def _tool_result(index: int, place: str, block: dict[str, Any]) -> list[dict[str, Any]]:
    missing = [key for key in ("content", "tool_use_id") if key not in block]
    if missing:
        raise _fail(index, place, f"is a tool_result block without {', '.join(missing)}")
    fields = {"content": block["content"], "tool_call_id": block["tool_use_id"], "type": "tool"}
    try:
        converted, _, _ = _convert(index, "tool", fields, f"{place}")
    except _NotPlain as exc:
        raise _fail(index, place, f"holds {exc.reason}, which needs langchain-core to be read "
                                  f"as LangChain reads it ({EXTRA})") from None
    return converted


def _by_langchain(index: int, message: dict[str, Any], prefix: str,
                  reason: str) -> tuple[list[dict[str, Any]], list[int | None]]:
    """LangChain's own reading of one message (see the module docstring)."""
    try:
        load = importlib.import_module("langchain_core.load")
        messages = importlib.import_module("langchain_core.messages")
    except ImportError:
        raise _fail(index, "", f"holds {reason}, which needs langchain-core to be read as "
                               f"LangChain reads it ({EXTRA})") from None
    try:
        if prefix == ".kwargs":
            value = load.load(message, allowed_objects="core")
        elif prefix == ".data":
            [value] = messages.messages_from_dict([message])
        else:
            [value] = messages.messages_from_dict([{"type": message["type"], "data": message}])
        converted = messages.convert_to_openai_messages([value])
    except Exception as exc:
        raise _fail(index, "", f"cannot be read by LangChain: {exc}") from None
    content = (message.get("kwargs") or message.get("data") or message).get("content")
    results = [p for p, block in enumerate(content) if type(block) is dict
               and block.get("type") == "tool_result"] if type(content) is list else []
    own: list[int | None] = [None] * (len(converted) - len(results))
    return plain_copy(converted, functools.partial(_fail, index, "")), [*own, *results]
