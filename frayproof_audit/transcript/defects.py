"""Named transcript defects: what a provider would reject (FATAL) and what only wastes the
context window (WASTEFUL), each at its wire coordinates and marked repairable or not.

The rules read the neutral model, so they hold for every format. Calls pair with results by
id; a call's *batch* is the run of tool results directly after the assistant message that
made it, which is where every provider wants its results ("tool messages must follow", "each
tool_use must have a tool_result immediately after"). For each call id one result is the
*keeper*: the first one in the batch, else the first one after the call, else the first one.
The keeper is moved into the batch when it sits elsewhere (never deleted: the real output
survives); other results for the id are duplicates.

Bad:  [assistant calls a] [user "go on"]          → dangling_call a (FATAL, answered by repair)
Bad:  [tool b] (no call b anywhere)               → orphaned_result (FATAL, dropped by repair)
Bad:  [tool a] [assistant calls a]                → result_before_call (FATAL, moved by repair)
Good: [assistant calls a, b] [tool b] [tool a]    → parallel results, any order
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.loaded import Loaded, MessageView
from frayproof_audit.model import ROLES, TEXT_BLOCK_TYPES
from frayproof_audit.providers import PROFILES, provider_defects

FATAL = "FATAL"
WASTEFUL = "WASTEFUL"

DANGLING_CALL = "dangling_call"
ORPHANED_RESULT = "orphaned_result"
RESULT_BEFORE_CALL = "result_before_call"
RESULT_OUTSIDE_BATCH = "result_outside_batch"
DUPLICATE_CALL_ID = "duplicate_call_id"
MISSING_CALL_ID = "missing_call_id"
MISPLACED_CALL = "misplaced_call"
EMPTY_ASSISTANT_TURN = "empty_assistant_turn"
INVALID_ROLE = "invalid_role"
DUPLICATE_RESULT = "duplicate_result"
EMPTY_TURN = "empty_turn"


@dataclass(frozen=True, slots=True)
class Rule:
    """One defect kind: its name, severity, whether repair can fix it, and what it means."""

    name: str
    severity: str
    repairable: bool
    title: str


RULES: dict[str, Rule] = {rule.name: rule for rule in (
    Rule(DANGLING_CALL, FATAL, True, "Tool call has no result anywhere."),
    Rule(ORPHANED_RESULT, FATAL, True, "Tool result answers no tool call in the transcript."),
    Rule(RESULT_BEFORE_CALL, FATAL, True, "Tool result comes before its call."),
    Rule(RESULT_OUTSIDE_BATCH, FATAL, True,
         "Tool result is not in the batch of results directly after its call (FATAL where the "
         "provider wants results right after their call, WASTEFUL elsewhere)."),
    Rule(DUPLICATE_CALL_ID, FATAL, False, "Tool call id is already used by an earlier call."),
    Rule(MISSING_CALL_ID, FATAL, False, "Tool call has an empty or blank id."),
    Rule(MISPLACED_CALL, FATAL, False, "Tool call on a message that is not an assistant turn."),
    Rule(INVALID_ROLE, FATAL, False, "Message role is missing or not one a provider knows."),
    Rule(EMPTY_ASSISTANT_TURN, FATAL, True, "Assistant turn has no content, calls or refusal."),
    Rule(DUPLICATE_RESULT, WASTEFUL, True, "Tool call already has a result in its batch."),
    Rule(EMPTY_TURN, WASTEFUL, True, "User or instruction turn has no content."),
)}
"""Every defect kind, in report order for defects at the same message."""
_RANK = {name: number for number, name in enumerate(RULES)}
"""Each rule's place in `RULES`, computed once."""


@dataclass(frozen=True, slots=True)
class Defect:
    """One defect at one place of the user's wire data (`site`, `message_index`)."""

    name: str
    severity: str
    message_index: int | None
    site: str
    detail: str
    call_id: str | None = None
    repairable: bool = True
    codes: tuple[str, ...] = ()
    """The provider-validity condition codes (`PV-CHAT-CALL-UNANSWERED`, ...) this defect
    triggers under the profile that judged it: the 400 it would cause."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "severity": self.severity, "message_index": self.message_index,
                "site": self.site, "call_id": self.call_id, "repairable": self.repairable,
                "codes": list(self.codes), "detail": self.detail}

    def to_text(self) -> str:
        call = f" id={self.call_id}" if self.call_id else ""
        codes = f" [{', '.join(self.codes)}]" if self.codes and self.codes != (self.name,) else ""
        fix = "" if self.repairable else " (not repairable)"
        return f"{self.severity} {self.name} at {self.site}{call}{codes}: {self.detail}{fix}"


# --------------------------------------------------------------------------- the neutral facts


@dataclass(frozen=True, slots=True)
class Pairing:
    """How results pair with calls over a sequence of neutral messages (`order`)."""

    calls: dict[str, tuple[int, int]]
    """Call id → (neutral message, call position) of its first use on an assistant message."""
    keepers: dict[str, int]
    """Call id → the result that answers it (neutral message)."""
    misplaced: dict[int, str]
    """Keepers outside their call's batch → RESULT_BEFORE_CALL or RESULT_OUTSIDE_BATCH."""
    extra: dict[int, str]
    """Results that go (neutral message → defect name): orphans and duplicates."""
    dangling: tuple[str, ...]
    """Call ids no result answers, in call order."""
    call_defects: tuple[tuple[int, int, str], ...] = field(default=())
    """(neutral message, call position, defect name) for ids that cannot be paired."""


def is_empty(view: MessageView) -> bool:
    """Nothing at all: no calls, no refusal, and content absent, "" or only "" text blocks.
    Exact, never `strip()`: a turn of spaces, a thinking or an image block is not empty."""
    if view.calls or view.refusal:
        return False
    content = view.content
    if content is None or content == "":
        return True
    if isinstance(content, list):
        return all(isinstance(block, dict) and block.get("type") in TEXT_BLOCK_TYPES
                   and block.get("text") == "" for block in content)
    return False


def pair(views: Sequence[MessageView], order: Sequence[int]) -> Pairing:
    """Pair results with calls over the messages `order` (neutral indices, ascending)."""
    calls: dict[str, tuple[int, int]] = {}
    call_defects: list[tuple[int, int, str]] = []
    owner: dict[int, int] = {}  # result → the assistant message whose batch holds it
    current: int | None = None
    for index in order:
        view = views[index]
        if view.role == "tool":
            if current is not None:
                owner[index] = current
            continue
        current = index if view.role == "assistant" and view.calls else None
        for position, call in enumerate(view.calls):
            if view.role != "assistant":
                call_defects.append((index, position, MISPLACED_CALL))
            elif not call.id.strip():
                call_defects.append((index, position, MISSING_CALL_ID))
            elif call.id in calls:
                call_defects.append((index, position, DUPLICATE_CALL_ID))
            else:
                calls[call.id] = (index, position)
    groups: dict[str, list[int]] = {}
    extra: dict[int, str] = {}
    for index in order:
        view = views[index]
        if view.role != "tool":
            continue
        call_id = view.tool_call_id
        if not call_id or call_id not in calls:
            extra[index] = ORPHANED_RESULT
        else:
            groups.setdefault(call_id, []).append(index)
    keepers: dict[str, int] = {}
    misplaced: dict[int, str] = {}
    for call_id, results in groups.items():
        made = calls[call_id][0]
        in_batch = [r for r in results if owner.get(r) == made]
        keeper = in_batch[0] if in_batch else next((r for r in results if r > made), results[0])
        keepers[call_id] = keeper
        for result in results:
            where = (None if owner.get(result) == made
                     else RESULT_BEFORE_CALL if result < made else RESULT_OUTSIDE_BATCH)
            if result == keeper:
                if where is not None:
                    misplaced[result] = where
            else:
                extra[result] = where or DUPLICATE_RESULT
    dangling = tuple(call_id for call_id in calls if call_id not in keepers)
    return Pairing(calls, keepers, misplaced, extra, dangling, tuple(call_defects))


def empties(loaded: Loaded, order: Sequence[int]) -> dict[int, str]:
    """Empty turns (neutral message → defect name); instructions outside the message list
    (a request's top-level `system`) are the request's, not a turn to drop."""
    found: dict[int, str] = {}
    for index in order:
        view = loaded.views[index]
        if not is_empty(view) or view.role == "tool":
            continue
        if view.role == "assistant":
            found[index] = EMPTY_ASSISTANT_TURN
        elif loaded.origin(index).field is None:
            found[index] = EMPTY_TURN
    return found


# --------------------------------------------------------------------------- inspection

PAIRING_CODES = frozenset(rule.code for profile in PROFILES.values() for rule in profile.rules
                          if rule.repairable)
"""Provider rules about pairing calls with results: the ones repair satisfies (it answers,
moves and drops results until each call is answered once, right after its turn), as each
rule declares (`providers.base.Rule.repairable`)."""
ADJACENCY = frozenset({RESULT_OUTSIDE_BATCH})
"""Defects FATAL only where the profile enforces adjacency (Responses outputs may come later)."""


@dataclass
class _Hit:
    index: int
    name: str
    detail: str
    call_id: str | None = None
    call: int | None = None
    codes: list[str] = field(default_factory=list)


def find_defects(loaded: Loaded, profile: str | None = None) -> list[Defect]:
    """Every defect of a loaded transcript, by message then rule order.

    The neutral rules name what is wrong; the provider profile (`profile`, default the one for
    the snapshot's format) says what its provider rejects. A defect carries the condition
    codes of the provider rules it triggers (`codes`); a provider rule no neutral defect
    explains (a thinking block out of place, a lone reasoning item) is a defect of its own,
    named by its code.
    """
    views = loaded.views
    order = range(len(views))
    pairing = pair(views, order)
    hits: list[_Hit] = []
    for index, position, name in pairing.call_defects:
        call = views[index].calls[position]
        detail = _call_detail(name, call.id, call.name, pairing, loaded)
        hits.append(_Hit(index, name, detail, call.id or None, position))
    for call_id in pairing.dangling:
        index, position = pairing.calls[call_id]
        hits.append(_Hit(index, DANGLING_CALL, f"call to {views[index].calls[position].name!r} is "
                         "never answered", call_id, position))
    for index, name in {**pairing.extra, **pairing.misplaced}.items():
        result_id = views[index].tool_call_id or None
        hits.append(_Hit(index, name, _result_detail(name, index, result_id, pairing, loaded),
                         result_id))
    for index, view in enumerate(views):
        if view.role not in ROLES:
            hits.append(_Hit(index, INVALID_ROLE, f"role {view.role!r} (read as "
                             f"{loaded.format.name}: is that the transcript's format?)"))
    for index, name in empties(loaded, order).items():
        hits.append(_Hit(index, name, RULES[name].title))
    extra: list[tuple[int, Defect]] = []
    explains = _Explainers(hits)
    for found in provider_defects(loaded, profile):
        explained = explains.find(found.code, found.tool_call_id, found.index)
        if explained is not None:
            explained.codes.append(found.code)
        else:
            extra.append((found.index, Defect(
                found.code, FATAL, found.message_index, _relabel(found.site), found.error,
                found.tool_call_id, found.code in PAIRING_CODES, (found.code,))))
    defects = [(hit.index, _RANK[hit.name], _defect(hit, loaded)) for hit in hits]
    defects += [(index, len(RULES), defect) for index, defect in extra]
    defects.sort(key=lambda item: (item[0], item[1]))
    return [defect for _, _, defect in defects]


def explaining_hit(hits: Sequence[_Hit], code: str, call_id: str | None, index: int) -> _Hit | None:
    """The neutral defect a provider defect (`code` at message `index`, about `call_id`) joins:
    for a pairing rule, the first hit about the same call (without a call id: at the same
    message), preferring one at the provider defect's own message; None for any other rule.
    The plain reading `_Explainers` must equal (it indexes the hits once per transcript)."""
    if code not in PAIRING_CODES:
        return None
    same = [hit for hit in hits if (hit.call_id == call_id if call_id else hit.index == index)]
    same.sort(key=lambda hit: hit.index != index)
    return same[0] if same else None


class _Explainers:
    """`explaining_hit` for many provider defects: the hits indexed by call id and message."""

    def __init__(self, hits: Sequence[_Hit]) -> None:
        self.by_call: dict[str | None, list[_Hit]] = {}
        self.by_index: dict[int, list[_Hit]] = {}
        for hit in hits:
            self.by_call.setdefault(hit.call_id, []).append(hit)
            self.by_index.setdefault(hit.index, []).append(hit)

    def find(self, code: str, call_id: str | None, index: int) -> _Hit | None:
        if code not in PAIRING_CODES:
            return None
        same = self.by_call.get(call_id, []) if call_id else self.by_index.get(index, [])
        return next((hit for hit in same if hit.index == index), same[0] if same else None)


def _defect(hit: _Hit, loaded: Loaded) -> Defect:
    rule = RULES[hit.name]
    severity = rule.severity
    if hit.name in ADJACENCY and not hit.codes:
        severity = WASTEFUL
    return Defect(hit.name, severity, loaded.wire_index(hit.index),
                  loaded.site("transcript", hit.index, hit.call), hit.detail, hit.call_id,
                  rule.repairable, tuple(hit.codes))


def _relabel(site: str) -> str:
    """Provider sites name the snapshot `after`; transcript sites name it `transcript`."""
    return "transcript" + site[len("after"):] if site.startswith("after") else site


def _call_detail(name: str, call_id: str, tool: str, pairing: Pairing, loaded: Loaded) -> str:
    if name == DUPLICATE_CALL_ID:
        first = loaded.site("transcript", *pairing.calls[call_id])
        return f"id {call_id!r} is first used at {first}: its results cannot be told apart"
    if name == MISSING_CALL_ID:
        return f"call to {tool!r} has no id, so no result can answer it"
    return f"call to {tool!r} is on a non-assistant message"


def _result_detail(name: str, index: int, call_id: str | None, pairing: Pairing,
                   loaded: Loaded) -> str:
    if name == ORPHANED_RESULT:
        if call_id is None:
            return "result has no call id"
        return f"no call has id {call_id!r} (was its assistant turn dropped?)"
    assert call_id is not None
    call = loaded.site("transcript", *pairing.calls[call_id])
    keeper = pairing.keepers[call_id]
    if keeper != index:
        return f"the call at {call} is answered by {loaded.site('transcript', keeper)}"
    if name == RESULT_BEFORE_CALL:
        return f"its call is at {call}; it belongs right after it"
    return f"its call is at {call}; other turns come between them"
