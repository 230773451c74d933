"""structure: roles, instruction placement, result placement and the shape of every message.

Bad:  [user] [system]            → late instruction under `system_messages: leading_only`
Bad:  [assistant calls a] [user] [tool a]  → the result sits outside its call's batch
Bad:  [assistant, no content, no calls]    → empty assistant message
Good: [system] [user] [assistant calls a, b] [tool b] [tool a] [assistant "done"]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition, OneOf
from frayproof_audit.model import INSTRUCTION_ROLES, ROLES, has_content
from frayproof_audit.recheck.mutant import Effects
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import Loaded, MessageView
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Fresh, Mutant

NAME = "structure"
SYSTEM_MESSAGES = "system_messages"
SYSTEM_POLICIES = ("leading_only", "anywhere", "forbidden")

ROLE = Condition("ST-ROLE", "Message role is missing or not supported.")
INSTR_FORBIDDEN = Condition("ST-INSTR-FORBIDDEN",
                            "The contract forbids instruction (system/developer) messages.")
INSTR_LATE = Condition("ST-INSTR-LATE", "Instruction message appears after the conversation has started.")
TOOL_NOID = Condition("ST-TOOL-NOID", "Tool result has no tool_call_id.", repairable=True)
TOOL_OUTSIDE = Condition("ST-TOOL-OUTSIDE", "Tool result is not inside the batch that follows its call.",
                         repairable=True)
TOOL_NOCONTENT = Condition("ST-TOOL-NOCONTENT", "Tool result has null content.")
STRAY_ID = Condition("ST-STRAY-ID", "Only tool results may carry a tool_call_id.")
CALLS_ROLE = Condition("ST-CALLS-ROLE", "Only assistant messages may carry tool calls.")
EMPTY_ASSISTANT = Condition("ST-EMPTY-ASSISTANT", "Assistant message has no content, tool calls or refusal.",
                            repairable=True)
NO_CONTENT = Condition("ST-NO-CONTENT", "Message content is null.")
CALL_ID = Condition("ST-CALL-ID", "Tool call id is empty or blank.")
CALL_FUNC = Condition("ST-CALL-FUNC", "Tool call must be of type 'function' with a non-blank name.")


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    views = after.views
    called = {call.id for view in views if view.role == "assistant" for call in view.calls if call.id}
    return scan(enumerate(views), settings.severity, settings.option(SYSTEM_MESSAGES), called)


def scan(
    indexed: Iterable[tuple[int, MessageView]],
    severity: str,
    policy: str,
    called: AbstractSet[str],
    *,
    leading: bool = True,
    active: AbstractSet[str] = frozenset(),
) -> list[Violation]:
    """The findings of the messages `indexed` (position, view), in order, given the state the
    scan has on reaching the first of them: `called` (every call id of the snapshot), `leading`
    (no non-instruction message yet) and `active` (the call ids of the current batch).
    `find` scans the whole snapshot from the initial state; mutation scans a window of a
    mutant from the original's state (the swap window of `_Recheck`)."""
    found: list[Violation] = []

    def add(index: int, condition: Condition) -> None:
        found.append(condition.violation(NAME, severity, "after", index))

    for index, view in indexed:
        role = view.role
        if role not in ROLES:
            add(index, ROLE)
        if role in INSTRUCTION_ROLES:
            if policy == "forbidden":
                add(index, INSTR_FORBIDDEN)
            elif policy == "leading_only" and not leading:
                add(index, INSTR_LATE)
        else:
            leading = False
        if role == "tool":
            result_id = view.tool_call_id
            if not result_id:
                add(index, TOOL_NOID)
            elif result_id in called and result_id not in active:
                add(index, TOOL_OUTSIDE)
            if view.content is None:
                add(index, TOOL_NOCONTENT)
        else:
            active = {call.id for call in view.calls if call.id} if role == "assistant" else set()
            if view.tool_call_id is not None:
                add(index, STRAY_ID)
        if view.calls and role != "assistant":
            add(index, CALLS_ROLE)
        if role == "assistant":
            refusal = view.refusal
            if not (view.calls or has_content(view.content) or (refusal and refusal.strip())):
                add(index, EMPTY_ASSISTANT)
        elif role != "tool" and view.content is None:
            add(index, NO_CONTENT)
        for call in view.calls:
            if not call.id.strip():
                add(index, CALL_ID)
            if call.type != "function" or not call.name.strip():
                add(index, CALL_FUNC)
    return found


def empty_assistant(view: MessageView) -> bool:
    """The empty-assistant condition, for an assistant message."""
    return not (view.calls or has_content(view.content) or (view.refusal and view.refusal.strip()))


class _Recheck:
    """Mutation's re-check (O = original output, M = mutant; "clean" = no finding on O).

    - An edit that only changes call arguments keeps every view: M's findings are O's, clean
      or not.
    - O clean, one kind of change at a time: deleting messages never makes an instruction late,
      a message empty or a result id-less; it can only produce a misplaced result when a
      deleted assistant's call id is still called by a surviving one, so that is checked.
      Dropping a call whose id no other call uses only shrinks `called`, unless the message is
      left empty. Repeating a call changes neither `called` nor any batch. A text edit, or a
      block edit (one reasoning item or thinking block dropped or replaced; the content stays a
      list), keeps every content non-null and matters only if an assistant turns empty or
      stops being empty. Moving an instruction message to the end matters only for placement
      policies other than `anywhere` (at the end it splits no batch). In all these M has no
      finding.
    - O clean, an edit that only swaps positions i < r (the *swap window*): each message's
      findings depend on its own view, on whether a non-instruction message precedes it, on
      the call ids of the last non-tool message before it (the batch) and on the set of all
      call ids. Before i the mutant is the original. A swap keeps the set of calls and, from
      the first non-tool message after r on (call it e), the batch and the messages before it
      as a set, so findings from e on are the original's: none. Scanning [i, e) from the
      original's state at i (`scan`) therefore gives every finding.
    """

    __slots__ = ("called", "first_other", "found", "pair", "policy", "settings")

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> None:
        self.pair, self.settings, self.found = pair, settings, found
        self.policy = settings.option(SYSTEM_MESSAGES)
        views = pair.after.views
        self.called = frozenset(call.id for view in views if view.role == "assistant"
                                for call in view.calls if call.id)
        self.first_other = next((index for index, view in enumerate(views)
                                 if view.role not in INSTRUCTION_ROLES), len(views))
        """The first position whose role is not an instruction role (len: none)."""

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        if effects.only_arguments:
            return self.found
        if self.found:
            return None
        if self._unchanged(effects, mutant.fresh):
            return self.found
        swapped = effects.swapped
        if swapped is not None and effects == Effects(swapped=swapped) and swapped[0] < swapped[1]:
            return self._swap_window(*swapped, mutant)
        return None

    def _unchanged(self, effects: Effects, fresh: Fresh) -> bool:
        if effects.swapped is not None:
            return False  # swaps are always rechecked
        kinds = (bool(effects.deleted) + bool(effects.text_edited) + bool(effects.call_dropped)
                 + bool(effects.call_repeated) + bool(effects.moved_to_end)
                 + bool(effects.block_edited) + bool(effects.arguments_changed))
        if kinds != 1:
            return False  # one kind of change at a time
        if effects.deleted:
            return self._ids_leave_with(effects.deleted)
        if effects.text_edited or effects.block_edited:
            # structure reads content only as "is there any" (assistant) and "is it null"; a
            # block edit keeps a list, so only an assistant's emptiness can flip, as with text
            return not self._assistant_emptiness_flips(fresh)
        if effects.call_dropped:
            return self._dropped_calls_harmless(fresh)
        if effects.moved_to_end:
            roles = self.pair.roles
            return self.policy == "anywhere" and all(
                roles[i] in INSTRUCTION_ROLES for i in effects.moved_to_end)
        return True  # a call repeated in its own message, or arguments alone changed (views kept)

    def _ids_leave_with(self, deleted: tuple[int, ...]) -> bool:
        """No call id of a deleted assistant is still called by a surviving message."""
        views = self.pair.after.views
        gone = Counter(
            call.id for i in deleted if views[i].role == "assistant" for call in views[i].calls
            if call.id
        )
        uses = self.pair.call_uses
        return all(uses[call_id] == count for call_id, count in gone.items())

    def _dropped_calls_harmless(self, fresh: Fresh) -> bool:
        """Each dropped call's id is used by no other call, and no assistant is left empty."""
        views, uses = self.pair.after.views, self.pair.call_uses
        for position, _, view in fresh:  # in-place rewrites: `position` is the original index
            dropped = Counter(call.id for call in views[position].calls)
            dropped.subtract(call.id for call in view.calls)
            for call_id, count in dropped.items():
                if count > 0 and call_id and uses[call_id] != count:
                    return False
            if view.role == "assistant" and empty_assistant(view):
                return False
        return True

    def _assistant_emptiness_flips(self, fresh: Fresh) -> bool:
        """Whether an in-place edit turns an assistant message empty or non-empty."""
        views = self.pair.after.views
        for position, _, view in fresh:
            # Text edits keep positions, so `position` is also the original index.
            if view.role == "assistant" and empty_assistant(view) != empty_assistant(views[position]):
                return True
        return False

    def _swap_window(self, first: int, second: int, mutant: Mutant) -> list[Violation]:
        """The findings of a mutant that swaps `first` < `second` (original clean)."""
        output = self.pair.output
        views = output.views
        stop = second + 1
        while stop < len(views) and views[stop].role == "tool":
            stop += 1
        before = output.prev_nontool[first - 1] if first > 0 else -1
        active: frozenset[str] = frozenset()
        if before >= 0 and views[before].role == "assistant":
            active = frozenset(call.id for call in views[before].calls if call.id)
        return scan(mutant.views_between(first, stop), self.settings.severity, self.policy,
                    self.called, leading=self.first_other >= first, active=active)


CHECK = Check(
    name=NAME,
    key="structure",
    conditions=(ROLE, INSTR_FORBIDDEN, INSTR_LATE, TOOL_NOID, TOOL_OUTSIDE, TOOL_NOCONTENT, STRAY_ID,
                CALLS_ROLE, EMPTY_ASSISTANT, NO_CONTENT, CALL_ID, CALL_FUNC),
    find=find,
    summary="Roles, instruction placement, result placement and the shape of every message.",
    options=(OneOf(SYSTEM_MESSAGES, SYSTEM_POLICIES, "leading_only"),),
    recheck=_Recheck,
)
