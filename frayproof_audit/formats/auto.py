"""`auto`: read each snapshot in the format its own evidence names, among the five wire formats.

The decision reads the whole snapshot, never just its first marker, and never ranks evidence.
What counts as evidence is what makes one format's reading differ from the others':

* `openai`: a message with `tool_calls`, `tool_call_id`, `function_call` or `refusal` (any
  non-null value), or with role `tool` or `function` (and no `parts`);
* `anthropic`: a request object with `messages` or `system`, or a content block of type
  `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, `server_tool_use` or
  `*_tool_result`;
* `openai-responses`: a request object with `input` or `instructions`, or an item of a
  Responses type other than `message` (`function_call`, `function_call_output`, `reasoning`,
  `compaction`, `item_reference`, `*_call`, `*_call_output`, `mcp_*`), or a `message`-typed item
  whose content is a string or holds a Responses part (`input_text`, `output_text`,
  `input_image`, `input_file`, `input_audio`, `refusal`); a `message` type on Anthropic blocks
  is an Anthropic SDK dump, no evidence;
* `otel-genai`: a message with a `parts` array holding a typed part (`{"type": ...}`; Gemini's
  parts have no `type`, so an empty `parts` array is no evidence), or a snapshot that is a JSON
  string (as spans carry `gen_ai.input.messages`; no other format takes one);
* `gemini`: a message with role `model`, or with a part that has no `type` and holds Gemini
  part data (`text`, `functionCall`, `functionResponse`, `inlineData`, `fileData`,
  `executableCode`, `codeExecutionResult`, `thought`).

Evidence of two or more formats is an `AmbiguousFormat` error naming the first of each: two
readings that both fit would give different verdicts (a thinking block before a Chat
`tool_calls` must not quietly pick either). No evidence reads as `openai`: plain turns
(`{role, content}` with strings, text, image or document blocks) mean the same in `openai`,
`anthropic` and `openai-responses` (the same views, so the same verdicts), a snapshot
without any typed part is no OpenTelemetry message list, and messages whose `parts` are all
empty read alike as `openai`, `otel-genai` and `gemini` (empty messages of their role). The
`Loaded` returned is the delegate's, so `loaded.format.name` is the detected format; a default
reading is marked `loaded.guessed` so a pair can be labelled by the snapshot that had evidence.
It is no note for `format_notes` to report: nothing was read leniently.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats.anthropic import ANTHROPIC
from frayproof_audit.formats.base import Format
from frayproof_audit.formats.gemini import GEMINI
from frayproof_audit.formats.openai import OPENAI, ChatShaped
from frayproof_audit.formats.otel import OTEL_GENAI, parse_messages
from frayproof_audit.formats.responses import OPENAI_RESPONSES
from frayproof_audit.loaded import Loaded, Origin

OPENAI_FIELDS = ("tool_calls", "tool_call_id", "function_call", "refusal")
OPENAI_ROLES = ("tool", "function")
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking",
                              "server_tool_use"})
ANTHROPIC_REQUEST = ("messages", "system")
RESPONSES_REQUEST = ("input", "instructions")
RESPONSES_ITEMS = frozenset({"function_call", "function_call_output", "reasoning", "compaction",
                             "item_reference"})
RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file",
                             "input_audio", "refusal"})
GEMINI_PARTS = ("functionCall", "functionResponse", "text", "inlineData", "fileData",
                "executableCode", "codeExecutionResult", "thought")
"""Part data keys of Gemini's untyped parts, in the order evidence names them."""
ORDER = (OPENAI.name, ANTHROPIC.name, OPENAI_RESPONSES.name, OTEL_GENAI.name, GEMINI.name)
"""The formats `auto` chooses among; an `Evidence.format` is one of them."""


class AmbiguousFormat(InputError):
    """A snapshot holding evidence of two formats: `auto` does not guess between them."""


class UnknownShape(InputError):
    """A request object naming no format's fields: `auto` has nothing to go on."""


class Evidence(NamedTuple):
    """Why a snapshot looks like `format`: `place` (`messages[2]`) `what` (`has tool_calls`)."""

    format: str
    place: str
    what: str
    order: int
    """Where it sits (the message index; -1 for the top level), to name the earlier first."""

    def __str__(self) -> str:
        return f"{self.place} {self.what} ({self.format})"


def find_evidence(snapshot: Any) -> dict[str, Evidence]:
    """The first evidence of each format in the snapshot, by format name (absent: none).
    Tolerates anything: values that are not messages are the chosen format's to reject."""
    found: dict[str, Evidence] = {}
    messages, name = snapshot, "messages"
    if isinstance(snapshot, dict):
        _request_evidence(snapshot, found)
        if "messages" not in snapshot and "input" in snapshot:
            name = "input"
        messages = snapshot.get(name)
    if not isinstance(messages, list | tuple):
        return found
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        for evidence in (_openai_evidence, _anthropic_evidence, _responses_evidence,
                         _otel_evidence, _gemini_evidence):
            seen = evidence(index, message)
            if seen is not None and seen.format not in found:
                if name != "messages":
                    seen = seen._replace(place=seen.place.replace("messages", name, 1))
                found[seen.format] = seen
        if len(found) == len(ORDER):
            break
    return found


def _request_evidence(snapshot: dict[Any, Any], found: dict[str, Evidence]) -> None:
    for fmt, keys in ((ANTHROPIC.name, ANTHROPIC_REQUEST), (OPENAI_RESPONSES.name, RESPONSES_REQUEST)):
        key = next((key for key in keys if key in snapshot), None)
        if key is not None:
            found[fmt] = Evidence(fmt, "the snapshot", f"is a request object with {key!r}", -1)


def _openai_evidence(index: int, message: dict[Any, Any]) -> Evidence | None:
    for key in OPENAI_FIELDS:
        if message.get(key) is not None:
            return Evidence(OPENAI.name, f"messages[{index}]", f"has {key}", index)
    role = message.get("role")
    if type(role) is str and role in OPENAI_ROLES and "parts" not in message:
        return Evidence(OPENAI.name, f"messages[{index}]", f"has role {role!r}", index)
    return None


def _anthropic_evidence(index: int, message: dict[Any, Any]) -> Evidence | None:
    content = message.get("content")
    if not isinstance(content, list | tuple):
        return None
    for position, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if type(kind) is str and (kind in ANTHROPIC_BLOCKS or kind.endswith("_tool_result")):
            return Evidence(ANTHROPIC.name, f"messages[{index}].content[{position}]",
                            f"is a {kind} block", index)
    return None


def _responses_evidence(index: int, item: dict[Any, Any]) -> Evidence | None:
    kind = item.get("type")
    if type(kind) is not str:
        return None
    if kind in RESPONSES_ITEMS or kind.endswith(("_call", "_call_output")) or kind.startswith("mcp_"):
        return Evidence(OPENAI_RESPONSES.name, f"messages[{index}]", f"is a {kind} item", index)
    if kind != "message":
        return None
    content = item.get("content")
    if type(content) is str:
        return Evidence(OPENAI_RESPONSES.name, f"messages[{index}]",
                        "is a message item with string content", index)
    if isinstance(content, list | tuple):
        for position, part in enumerate(content):
            part_kind = part.get("type") if isinstance(part, dict) else None
            if type(part_kind) is str and part_kind in RESPONSES_PARTS:
                return Evidence(OPENAI_RESPONSES.name, f"messages[{index}].content[{position}]",
                                f"is an {part_kind} part of a message item", index)
    return None


def _otel_evidence(index: int, message: dict[Any, Any]) -> Evidence | None:
    parts = message.get("parts")
    if not isinstance(parts, list | tuple):
        return None
    if any(isinstance(part, dict) and type(part.get("type")) is str for part in parts):
        return Evidence(OTEL_GENAI.name, f"messages[{index}]", "has parts", index)
    return None


def _gemini_evidence(index: int, message: dict[Any, Any]) -> Evidence | None:
    if message.get("role") == "model":
        return Evidence(GEMINI.name, f"messages[{index}]", "has role 'model'", index)
    parts = message.get("parts")
    if not isinstance(parts, list | tuple):
        return None
    for position, part in enumerate(parts):
        if isinstance(part, dict) and "type" not in part:
            key = next((key for key in GEMINI_PARTS if key in part), None)
            if key is not None:
                return Evidence(GEMINI.name, f"messages[{index}].parts[{position}]",
                                f"is a {key} part", index)
    return None


_BY_NAME: dict[str, Format] = {OPENAI.name: OPENAI, ANTHROPIC.name: ANTHROPIC,
                               OPENAI_RESPONSES.name: OPENAI_RESPONSES, OTEL_GENAI.name: OTEL_GENAI,
                               GEMINI.name: GEMINI}


def detect(snapshot: Any) -> tuple[Format, bool]:
    """The format a snapshot's evidence names, and whether there was any. A string snapshot
    is parsed first (only `otel-genai` takes one); see `read` for the parsed value."""
    return _decide(snapshot)[:2]


def _decide(snapshot: Any) -> tuple[Format, bool, Any]:
    found: dict[str, Evidence] = {}
    if isinstance(snapshot, str):
        found[OTEL_GENAI.name] = Evidence(OTEL_GENAI.name, "the snapshot",
                                          "is a JSON string (a span attribute)", -1)
        snapshot = parse_messages(str(snapshot))
    for fmt, evidence in find_evidence(snapshot).items():
        found.setdefault(fmt, evidence)
    if len(found) > 1:
        first, *others = sorted(found.values(), key=lambda seen: (seen.order, ORDER.index(seen.format)))
        raise AmbiguousFormat(
            f"Cannot tell the input format: {first} but {' and '.join(map(str, others))}. Name "
            "the format (the contract's `format`, the record's `format` field, or --input-format)")
    if found:
        return _BY_NAME[next(iter(found))], True, snapshot
    if isinstance(snapshot, dict):
        raise UnknownShape(
            "Cannot tell the input format: the snapshot is an object with none of "
            f"{', '.join(ANTHROPIC_REQUEST)} (anthropic) or {', '.join(RESPONSES_REQUEST)} "
            "(openai-responses). Name the format, or pass the message list")
    return OPENAI, False, snapshot


class AutoFormat(ChatShaped):
    """The `auto` format: `load` detects and delegates. Its own `views`, `identity`, `site`
    and `span` serve only values built without a detected format; neutral dicts are
    Chat-shaped, so they are openai's."""

    name = "auto"
    containers: tuple[type, ...] = (list, dict, str)

    def load(self, snapshot: Any) -> Loaded:
        fmt, evident, value = _decide(snapshot)
        return _marked(fmt.load(value), evident)

    def load_copy(self, snapshot: Any) -> Loaded:
        fmt, evident, value = _decide(snapshot)
        if value is not snapshot:  # parsed from a string: already a fresh value of our own
            return _marked(fmt.load(value), evident)
        return _marked(fmt.load_copy(value), evident)

    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        return OPENAI.site(snapshot, origin, call, argument)

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        return OPENAI.span(snapshot, first, last)


AUTO = AutoFormat()


def _marked(loaded: Loaded, evident: bool) -> Loaded:
    if not evident:
        loaded.guessed = True
    return loaded


def pair_format(before: Loaded, after: Loaded) -> str:
    """The format name to record for a pair: after's, unless only before had evidence (an
    anthropic session compacted into plain text turns is an anthropic pair)."""
    if after.guessed and not before.guessed:
        return before.format.name
    return after.format.name
