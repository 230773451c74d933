"""`auto`: read each snapshot in the format its own evidence names, among the registered formats.

The decision reads the whole snapshot, never just its first marker, and never ranks evidence.
What counts as evidence is what makes one format's reading differ from the others', and each
format states its own (`Format.evidence`, `formats.evidence`): for the six formats here,

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
  `executableCode`, `codeExecutionResult`, `thought`);
* `langchain`: a serialized LangChain message (`lc`, `type: "constructor"`, a message class in
  `id`), or a message typed `human`, `ai`, `system`, `tool`, `chat`, `function` or `remove`
  (or a chunk) with `content` or `data` and no `role`.

Evidence of two or more formats is an `AmbiguousFormat` error naming the first of each (ties
in place broken by registry order): two readings that both fit would give different verdicts
(a thinking block before a Chat `tool_calls` must not quietly pick either). No evidence reads
as `openai`: plain turns (`{role, content}` with strings, text, image or document blocks) mean
the same in `openai`, `anthropic` and `openai-responses` (the same views, so the same
verdicts), a snapshot without any typed part is no OpenTelemetry message list, and messages
whose `parts` are all empty read alike as `openai`, `otel-genai` and `gemini` (empty messages
of their role). The `Loaded` returned is the delegate's, so `loaded.format.name` is the
detected format; a default reading is marked `loaded.guessed` so a pair can be labelled by the
snapshot that had evidence. It is no note for `format_notes` to report: nothing was read
leniently.

`AUTO` chooses among the registry it belongs to (`formats.FORMATS`, which builds it), read at
each call, so a format registered later takes part at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats.base import Format, evidence_of
from frayproof_audit.formats.evidence import Evidence, EvidenceRules
from frayproof_audit.formats.openai import OPENAI, ChatShaped
from frayproof_audit.formats.writer import Writer
from frayproof_audit.loaded import Loaded, Origin

__all__ = ["AmbiguousFormat", "AutoFormat", "Evidence", "UnknownShape", "pair_format"]


class AmbiguousFormat(InputError):
    """A snapshot holding evidence of two formats: `auto` does not guess between them."""


class UnknownShape(InputError):
    """A request object naming no format's fields: `auto` has nothing to go on."""


class AutoFormat(ChatShaped):
    """The `auto` format: `load` detects and delegates. Its own `views`, `identity`, `site`
    and `span` serve only values built without a detected format; neutral dicts are
    Chat-shaped, so they are openai's."""

    name = "auto"
    evidence: EvidenceRules | None = None
    """`auto` is no format a snapshot could show signs of."""
    writer: Writer | None = None
    """A transcript is always read in the detected format, whose writer writes it back."""

    def __init__(self, among: Mapping[str, Format]) -> None:
        self._among = among

    def candidates(self) -> list[tuple[Format, EvidenceRules]]:
        """The registered formats that state evidence, in registry order (the order in which
        an ambiguity names evidence found at the same place)."""
        found = []
        for fmt in self._among.values():
            rules = evidence_of(fmt)
            if rules is not None:
                found.append((fmt, rules))
        return found

    @property
    def containers(self) -> tuple[type, ...]:
        """Whatever one of the candidates takes (a list, a request object, a JSON string)."""
        return tuple(dict.fromkeys(kind for fmt, _ in self.candidates() for kind in fmt.containers))

    def find_evidence(self, snapshot: Any) -> dict[str, Evidence]:
        """The first evidence of each format in the snapshot, by format name (absent: none).
        Tolerates anything: values that are not messages are the chosen format's to reject."""
        return _find_evidence(snapshot, self.candidates())

    def detect(self, snapshot: Any) -> tuple[Format, bool]:
        """The format a snapshot's evidence names, and whether there was any. A string snapshot
        is parsed first (by the format that takes one)."""
        return self._decide(snapshot)[:2]

    def _decide(self, snapshot: Any) -> tuple[Format, bool, Any]:
        candidates = self.candidates()
        found: dict[str, Evidence] = {}
        if isinstance(snapshot, str):
            readers = [(fmt, rules.text) for fmt, rules in candidates if rules.text is not None]
            for fmt, text in readers:
                found[fmt.name] = Evidence(fmt.name, "the snapshot", text.what, -1)
            if readers:
                snapshot = readers[0][1].parse(str(snapshot))
        for name, evidence in _find_evidence(snapshot, candidates).items():
            found.setdefault(name, evidence)
        if len(found) > 1:
            rank = {fmt.name: position for position, (fmt, _) in enumerate(candidates)}
            first, *others = sorted(found.values(), key=lambda seen: (seen.order, rank[seen.format]))
            raise AmbiguousFormat(
                f"Cannot tell the input format: {first} but {' and '.join(map(str, others))}. Name "
                "the format (the contract's `format`, the record's `format` field, or --input-format)")
        if found:
            return self._among[next(iter(found))], True, snapshot
        if isinstance(snapshot, dict):
            named = " or ".join(f"{', '.join(rules.request)} ({fmt.name})"
                                for fmt, rules in candidates if rules.request)
            raise UnknownShape(
                f"Cannot tell the input format: the snapshot is an object with none of {named}. "
                "Name the format, or pass the message list")
        return OPENAI, False, snapshot

    def load(self, snapshot: Any) -> Loaded:
        fmt, evident, value = self._decide(snapshot)
        return _marked(fmt.load(value), evident)

    def load_copy(self, snapshot: Any) -> Loaded:
        fmt, evident, value = self._decide(snapshot)
        if value is not snapshot:  # parsed from a string: already a fresh value of our own
            return _marked(fmt.load(value), evident)
        return _marked(fmt.load_copy(value), evident)

    def site(
        self, snapshot: str, origin: Origin, call: int | None = None, argument: str | None = None
    ) -> str:
        return OPENAI.site(snapshot, origin, call, argument)

    def span(self, snapshot: str, first: Origin, last: Origin) -> str:
        return OPENAI.span(snapshot, first, last)


def _find_evidence(snapshot: Any, candidates: list[tuple[Format, EvidenceRules]]) -> dict[str, Evidence]:
    found: dict[str, Evidence] = {}
    messages, name = snapshot, "messages"
    if isinstance(snapshot, dict):
        for fmt, rules in candidates:
            key = next((key for key in rules.request if key in snapshot), None)
            if key is not None:
                found[fmt.name] = Evidence(fmt.name, "the snapshot",
                                           f"is a request object with {key!r}", -1)
        keys = [rules.messages_key for _, rules in candidates if rules.messages_key is not None]
        name = next((key for key in keys if key in snapshot), name)
        messages = snapshot.get(name)
    if not isinstance(messages, list | tuple):
        return found
    readers = [(fmt.name, rules.message) for fmt, rules in candidates if rules.message is not None]
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        for fmt_name, evidence in readers:
            if fmt_name in found:
                continue
            seen = evidence(index, message)
            if seen is not None:
                place, what = seen
                if name != "messages":
                    place = place.replace("messages", name, 1)
                found[fmt_name] = Evidence(fmt_name, place, what, index)
        if len(found) == len(candidates):
            break
    return found


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
