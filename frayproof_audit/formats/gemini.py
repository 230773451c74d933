"""Google Gemini `Content[]`: the `gemini` format (the Gemini API's `contents`, Gemini CLI's history).

A snapshot is a list of `Content {role, parts[]}`: `role` is `user` or `model`, and each
`Part` holds one kind of data under its own key (`text`, `functionCall`, `functionResponse`,
`inlineData`, `fileData`, `executableCode`, `codeExecutionResult`, ...), a thought being a
text part with `thought: true`. The Gemini API (and Gemini CLI, which sends the history as it
holds it) answers the calls of a `model` turn with a `user` turn of `functionResponse` parts.

Neutral messages are built part by part, in wire order, as for `otel-genai`:

* every `functionResponse {id?, name, response}` part, in any role's Content, is a neutral
  `tool` message of its own (origin `(i, j)`, site `after[i].parts[j]`): its `id` is the
  `tool_call_id`, its `name` the message's `name`, and its `response` the content: the text
  itself when the response is `{"output": "<text>"}` (Gemini CLI's spelling of a tool's
  output), else the response's canonical JSON text;
* every maximal run of other parts is one neutral message (origin `i`, site `after[i]`) of the
  Content's role, `model` read as `assistant`: `functionCall {id?, name, args?}` parts are its
  calls (`arguments` is the compact JSON of `args`, key order kept, as for Anthropic's `input`;
  no `args`, no arguments text), a text part a text block (a run of one plain text part is
  string content), a thought (`thought: true`) a `thought` block that counts as content but is
  not searched, and every other part a content block typed by its data key
  (`{"type": "inlineData", "inlineData": {...}}`);
* a Content without parts is one empty neutral message.

A part's keys other than its data (`thoughtSignature`, ...) stay with the block, call or result
made from it; a Content's keys other than `role` and `parts` are metadata of every neutral
message read from it. Ids are optional on Gemini's wire (the API pairs a response with its call
by position); a call without one reads with an empty id and a response without one with none,
which the structure check reports: Gemini CLI always writes them. Sites follow the parts:
`after[4].parts[1]` for a call or a response, `after[4].parts[1].functionCall.args.path` for an
argument; findings' message indices are Content indices.
"""

from __future__ import annotations

import functools
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.anthropic import compact_json, fresh_copies
from frayproof_audit.formats.evidence import EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped, argument_step
from frayproof_audit.formats.writer import Writer
from frayproof_audit.jsonio import canonical, plain_copy
from frayproof_audit.loaded import Loaded, Origin
from frayproof_audit.model import MODELLED_FIELDS

CALL, RESPONSE, TEXT, THOUGHT = "functionCall", "functionResponse", "text", "thought"
ROLES = {"model": "assistant"}
"""Wire roles read as another neutral role; every other role is read as written."""
DATA_KEYS = ("inlineData", "fileData", "executableCode", "codeExecutionResult", "videoMetadata")
"""Part data keys other than text, calls and responses, in the order a block is typed by."""
_MESSAGE_KEYS = frozenset({"role", "parts"}) | MODELLED_FIELDS
_CALL_KEYS = frozenset({"id", "name", "args"})
_RESPONSE_KEYS = frozenset({"id", "name", "response"})


class GeminiInputError(InputError):
    """A `gemini` snapshot that cannot be read; the message names the Content and part."""


EVIDENCE_KEYS = (CALL, RESPONSE, TEXT, "inlineData", "fileData", "executableCode",
                 "codeExecutionResult", THOUGHT)
"""Part data keys of Gemini's untyped parts, in the order evidence names them."""


def contents_evidence(index: int, content: dict[Any, Any]) -> tuple[str, str] | None:
    """`auto`'s evidence of Gemini Contents: role `model`, or a part that has no `type` and
    holds Gemini part data (`text`, `functionCall`, `functionResponse`, `inlineData`,
    `fileData`, `executableCode`, `codeExecutionResult`, `thought`)."""
    if content.get("role") == "model":
        return f"messages[{index}]", "has role 'model'"
    parts = content.get("parts")
    if not isinstance(parts, list | tuple):
        return None
    for position, part in enumerate(parts):
        if isinstance(part, dict) and "type" not in part:
            key = next((key for key in EVIDENCE_KEYS if key in part), None)
            if key is not None:
                return f"messages[{index}].parts[{position}]", f"is a {key} part"
    return None


class GeminiContents(ChatShaped):
    """The `gemini` format: Gemini `Content` lists. It has no writer yet: `repair` and
    `compact` refuse it, and an audit's findings on it are never repairable."""

    name = "gemini"
    containers: tuple[type, ...] = (list,)
    evidence: EvidenceRules | None = EvidenceRules(message=contents_evidence)
    writer: Writer | None = None

    def load(self, contents: list[Any]) -> Loaded:
        if type(contents) is not list:
            raise GeminiInputError("A snapshot must be an array of Content objects")
        reader = _Reader()
        for index, content in enumerate(contents):
            reader.content(index, content)
        neutral = reader.neutral
        return Loaded(neutral, OPENAI.views(neutral), self, origins=tuple(reader.origins))

    def load_copy(self, contents: list[Any]) -> Loaded:
        """Detached Content by Content, so an error names its Content."""
        if not isinstance(contents, list):
            raise GeminiInputError("A snapshot must be an array of Content objects")
        return self.load([
            plain_copy([content], functools.partial(_fail, index, ""))[0]
            for index, content in enumerate(contents)
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
        return where if argument is None else f"{where}.functionCall.args{argument_step(argument)}"

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        if first.message == last.message and first.block is not None and last.block is not None:
            return f"{snapshot}[{first.message}].parts[{first.block}:{last.block + 1}]"
        return f"{snapshot}[{first.message}:{last.message + 1}]"


GEMINI = GeminiContents()


def _fail(index: int, where: str, problem: str) -> GeminiInputError:
    return GeminiInputError(f"contents[{index}]{where} {problem}")


def response_content(response: Any) -> str | None:
    """The neutral content of a `functionResponse.response`: Gemini CLI's `{"output": text}`
    as the text, null as null, anything else as canonical JSON text."""
    if response is None:
        return None
    if type(response) is dict and response.keys() == {"output"} and type(response["output"]) is str:
        text: str = response["output"]
        return text
    return canonical(response).decode("utf-8")


class _Reader:
    """Turns Contents into neutral messages, collecting origins."""

    def __init__(self) -> None:
        self.neutral: list[dict[str, Any]] = []
        self.origins: list[Origin] = []

    def content(self, index: int, content: Any) -> None:
        if type(content) is not dict:
            raise _fail(index, "", "must be an object")
        role = content.get("role")
        if role is None:
            role = ""  # as `openai`: a missing role is the structure check's finding
        elif type(role) is not str:
            raise _fail(index, ".role", "must be a string")
        role = ROLES.get(role, role)
        parts = content.get("parts")
        if type(parts) is not list:
            raise _fail(index, ".parts", "must be an array of parts")
        fresh = fresh_copies({key: value for key, value in content.items()
                               if key not in _MESSAGE_KEYS})
        blocks: list[Any] = []
        calls: list[dict[str, Any]] = []
        positions: list[int] = []
        emitted = False
        for position, part in enumerate(parts):
            where = f".parts[{position}]"
            if type(part) is not dict:
                raise _fail(index, where, "must be an object")
            if RESPONSE in part:
                if blocks or calls:
                    self._emit(index, fresh(), role, blocks, calls, positions)
                    blocks, calls, positions = [], [], []
                self._response(index, position, part, fresh())
                emitted = True
            elif CALL in part:
                calls.append(_call(index, position, part))
                positions.append(position)
            else:
                blocks.append(_block(index, position, part))
        if blocks or calls or not emitted:
            self._emit(index, fresh(), role, blocks, calls, positions)

    def _emit(self, index: int, base: dict[str, Any], role: str, blocks: list[Any],
              calls: list[dict[str, Any]], positions: list[int]) -> None:
        neutral = {**base, "role": role, "content": _content(blocks)}
        if calls:
            neutral["tool_calls"] = calls
        self.neutral.append(neutral)
        self.origins.append(Origin(index, calls=tuple(positions)) if positions else Origin(index))

    def _response(self, index: int, position: int, part: dict[str, Any],
                  base: dict[str, Any]) -> None:
        where = f".parts[{position}].{RESPONSE}"
        response = part[RESPONSE]
        if type(response) is not dict:
            raise _fail(index, where, "must be an object")
        call_id = _optional_string(index, f"{where}.id", response.get("id"))
        name = _optional_string(index, f"{where}.name", response.get("name"))
        extra = {key: value for key, value in part.items() if key != RESPONSE}
        unmodelled = {key: value for key, value in response.items() if key not in _RESPONSE_KEYS}
        if unmodelled:
            extra[RESPONSE] = unmodelled
        neutral: dict[str, Any] = {**base, **extra, "role": "tool"}
        if name is not None:
            neutral["name"] = name
        if call_id is not None:
            neutral["tool_call_id"] = call_id
        neutral["content"] = response_content(response.get("response"))
        self.neutral.append(neutral)
        self.origins.append(Origin(index, position))


def _optional_string(index: int, where: str, value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise _fail(index, where, "must be a string or null")
    return value


def _call(index: int, position: int, part: dict[str, Any]) -> dict[str, Any]:
    where = f".parts[{position}].{CALL}"
    call = part[CALL]
    if type(call) is not dict:
        raise _fail(index, where, "must be an object")
    name = call.get("name", "")
    if type(name) is not str:
        raise _fail(index, f"{where}.name", "must be a string")
    call_id = _optional_string(index, f"{where}.id", call.get("id"))
    args = call.get("args")
    if args is not None and type(args) is not dict:
        raise _fail(index, f"{where}.args", "must be an object or null")
    function: dict[str, Any] = {"name": name, "arguments": "" if args is None else compact_json(args)}
    extra = {key: value for key, value in part.items() if key != CALL}
    unmodelled = {key: value for key, value in call.items() if key not in _CALL_KEYS}
    if unmodelled:
        extra[CALL] = unmodelled
    return {**extra, "id": call_id or "", "type": "function", "function": function}


def _block(index: int, position: int, part: dict[str, Any]) -> dict[str, Any]:
    """The neutral content block of a part that is neither a call nor a response."""
    if TEXT in part:
        text = part[TEXT]
        if type(text) is not str:
            raise _fail(index, f".parts[{position}].{TEXT}", "must be a string")
        rest = {key: value for key, value in part.items() if key != TEXT}
        kind = THOUGHT if part.get(THOUGHT) is True else TEXT
        return {**rest, "type": kind, "text": text}
    data = next((key for key in DATA_KEYS if key in part), None)
    return {**part, "type": data if data is not None else next(iter(part), "part")}


def _content(blocks: list[Any]) -> str | list[Any] | None:
    """No blocks: no content; one plain text block: its string (as most messages are)."""
    if not blocks:
        return None
    if len(blocks) == 1 and blocks[0].keys() == {"type", "text"} and blocks[0]["type"] == TEXT:
        text: str = blocks[0]["text"]
        return text
    return blocks
