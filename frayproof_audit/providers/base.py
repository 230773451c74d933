"""What a provider profile is: the rules one provider enforces with a 400, and their defects.

A profile judges a snapshot in the neutral model (every format reads into it), so any
profile can judge any format's data: an Anthropic session can be asked whether OpenAI Chat
Completions would accept it. Each rule has a stable code and the provider's own error text as
a template; a defect quotes that text filled in (ids, and the wire index the provider would
name), so a user can match a finding with the 400 they pasted.

Rules that compare with the history the provider saw before (a thinking block changed, a
reasoning item dropped) read `PriorFacts`, taken once from the before snapshot; without one
those rules are not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from frayproof_audit.loaded import Loaded


@dataclass(frozen=True, slots=True)
class Rule:
    """One thing a provider rejects. `error` is the provider's error text with `{fields}`."""

    code: str
    title: str
    """What is wrong, in a few words (the start of every finding's message)."""
    trigger: str
    """When the rule fires, for the docs."""
    error: str
    repairable: bool = False
    """A transcript repair satisfies it: the rules about pairing calls with results (repair
    answers, moves and drops results until each call is answered once, right after its turn)."""

    def text(self, **fields: Any) -> str:
        return self.error.format(**fields)


@dataclass(frozen=True, slots=True)
class ProviderDefect:
    """One request defect a provider would answer with a 400.

    `index` is the neutral message index in the judged snapshot, `message_index` the wire
    message index the user sees (None for a part outside the message list), `site` the wire
    place (`after[4].content[0]`). `error` is the provider's error text as it would send it;
    `message` is the finding's text: the rule's title, the site, and `error` quoted.
    """

    code: str
    profile: str
    title: str
    message: str
    error: str
    index: int
    message_index: int | None
    site: str
    tool_call_id: str | None = None
    item_id: str | None = None
    """The reasoning item or thinking block the defect is about, when it has an id."""
    call: int | None = None
    """The call the defect is about: its position in the neutral message's `tool_calls`."""
    block: int | None = None
    """The content block the defect is about (a thinking block, a reasoning item): its
    position in the neutral message's content."""

    def to_dict(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass(frozen=True, slots=True)
class PriorFacts:
    """What the rules that compare with before need of it (profile-independent, so one value
    serves whichever profile judges the pair).

    `thinking`: canonical JSON of every `thinking` / `redacted_thinking` block of before's
    assistant messages. `thinking_first`: the call ids of before's assistant messages that start
    with such a block. `reasoning_of`: Responses item id → ids of the reasoning items directly
    before that item in before (its required reasoning).
    """

    thinking: frozenset[bytes] = frozenset()
    thinking_first: frozenset[str] = frozenset()
    reasoning_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Found:
    """A rule's hit before it is worded: where, and the fields of its error text."""

    rule: Rule
    index: int
    site: str
    fields: Mapping[str, Any]
    tool_call_id: str | None = None
    item_id: str | None = None
    call: int | None = None
    block: int | None = None


Judge = Callable[[Loaded, PriorFacts | None, bool], list[Found]]
"""A profile's rules over a snapshot: (after, prior facts or None, allow a trailing pending
call) → hits, in message order."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A registered provider profile: its rules and the function that applies them.

    `formats` are the input formats whose data this profile judges when a contract names no
    profile (a snapshot read as `anthropic` is judged by Anthropic's rules).
    """

    name: str
    provider: str
    rules: tuple[Rule, ...]
    judge: Judge
    formats: tuple[str, ...] = ()

    def template(self, rule: Rule) -> str:
        """The finding's message with `{site}` and `{error}` to fill in."""
        return f'{rule.title} ({{site}}). {self.provider} rejects the request: "{{error}}"'

    def defect(self, found: Found, after: Loaded) -> ProviderDefect:
        rule = found.rule
        error = rule.text(**found.fields)
        return ProviderDefect(
            code=rule.code, profile=self.name, title=rule.title,
            message=self.template(rule).format(site=found.site, error=error), error=error,
            index=found.index, message_index=after.wire_index(found.index), site=found.site,
            tool_call_id=found.tool_call_id, item_id=found.item_id, call=found.call,
            block=found.block)


# --- walking the neutral messages (shared by the profiles) --------------------------------

def results_after(after: Loaded, index: int) -> range:
    """The tool messages directly after message `index` (its answer, for adjacency rules)."""
    views = after.views
    stop = index + 1
    while stop < len(views) and views[stop].role == "tool":
        stop += 1
    return range(index + 1, stop)


def tail(after: Loaded) -> int:
    """The last non-tool message (-1: none): the one whose calls may still be pending."""
    views = after.views
    for index in range(len(views) - 1, -1, -1):
        if views[index].role != "tool":
            return index
    return -1


def previous_non_tool(after: Loaded, index: int) -> int:
    """The nearest message before `index` that is not a tool result (-1: none)."""
    views = after.views
    index -= 1
    while index >= 0 and views[index].role == "tool":
        index -= 1
    return index
