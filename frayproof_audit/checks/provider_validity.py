"""provider_validity: would the provider accept the compacted history as the next request?

Each provider profile (`frayproof_audit.providers`) lists the rules its provider enforces with a
400; every rule is a condition with a stable code, and a finding quotes the provider's own
error text, so it can be matched with the error a user pasted.

Bad (openai-chat): [assistant calls a] [user "go on"] [tool a]  → PV-CHAT-TOOL-ORPHAN
Bad (anthropic):  a thinking block of the latest assistant message re-serialized
                  (with before)                                 → PV-ANTH-THINKING-MODIFIED
Good: every call answered right after its message, reasoning and thinking kept as they were.

Off by default (it goes beyond frayproof's checks); `checks: {provider_validity: true}` judges
by the profile of the format the snapshot was read in, `profile:` names one. Rules that compare
with before run only when there is one (`check`, mutation), from facts prepared once per pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition, Flag, OptionProblem
from frayproof_audit.formats.responses import REASONING, items_of
from frayproof_audit.model import INSTRUCTION_ROLES
from frayproof_audit.providers import (
    PROFILE_NAMES,
    PROFILES,
    anthropic,
    gemini,
    openai_chat,
    openai_responses,
    profile_for,
    provider_defects,
)
from frayproof_audit.providers.base import PriorFacts, Rule
from frayproof_audit.providers.prior import prior_facts
from frayproof_audit.recheck.local import placed, window
from frayproof_audit.recheck.mutant import Kept
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import Loaded, MessageView
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.local import IdCarriers
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "provider_validity"
KEY = "provider_validity"
PROFILE = "profile"
ALLOW_PENDING = "allow_trailing_pending_call"
CONDITIONS: tuple[Condition, ...] = tuple(
    Condition(rule.code, profile.template(rule), repairable=rule.repairable)
    for profile in PROFILES.values() for rule in profile.rules
)
_BY_CODE = {condition.code: condition for condition in CONDITIONS}


@dataclass(frozen=True, slots=True)
class ProfileName:
    """A registered profile's name, or null: the profile of the snapshot's format."""

    name: str = PROFILE
    default: Any = None

    def parse(self, value: Any) -> Any:
        if value is not None and (type(value) is not str or value not in PROFILE_NAMES):
            raise OptionProblem(f"must be one of {', '.join(PROFILE_NAMES)} (or null)")
        return value


def prepare(before: Loaded, contract: Contract) -> PriorFacts | None:
    """`PriorFacts` when the check is on."""
    return prior_facts(before) if contract.settings(KEY).enabled else None


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    prior = None if before is None else cast("PriorFacts | None", before.of(KEY))
    defects = provider_defects(
        after, settings.option(PROFILE), prior=prior,
        allow_trailing_pending_call=settings.option(ALLOW_PENDING))
    return [
        _BY_CODE[defect.code].violation(NAME, severity, "after", defect.index,
                                        tool_call_id=defect.tool_call_id, site=defect.site,
                                        error=defect.error)
        for defect in defects
    ]


# --- mutation's re-check ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class BatchRules:
    """How one profile's rules read a snapshot, as far as the lemma needs to know."""

    batch_codes: frozenset[str]
    """The rules judged batch by batch."""
    context: bool = False
    """Whether the batch rules also read the batch's context (Gemini's call position)."""
    final_codes: frozenset[str] = frozenset()
    """The rules judged on the final turn (Anthropic's thinking rules)."""
    id_codes: frozenset[str] = frozenset()
    """The rules judged id by id (Responses' call rules)."""
    reasoning_codes: frozenset[str] = frozenset()
    """The rules judged on windows cut between messages (Responses' reasoning rules)."""


def _codes(*rules: Rule) -> frozenset[str]:
    return frozenset(rule.code for rule in rules)


RULES: dict[str, BatchRules] = {
    openai_chat.PROFILE.name: BatchRules(_codes(*openai_chat.PROFILE.rules)),
    anthropic.PROFILE.name: BatchRules(
        _codes(anthropic.RESULT_ORPHAN, anthropic.USE_UNANSWERED),
        final_codes=_codes(anthropic.THINKING_FIRST, anthropic.THINKING_MODIFIED)),
    gemini.PROFILE.name: BatchRules(_codes(*gemini.PROFILE.rules), context=True),
    openai_responses.PROFILE.name: BatchRules(
        frozenset(), id_codes=_codes(openai_responses.CALL_UNANSWERED, openai_responses.OUTPUT_ORPHAN),
        reasoning_codes=_codes(openai_responses.REASONING_ALONE, openai_responses.REASONING_MISSING)),
}
"""The profiles the lemma covers; every rule of each is in exactly one of its code sets."""


def batch_rules(settings: CheckSettings, format_name: str) -> BatchRules | None:
    """The lemma's reading of the profile these settings judge `format_name` data by (None:
    a profile the lemma does not cover)."""
    named = settings.option(PROFILE)
    return RULES.get(named if named is not None else profile_for(format_name))


def findings(rules: BatchRules, carriers: IdCarriers, effects: Effects, mutant: Mutant,
             contract: Contract, facts: BeforeFacts, settings: CheckSettings) -> list[Violation]:
    """The mutant's `provider_validity` findings (original clean)."""
    if rules.id_codes:
        found = _id_local(rules, carriers, effects, mutant, contract, facts, settings)
        found += _reasoning_windows(rules, mutant, contract, facts, settings)
        found.sort(key=lambda violation: violation.message_index or 0)  # stable: the judge's order
        return found
    return batch_findings(rules, mutant, contract, facts, settings)


def _judged(mutant: Mutant, positions: list[int], messages: list[dict[str, Any]],
            views: list[MessageView], contract: Contract, facts: BeforeFacts,
            settings: CheckSettings, codes: frozenset[str]) -> list[Violation]:
    """The check's findings with a code in `codes` on a window of the mutant (its messages at
    `positions`), placed at their mutant positions."""
    small = window(mutant.original.format, positions, messages, views)
    return [violation for violation in placed(find(small, contract, facts, settings),
                                              positions) if violation.code in codes]


def _part(mutant: Mutant, start: int, stop: int, contract: Contract, facts: BeforeFacts,
          settings: CheckSettings, codes: frozenset[str]) -> list[Violation]:
    """`_judged` on the mutant's positions [start, stop), its real messages included (for the
    rules that read content blocks)."""
    part = mutant.messages_between(start, stop)
    return _judged(mutant, [position for position, _, _ in part], [message for _, message, _ in part],
                   [view for _, _, view in part], contract, facts, settings, codes)


def _id_local(rules: BatchRules, carriers: IdCarriers, effects: Effects, mutant: Mutant,
              contract: Contract, facts: BeforeFacts, settings: CheckSettings) -> list[Violation]:
    """Responses' call rules: judge the messages carrying the edit's ids (calls kept whole, so
    each keeps its position in its message), and keep the findings about those ids."""
    wanted, chosen = carriers.carriers_of(effects, mutant, with_tail=True)
    if not chosen:
        return []
    positions = sorted(chosen)
    return [violation for violation in _judged(
        mutant, positions, [{} for _ in positions], [chosen[position] for position in positions],
        contract, facts, settings, rules.id_codes) if violation.tool_call_id in wanted]


def _reasoning_windows(rules: BatchRules, mutant: Mutant, contract: Contract, facts: BeforeFacts,
                       settings: CheckSettings) -> list[Violation]:
    """Responses' reasoning rules, judged on the windows around the edit's new messages and
    piece ends, each widened to cuts after a message that does not end in a reasoning item."""
    length = mutant.length
    spans: list[tuple[int, int]] = []
    for position in sorted(_edges(mutant)):
        start = position
        while start > 0 and _ends_in_reasoning(mutant, start - 1):
            start -= 1
        stop = position + 1
        while stop < length and _ends_in_reasoning(mutant, stop - 1):
            stop += 1
        if spans and start <= spans[-1][1]:  # overlapping or touching: one window
            spans[-1] = (spans[-1][0], max(spans[-1][1], stop))
        else:
            spans.append((start, stop))
    found: list[Violation] = []
    for start, stop in spans:
        found += _part(mutant, start, stop, contract, facts, settings, rules.reasoning_codes)
    return found


def _ends_in_reasoning(mutant: Mutant, position: int) -> bool:
    """Whether the last item the message at `position` stands for is a reasoning item (a run
    of reasoning items may then go on into the next message). Only an assistant message
    without calls can end so (calls are its last items), and only with list content."""
    view = mutant.view_at(position)
    if view.role != "assistant" or view.calls or type(view.content) is not list:
        return False
    return items_of(mutant.message_at(position))[-1].kind == REASONING


def _edges(mutant: Mutant) -> set[int]:
    """The mutant positions an edit can change the surroundings of: its new messages and the
    first and last position of every kept run."""
    edges: set[int] = set()
    for piece in mutant.pieces:
        if isinstance(piece, Kept):
            edges.update((piece.offset, piece.offset + piece.stop - piece.start - 1))
        else:
            edges.update(range(piece.offset, piece.offset + len(piece.messages)))
    return edges


def batch_findings(rules: BatchRules, mutant: Mutant, contract: Contract, facts: BeforeFacts,
                   settings: CheckSettings) -> list[Violation]:
    """The mutant's `provider_validity` findings under a batch profile (original clean)."""
    if not mutant.length:
        return []
    heads = {_head(mutant, position) for position in _edges(mutant)}
    if rules.context:
        heads |= {follower for head in heads for follower in _followers(mutant, head)}
    tail = mutant.tail()
    allow = bool(settings.option(ALLOW_PENDING))
    closed = replace(settings, options={**settings.options, ALLOW_PENDING: False})
    found: list[Violation] = []
    for head in sorted(heads):
        start = _context_start(mutant, head) if rules.context else head
        batch = mutant.views_between(start, _batch_end(mutant, head))
        chosen = settings if allow and head == tail else closed
        found += [violation for violation in _judged(
            mutant, [position for position, _ in batch], [{} for _ in batch], [view for _, view in batch],
            contract, facts, chosen, rules.batch_codes)
            if violation.message_index is not None and violation.message_index >= head]
    if rules.final_codes:
        found += _final_turn(rules, mutant, contract, facts, settings)
        found.sort(key=lambda violation: violation.message_index or 0)  # stable: the judge's order
    return found


def _final_turn(rules: BatchRules, mutant: Mutant, contract: Contract, facts: BeforeFacts,
                settings: CheckSettings) -> list[Violation]:
    """The final-turn rules' findings, judged on the suffix from the latest user message before
    the last assistant message (real messages: the rules read their blocks)."""
    final = mutant.last_with_role("assistant")
    if final < 0:
        return []
    start = max(mutant.last_with_role("user", final), 0)
    return _part(mutant, start, mutant.length, contract, facts, settings, rules.final_codes)


def _head(mutant: Mutant, position: int) -> int:
    """The first position of the batch holding `position`: its head, or 0 for a headless run."""
    while position > 0 and mutant.view_at(position).role == "tool":
        position -= 1
    return position


def _batch_end(mutant: Mutant, head: int) -> int:
    """The position after the batch starting at `head` (it and the tool messages after it)."""
    position = head + 1
    while position < mutant.length and mutant.view_at(position).role == "tool":
        position += 1
    return position


def _followers(mutant: Mutant, head: int) -> Sequence[int]:
    """The next batch heads after `head`'s batch whose context may hold it: through heads with
    an instruction role, up to and including the first head without one."""
    found: list[int] = []
    position = _batch_end(mutant, head)
    while position < mutant.length:
        found.append(position)
        if mutant.view_at(position).role not in INSTRUCTION_ROLES:
            break
        position = _batch_end(mutant, position)
    return found


def _context_start(mutant: Mutant, head: int) -> int:
    """The first position of the context of the batch at `head` (Gemini's call position reads
    the nearest earlier message that is not an instruction message; 0 when there is none)."""
    position = head - 1
    while position >= 0 and mutant.view_at(position).role in INSTRUCTION_ROLES:
        position -= 1
    return max(position, 0)


class _Recheck:
    """Mutation's re-check judges a mutant from the batches, ids or item windows its edit can change,
    not the whole mutant, under every profile (`openai-chat`, `anthropic`, `gemini`,
    `openai-responses`): rerunning the check over every mutant made mutation quadratic in the
    record's length (openai-chat: 1,000 messages 1.35 s, 2,000 5.05 s; anthropic: 1,000 messages
    2.97 s, 2,000 9.08 s). The lemma, for an original output with no finding of this check (clean;
    otherwise it is rerun in full):

    Call a *batch* a non-tool message with the run of tool messages right after it (and a run of
    tool messages at the very start, with nothing before it, a batch without a head). The *batch
    rules* judge each batch on its own: a tool message is an orphan, answers an unknown id or is
    counted (Gemini) by its batch's head alone; a call is unanswered, or its responses miscounted,
    by its own batch's tool messages alone, unless its message is the last non-tool message (the
    tail) and `allow_trailing_pending_call` excuses it. Gemini's call-position rule reads one thing
    more, the batch's *context*: the nearest earlier message whose role is not an instruction role
    (`system`, `developer`), and the instruction messages between (each a batch of its own).
    Anthropic has *final-turn rules* besides: they read the last assistant message, the messages
    after it, and its turn back to the latest user message before it, and nothing else of the
    snapshot (the prior facts come from before). The profiles compare nothing else with before.

    A mutant is a layout of pieces: runs of original messages kept in order, and new messages. A
    batch of the mutant that holds no new message and neither the first nor the last position of a
    piece lies strictly inside one kept run and starts at a non-tool message of it (position 0 is
    always a piece's first); its tool run ends inside that run as well, so it is a batch of the
    original, message for message. Its batch-rule findings are the original's, none, unless its
    head's tail status changed, or (Gemini) its context holds a new message or a piece's first or
    last position; but the mutant's tail batch ends at the mutant's last position (a piece's last),
    and the original's tail batch ends at the original's last message, so wherever it is kept it
    holds the last position of the piece keeping it. A context that holds such a position p ends at
    the batch's head, and between p's batch and the head there are only instruction messages, so
    walking from p's batch to the next batch heads, through heads with an instruction role, reaches
    the batch. So the mutant's batch-rule findings are those of these batches, each judged alone
    with its context (the pending allowance only for the mutant's tail batch), in mutant order; the
    final-turn rules are judged on the mutant's suffix from the latest user message before its last
    assistant message (from position 0 when there is none), which costs that turn's length.

    The Responses profile pairs calls and outputs anywhere in the snapshot, so its call rules are
    *id-local* instead: whether an output answers nothing, or a call stays unanswered, depends only
    on the order of the messages carrying that id (and, for a call, on whether its message is the
    tail). An edit keeps the relative order of every message it does not touch, so for an id that no
    touched or new message carries, nor the original's tail, the verdict is the original's, none;
    the mutant's findings are those of the other ids, found by judging the mutant's messages that
    carry them, with the mutant's tail (`recheck.local.IdCarriers.carriers_of`, as for
    tool_pair_integrity), and keeping the findings about those ids. Its reasoning rules judge
    *units* of adjacent items (in the order of the items the messages stand for): a maximal run of
    reasoning items with the item after it, and an item that before requires reasoning with the run
    right before it. A unit spans consecutive messages; every message it continues past ends in a
    reasoning item, and the message before its first does not (a run is maximal, and reasoning items
    lead a message's items). A unit inside one kept run is the original's, with its verdict, none;
    so only the units that hold a new message or a piece end change. Widening each such position to
    the nearest cuts after a message that does not end in a reasoning item (or the mutant's ends)
    gives windows that hold those units whole and start no unit in the middle, so judging the
    windows (merged where they meet) gives exactly the mutant's reasoning findings.
    """

    __slots__ = ("pair", "rules", "settings")

    def __init__(self, pair: PairContext, rules: BatchRules, settings: CheckSettings) -> None:
        self.pair, self.rules, self.settings = pair, rules, settings

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        pair = self.pair
        return findings(self.rules, pair.carriers, effects, mutant, pair.contract, pair.facts,
                        self.settings)


def _recheck(pair: PairContext, check: Check, settings: CheckSettings,
             found: list[Violation]) -> _Recheck | None:
    """The lemma's re-check on a clean original, under a profile it covers."""
    if found:
        return None
    rules = batch_rules(settings, pair.after.format.name)
    return None if rules is None else _Recheck(pair, rules, settings)


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=CONDITIONS,
    find=find,
    summary="The compacted history is a request the provider accepts (no 400 it would answer).",
    options=(ProfileName(), Flag(ALLOW_PENDING, False)),
    enabled_by_default=False,
    prepare=prepare,
    recheck=_recheck,
)
