"""`auto`: read each snapshot in the format its own evidence names, `openai` or `anthropic`.

The decision reads the whole snapshot, never just its first marker, and never ranks evidence:

* openai evidence: a message with `tool_calls`, `tool_call_id`, `function_call` or `refusal`
  (any non-null value), or with role `tool` or `function`;
* anthropic evidence: a top-level object (a request with `messages`/`system`), or a content
  block of type `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, `server_tool_use`
  or `*_tool_result`.

Evidence for both is an `AmbiguousFormat` error naming the first of each: two readings that
both fit would give different verdicts (a thinking block before a Chat `tool_calls` must not
quietly pick either). No evidence reads as `openai`: plain text turns (strings, text, image or
document blocks, system messages in the list) mean the same in both formats, so both readings
give the same neutral model, and the choice only names the format. The `Loaded` returned is
the delegate's, so `loaded.format.name` is the detected format; a default reading is marked
`loaded.guessed` so a pair can be labelled by the snapshot that had evidence. It is no note
for `format_notes` to report: nothing was read leniently, both readings are the same.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from frayproof_audit.errors import InputError
from frayproof_audit.formats.anthropic import ANTHROPIC
from frayproof_audit.formats.base import Format
from frayproof_audit.formats.openai import OPENAI, ChatShaped
from frayproof_audit.loaded import Loaded, Origin

OPENAI_FIELDS = ("tool_calls", "tool_call_id", "function_call", "refusal")
OPENAI_ROLES = ("tool", "function")
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking",
                              "server_tool_use"})


class AmbiguousFormat(InputError):
    """A snapshot holding evidence of two formats: `auto` does not guess between them."""


class Evidence(NamedTuple):
    """Why a snapshot looks like `format`: `place` (`messages[2]`) `what` (`has tool_calls`)."""

    format: str
    place: str
    what: str
    order: int
    """Where it sits (the message index; -1 for the top level), to name the earlier first."""

    def __str__(self) -> str:
        return f"{self.place} {self.what} ({self.format})"


def find_evidence(snapshot: Any) -> tuple[Evidence | None, Evidence | None]:
    """The first openai and the first anthropic evidence in the snapshot (None when absent).
    Tolerates anything: values that are not messages are the chosen format's to reject."""
    openai: Evidence | None = None
    anthropic: Evidence | None = None
    messages = snapshot
    if isinstance(snapshot, dict):
        anthropic = Evidence(ANTHROPIC.name, "the snapshot", "is an object (a saved request)", -1)
        messages = snapshot.get("messages")
    if not isinstance(messages, list | tuple):
        return openai, anthropic
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if openai is None:
            openai = _openai_evidence(index, message)
        if anthropic is None:
            anthropic = _anthropic_evidence(index, message)
        if openai is not None and anthropic is not None:
            break
    return openai, anthropic


def _openai_evidence(index: int, message: dict[Any, Any]) -> Evidence | None:
    for key in OPENAI_FIELDS:
        if message.get(key) is not None:
            return Evidence(OPENAI.name, f"messages[{index}]", f"has {key}", index)
    role = message.get("role")
    if type(role) is str and role in OPENAI_ROLES:
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


def detect(snapshot: Any) -> tuple[Format, bool]:
    """The format a snapshot's evidence names, and whether there was any."""
    openai, anthropic = find_evidence(snapshot)
    if openai is not None and anthropic is not None:
        first, second = sorted((openai, anthropic), key=lambda found: found.order)
        raise AmbiguousFormat(
            f"Cannot tell the input format: {first} but {second}. Name the format (the "
            "contract's `format`, the record's `format` field, or --input-format)")
    if anthropic is not None:
        return ANTHROPIC, True
    return OPENAI, openai is not None


class AutoFormat(ChatShaped):
    """The `auto` format: `load` detects and delegates. Its own `views`, `identity`, `site`
    and `span` serve only values built without a detected format; neutral dicts are
    Chat-shaped, so they are openai's."""

    name = "auto"
    containers: tuple[type, ...] = (list, dict)

    def load(self, snapshot: Any) -> Loaded:
        fmt, evident = detect(snapshot)
        return _marked(fmt.load(snapshot), evident)

    def load_copy(self, snapshot: Any) -> Loaded:
        fmt, evident = detect(snapshot)
        return _marked(fmt.load_copy(snapshot), evident)



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
