"""OpenTelemetry GenAI messages: the `otel-genai` format.

Observability exports (Langfuse, LangSmith, Phoenix, any OTLP collector) carry a model call's
history as the `gen_ai.input.messages` attribute: a list of `ChatMessage {role, parts[], name?,
finish_reason?}`. Spans hold attributes as strings, and exports keep them so, hence a snapshot
is that list **or a string holding it as JSON** (`containers = (list, str)`; a library caller's
Python string is still a file path, so the string form arrives through corpus records and
snapshot files).

Neutral messages are built part by part, in wire order:

* every `tool_call_response` part, in any role's message, is a neutral `tool` message of its
  own (origin `(i, j)`, site `after[i].parts[j]`): its `id` is the `tool_call_id`, its
  `response` the content (a string as is; any other JSON value as canonical JSON text);
* every maximal run of other parts is one neutral message of the wire role (origin `i`, site
  `after[i]`): `tool_call` parts are its calls (`arguments` text as is, any other JSON value as
  canonical JSON text, so key order never matters; a call's site is its own part), text parts
  text blocks (a run holding one plain text part has string content), a `compaction` part with
  a summary a text block that keeps the part's other keys under `compaction` (pins see the
  summary the model reads), and every other part (reasoning, blob, file, uri, server tool calls
  and their responses, a compaction without summary, unknown types) a content block as written:
  it counts as content, its text is not searched;
* a message without parts is one empty neutral message.

Two known variations of exported data are read leniently, and each reading is recorded in
`Loaded.notes`, which the `format_notes` check reports: `result` written for `response` (the
conventions' own example does it) and ids with surrounding whitespace (stripped; a blank id is
left for the checks). `finish_reason`, an output attribute, is not part of a message; other
unknown message keys are metadata, as in `openai`.
"""

from __future__ import annotations

import functools
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.block_writer import BlockWriter
from frayproof_audit.formats.evidence import EvidenceRules, TextEvidence
from frayproof_audit.formats.openai import OPENAI, ChatShaped, argument_step
from frayproof_audit.formats.writer import Writer
from frayproof_audit.jsonio import JSONProblem, canonical, loads_strict, plain_copy
from frayproof_audit.loaded import Loaded, Origin
from frayproof_audit.model import MODELLED_FIELDS

TEXT, CALL, RESPONSE, COMPACTION = "text", "tool_call", "tool_call_response", "compaction"
_MESSAGE_KEYS = frozenset({"role", "parts", "name", "finish_reason"}) | MODELLED_FIELDS
"""Keys that are not a message's metadata (modelled neutral fields never come from the wire)."""
_CALL_KEYS = frozenset({"type", "id", "name", "arguments", "function"})
_RESPONSE_KEYS = frozenset({"type", "id", "response"}) | MODELLED_FIELDS


class OtelInputError(InputError):
    """An `otel-genai` snapshot that cannot be read; the message names the message and part."""


def parts_evidence(index: int, message: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of OpenTelemetry GenAI messages: a `parts` array holding a typed part
    (`{"type": ...}`; Gemini's parts have no `type`, so an empty `parts` array is no
    evidence). A snapshot that is a JSON string is evidence too (as spans carry
    `gen_ai.input.messages`; no other format takes one)."""
    parts = message.get("parts")
    if not isinstance(parts, list | tuple):
        return None
    if any(isinstance(part, dict) and type(part.get("type")) is str for part in parts):
        return f"messages[{index}]", "has parts"
    return None


class OtelGenAI(ChatShaped):
    """The `otel-genai` format: OpenTelemetry GenAI `ChatMessage` lists."""

    name = "otel-genai"
    containers: tuple[type, ...] = (list, str)
    evidence: EvidenceRules | None = EvidenceRules(
        message=parts_evidence,
        text=TextEvidence("is a JSON string (a span attribute)", lambda text: parse_messages(text)))
    writer: Writer | None = BlockWriter("parts", "tool")

    def load(self, messages: list[Any] | str) -> Loaded:
        value = parse_messages(messages) if type(messages) is str else messages
        if type(value) is not list:
            raise OtelInputError("A snapshot must be an array of message objects")
        reader = _Reader()
        for index, message in enumerate(value):
            reader.message(index, message)
        neutral = reader.neutral
        return Loaded(neutral, OPENAI.views(neutral), self, origins=tuple(reader.origins),
                      notes=tuple(reader.notes))

    def load_copy(self, messages: list[Any] | str) -> Loaded:
        """A string is parsed afresh; a list is detached message by message, like `openai`."""
        if isinstance(messages, str):
            return self.load(str(messages))
        return self.load([
            plain_copy([message], functools.partial(_fail, index, ""))[0]
            for index, message in enumerate(messages)
        ])

    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        if call is None:
            where = f"{snapshot}[{origin.message}]"
            return where if origin.block is None else f"{where}.parts[{origin.block}]"
        positions = origin.calls
        part = positions[call] if positions is not None and call < len(positions) else call
        where = f"{snapshot}[{origin.message}].parts[{part}]"
        return where if argument is None else f"{where}.arguments{argument_step(argument)}"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        if first.message == last.message and first.block is not None and last.block is not None:
            return f"{snapshot}[{first.message}].parts[{first.block}:{last.block + 1}]"
        return f"{snapshot}[{first.message}:{last.message + 1}]"


OTEL_GENAI = OtelGenAI()


def parse_messages(text: str) -> Any:
    """The value a `gen_ai.input.messages` string holds, read as strictly as a file."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise OtelInputError("The messages string holds a lone surrogate (not Unicode text)") from None
    try:
        value = loads_strict(data)
    except JSONProblem as exc:
        raise OtelInputError(f"The messages string is not valid JSON: {exc}") from None
    if type(value) is not list:
        raise OtelInputError("The messages string must hold an array of message objects")
    return value


def _fail(index: int, where: str, problem: str) -> OtelInputError:
    return OtelInputError(f"messages[{index}]{where} {problem}")


class _Reader:
    """Turns wire messages into neutral ones, collecting origins and notes."""

    def __init__(self) -> None:
        self.neutral: list[dict[str, Any]] = []
        self.origins: list[Origin] = []
        self.notes: list[str] = []

    def message(self, index: int, message: Any) -> None:
        if type(message) is not dict:
            raise _fail(index, "", "must be an object")
        role = message.get("role")
        if role is None:
            role = ""  # as `openai`: a missing role is the structure check's finding
        elif type(role) is not str:
            raise _fail(index, ".role", "must be a string")
        parts = message.get("parts")
        if type(parts) is not list:
            raise _fail(index, ".parts", "must be an array of parts")
        name = message.get("name")
        if name is not None and type(name) is not str:
            raise _fail(index, ".name", "must be a string or null")
        base = {key: value for key, value in message.items() if key not in _MESSAGE_KEYS}
        if name is not None:
            base["name"] = name
        blocks: list[Any] = []
        calls: list[dict[str, Any]] = []
        positions: list[int] = []
        emitted = False
        for position, part in enumerate(parts):
            where = f".parts[{position}]"
            if type(part) is not dict:
                raise _fail(index, where, "must be an object")
            kind = part.get("type")
            if type(kind) is not str:
                raise _fail(index, f"{where}.type", "must be a string")
            if kind == RESPONSE:
                if blocks or calls:
                    self._emit(index, base, role, blocks, calls, positions)
                    blocks, calls, positions = [], [], []
                self._response(index, position, part, base)
                emitted = True
            elif kind == CALL:
                calls.append(self._call(index, position, part))
                positions.append(position)
            else:
                blocks.append(_block(index, position, part, kind))
        if blocks or calls or not emitted:
            self._emit(index, base, role, blocks, calls, positions)

    def _emit(self, index: int, base: dict[str, Any], role: str, blocks: list[Any],
              calls: list[dict[str, Any]], positions: list[int]) -> None:
        neutral = {**base, "role": role, "content": _content(blocks)}
        if calls:
            neutral["tool_calls"] = calls
        self.neutral.append(neutral)
        self.origins.append(Origin(index, calls=tuple(positions)) if positions else Origin(index))

    def _response(self, index: int, position: int, part: dict[str, Any],
                  base: dict[str, Any]) -> None:
        call_id = self._id(index, position, part)
        used = "response"
        if "response" not in part and "result" in part:
            used = "result"
            self.notes.append(f"messages[{index}].parts[{position}]: 'result' read as 'response'")
        extra = {key: value for key, value in part.items()
                 if key not in _RESPONSE_KEYS and key != used}
        neutral = {**base, **extra, "role": "tool", "content": _response_content(part.get(used))}
        if call_id is not None:
            neutral["tool_call_id"] = call_id
        self.neutral.append(neutral)
        self.origins.append(Origin(index, position))

    def _call(self, index: int, position: int, part: dict[str, Any]) -> dict[str, Any]:
        name = part.get("name")
        if type(name) is not str:
            raise _fail(index, f".parts[{position}].name", "must be a string")
        call_id = self._id(index, position, part)
        function: dict[str, Any] = {"name": name}
        arguments = part.get("arguments")
        if arguments is not None:  # absent and null alike: no arguments written
            function["arguments"] = (
                arguments if type(arguments) is str else canonical(arguments).decode("utf-8"))
        extra = {key: value for key, value in part.items() if key not in _CALL_KEYS}
        return {**extra, "id": call_id or "", "type": "function", "function": function}

    def _id(self, index: int, position: int, part: dict[str, Any]) -> str | None:
        """A call or response id; surrounding whitespace is stripped, with a note (a blank id
        stays as written: the checks report it)."""
        value = part.get("id")
        if value is None:
            return None
        if type(value) is not str:
            raise _fail(index, f".parts[{position}].id", "must be a string or null")
        stripped = value.strip()
        if stripped and stripped != value:
            self.notes.append(f"messages[{index}].parts[{position}]: id {value!r} has"
                              f" surrounding whitespace (read as {stripped!r})")
            return stripped
        return value


def _block(index: int, position: int, part: dict[str, Any], kind: str) -> Any:
    """The neutral content block of a part that is neither a call nor a response."""
    if kind == TEXT:
        text = part.get("content")
        if type(text) is not str:
            raise _fail(index, f".parts[{position}].content", "must be a string")
        rest = {key: value for key, value in part.items() if key not in ("type", "content", "text")}
        return {**rest, "type": "text", "text": text}
    if kind == COMPACTION and type(part.get("content")) is str:
        rest = {key: value for key, value in part.items() if key not in ("type", "content")}
        return {"type": "text", "text": part["content"], "compaction": rest}
    return part


def _content(blocks: list[Any]) -> str | list[Any] | None:
    """No blocks: no content; one plain text block: its string (as most messages are)."""
    if not blocks:
        return None
    if len(blocks) == 1 and blocks[0].keys() == {"type", "text"} and blocks[0]["type"] == TEXT:
        text: str = blocks[0]["text"]
        return text
    return blocks


def _response_content(response: Any) -> str | None:
    if response is None or type(response) is str:
        return response
    return canonical(response).decode("utf-8")
