"""Judge a mutant by running only the checks its edit can change (the fast path's evaluator).

Every check is still run by its registered `find`; what this module decides is *which* checks
need to run on a mutant and which findings can be taken from the real output (the "original",
whose per-check findings are computed once per pair). The decision reads only the edit's
declared `Effects` and facts of the original output, never an operator's name, so a new
operator is covered by the lemmas its edits fall under, and an edit that declares nothing is
re-checked in full by every check. Unknown checks (a future engine) are always rerun.

The rules are small lemmas about the checks. They rely on the baseline having passed (mutants
are only built then) and, for after-indexed checks, on the original having **no finding at all**
from that check (call it *clean*); a check with warnings on the original is simply rerun. They
are backed by a hypothesis test that compares this evaluator with a full recheck for every
registered operator (`tests/test_mutation_equivalence.py`), and `--verify` runs both.

Lemmas (O = original output, M = mutant; "clean" = no finding of that check on O):
- View-only checks (unique_tool_ids, tool_pair_integrity, structure read nothing but the
  messages' `MessageView`s): an edit that only changes call arguments in place keeps every
  position and every view (a view holds a call's id, name and type, never its arguments), so
  their findings on M are O's, clean or not. Checks that read arguments (any check this module
  has no lemma for) are rerun; pins and retention see it as an in-place rewrite (below).
- unique_tool_ids, O clean: deleting messages or calls, reordering messages and editing text
  or a content block never create a repeated id; only repeating a call can.
- tool_pair_integrity depends only on the ordered assistant/tool messages (roles, call and
  result ids) and, with the trailing-pending allowance, on which message is the last non-tool
  one. O clean: text or content-block edits and repeating a call in its own message (same id,
  same message: answered or excused alike) change nothing; deleting messages that are neither assistant nor
  tool keeps that subsequence, and the last non-tool message it may change only excuses more;
  moving such messages to the end keeps it, and matters only under the allowance.
- structure, O clean: deleting messages never makes an instruction late, a message empty or a
  result id-less; it can only produce a misplaced result when a deleted assistant's call id is
  still called by a surviving one, so that is checked. Dropping a call whose id no other call
  uses only shrinks `called`, unless the message is left empty. Repeating a call changes
  neither `called` nor any batch. A text edit, or a block edit (one reasoning item or thinking
  block dropped or replaced; the content stays a list), keeps every content non-null and
  matters only if an assistant turns empty or stops being empty. Moving an instruction message
  to the end matters only for placement policies other than `anywhere` (at the end it splits
  no batch).
- pinned_content never depends on positions (findings point into before): M's findings equal
  O's unless the edit deletes or alters a message of a pinned role or one whose text holds an
  active contains-pin literal (or creates such text); reordering never matters. Whether a pin
  compares exactly or by equivalence changes only how a message's key or text is read, never
  which messages a pin can see, so the lemma holds for both (text is read as the pin reads
  it: parts, or joined runs).
- retention splits into two parts. Result findings are per message: with O clean for them,
  M's are those of its new messages. Latest/exchange findings depend only on M's *skeleton*:
  each message mapped to its identity if that identity is an *anchor* (it occurs in a retained
  before exchange, or is the before's latest user message), else to U (a user message) or O
  (anything else), with every maximal run of non-anchor symbols collapsed to one symbol that
  says only whether the run holds a U. Blocks consist of anchors only, so a match never spans a
  run, and collapsing preserves the order of the anchors, hence every block search and the
  cursor; the latest user message is the last anchor user or lies in the last run holding a U
  (whose identity is no anchor, so it never equals the latest one), which the collapsed form
  also tells. Under `equivalent` comparisons the same holds with each message's key under its
  rule's comparison in place of its identity (`Loaded.key`: the blocks use `retain.compare`,
  the latest rule its own), so an anchor's symbol holds both keys. An edit that leaves the
  collapsed skeleton unchanged leaves these findings (which point into before) unchanged:
  changing a message without changing its symbol; deleting, swapping or moving to behind a
  final run non-anchor messages, so long as no run empties (its anchors would meet) and no run
  gains or loses its only U messages.
- tool_call_integrity, O clean: its findings on M are those of M's new messages and of the
  untouched results whose content key is that of a (result id, key) pair the edit removed,
  judged against M's kept calls and results (`kept_calls`, which states why).
- provider_validity under the openai-chat, anthropic and gemini profiles, O clean: their batch
  rules judge each batch (a non-tool message and the tool run after it, with Gemini's context
  of instruction messages) alone, so M's findings are those of the batches holding a new
  message or a layout piece's first or last position (and, for Gemini, the batches whose context
  holds one), plus Anthropic's final-turn rules judged on M's last turn (`provider_batches`,
  which states why, tails included); under openai-responses the call rules are id-local and
  judged like tool_pair_integrity's, and the reasoning rules on windows around the edit.
- Where these lemmas do not apply, `local` reruns the id-local checks (tool_pair_integrity,
  unique_tool_ids), the per-message check (tool_arguments) and structure on a swap on the few
  messages the edit can affect (its docstring states why that is all of the mutant's findings).
  Everything else is rerun over the whole mutant, which is then assembled.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from frayproof_audit.checks import (
    CHECKS,
    format_notes,
    pinned_content,
    provider_validity,
    retention,
    structure,
    tool_arguments,
    tool_call_integrity,
    tool_pairs,
    unique_ids,
)
from frayproof_audit.checks.base import Check, CheckSettings
from frayproof_audit.contract import Contract
from frayproof_audit.equivalence import EXACT, equivalence_key
from frayproof_audit.formats.base import Format
from frayproof_audit.model import INSTRUCTION_ROLES, has_content
from frayproof_audit.mutate.edits import Edit, Effects
from frayproof_audit.mutate.kept_calls import KeptCalls
from frayproof_audit.mutate.local import LocalFacts
from frayproof_audit.mutate.provider_batches import batch_rules
from frayproof_audit.mutate.provider_batches import findings as provider_findings
from frayproof_audit.mutate.shape import Fresh, Original, Shape
from frayproof_audit.prepared import BeforeFacts, pin_texts
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import Loaded, MessageView

_PINS, _RETENTION = pinned_content.CHECK, retention.CHECK
_STRUCTURE, _PAIRS, _IDS = structure.CHECK, tool_pairs.CHECK, unique_ids.CHECK
_ARGUMENTS = tool_arguments.CHECK
_CALLS = tool_call_integrity.CHECK
_PROVIDER = provider_validity.CHECK
_NOTES = format_notes.CHECK
_PAIR_ROLES = frozenset({"assistant", "tool"})
_VIEW_ONLY = (_STRUCTURE, _PAIRS, _IDS)


class IncrementalEvaluator:
    """Per-pair knowledge of the original output's findings, and the per-mutant decisions."""

    def __init__(self, after: Loaded, contract: Contract, facts: BeforeFacts,
                 original: Original | None = None) -> None:
        self.after = after
        self.contract = contract
        self.facts = facts
        self.enabled: list[tuple[Check, CheckSettings]] = [
            (check, settings)
            for check in CHECKS
            if (settings := contract.settings(check.key)).enabled
        ]
        self.original: dict[str, list[Violation]] = {
            check.name: check.find(after, contract, facts, settings)
            for check, settings in self.enabled
        }
        self.roles = [view.role for view in after.views]
        self.call_uses = Counter(
            call.id for view in after.views if view.role == "assistant" for call in view.calls if call.id
        )
        self.allow_pending = bool(contract.option(_PAIRS.key, tool_pairs.ALLOW_PENDING))
        self.policy = contract.option(_STRUCTURE.key, structure.SYSTEM_MESSAGES)
        if original is None:
            original = Original(after.wire, after.views, after.format,
                                [after.known_identity(i) for i in range(len(after))])
        self.local = LocalFacts(original)
        self.kept_calls: KeptCalls | None = None
        if facts.calls is not None and not self.original.get(_CALLS.name, True):
            self.kept_calls = KeptCalls(after.views, facts.calls)
        self.provider_rules = (None if self.original.get(_PROVIDER.name, True)
                               else batch_rules(contract.settings(_PROVIDER.key), after.format.name))
        self.noteless = Loaded([], [], after.format)
        """What `format_notes` reads of a mutant: its notes, and a mutant carries none (it is
        built from neutral messages, not read from wire data), so the check sees only the
        before snapshot's notes, exactly as on the fully built mutant."""
        self._prepare_pins(after)
        self._prepare_retention(after)

    # ------------------------------------------------------------------ per-pair preparation

    def _prepare_pins(self, after: Loaded) -> None:
        contract = self.contract
        self.pinned_roles = {pin.role for pin in contract.pins if pin.role is not None}
        self.literals = [
            (pin.contains, pin.match)
            for pin, facts in zip(contract.pins, self.facts.pins, strict=True)
            if pin.contains is not None and facts.text_index is not None
        ]
        self.pin_relevant = [self._pin_relevant(view) for view in after.views]

    def _pin_relevant(self, view: MessageView) -> bool:
        """A message of a pinned role, or one whose text (as its pin reads text: parts, or
        joined runs under `equivalent`) holds an active literal."""
        if view.role in self.pinned_roles:
            return True
        return any(literal in text for literal, match in self.literals
                   for text in pin_texts(view.content, match))

    def _prepare_retention(self, after: Loaded) -> None:
        """Split retention into its positional part and its per-result part, when running the
        two parts on the original reproduces the whole check (else never split)."""
        facts = self.facts
        self.split_retention = False
        if _RETENTION.name not in self.original:
            return
        self.retention_settings = self.contract.settings(_RETENTION.key)
        self.positional_facts = replace(facts, results=None)
        self.result_facts = replace(facts, exchanges=(), latest_user=None)
        self.has_positional = bool(facts.exchanges) or facts.latest_user is not None
        positional = self._positional(after)
        results = _RETENTION.find(after, self.contract, self.result_facts, self.retention_settings)
        if positional + results != self.original[_RETENTION.name]:
            return
        self.split_retention = True
        self.original_positional = positional
        self.results_clean = not results
        retain = self.contract.retain
        self.block_compare = retain.compare
        self.latest_compare = retain.latest_user_message or EXACT
        self.block_anchors = {key for _, _, block in facts.exchanges for key in block}
        self.latest_anchor = None if facts.latest_user is None else facts.latest_user[1][0]
        self.skeleton: list[Symbol] = []
        self.run_of: list[int] = []
        self.run_sizes: list[int] = []
        self.run_users: list[int] = []
        if self.has_positional:
            for index, view in enumerate(after.views):
                symbol = self._symbol(after.wire[index], view,
                                      functools.partial(after.key, index))
                self.skeleton.append(symbol)
                if type(symbol) is not int:
                    self.run_of.append(-1)
                    continue
                if not self.run_of or self.run_of[-1] < 0:
                    self.run_sizes.append(0)
                    self.run_users.append(0)
                run = len(self.run_sizes) - 1
                self.run_of.append(run)
                self.run_sizes[run] += 1
                self.run_users[run] += symbol == _USER

    def _positional(self, loaded: Loaded) -> list[Violation]:
        if not self.has_positional:
            return []
        return _RETENTION.find(loaded, self.contract, self.positional_facts, self.retention_settings)

    # ------------------------------------------------------------------ per mutant

    def evaluate(self, edit: Edit, mutant: Shape) -> Report:
        """The mutant's report; the whole mutant is assembled only if some check needs it."""
        effects = edit.effects()
        fresh = mutant.fresh
        found: list[Violation] = []
        for check, settings in self.enabled:
            if check is _RETENTION and self.split_retention and effects.declared:
                found += self._retention(effects, mutant)
            elif effects.declared and self._unchanged(check, effects, fresh):
                found += self.original[check.name]
            elif effects.declared and (check is _PAIRS or check is _IDS) and not self.original[check.name]:
                found += self.local.id_local(check, effects, mutant, self.contract, self.facts,
                                             settings, with_tail=check is _PAIRS)
            elif check is _NOTES:
                found += check.find(self.noteless, self.contract, self.facts, settings)
            elif effects.declared and check is _ARGUMENTS and not self.original[check.name]:
                found += self.local.per_message(check, mutant, self.contract, self.facts, settings)
            elif (judged := self._judged_alone(check, effects, mutant, settings)) is not None:
                found += judged
            elif (check is _STRUCTURE and effects.swapped is not None and not self.original[check.name]
                  and effects == Effects(swapped=effects.swapped)
                  and effects.swapped[0] < effects.swapped[1]):
                found += self.local.swap_window(*effects.swapped, mutant, settings)
            else:
                found += check.find(mutant.loaded, self.contract, self.facts, settings)
        return Report(tuple(found))

    def _judged_alone(self, check: Check, effects: Effects, mutant: Shape,
                      settings: CheckSettings) -> list[Violation] | None:
        """provider_validity and tool_call_integrity by their lemmas, on the part of the mutant
        an edit can change (None: the lemma does not cover it; rerun in full)."""
        if not effects.declared:
            return None
        if check is _PROVIDER and self.provider_rules is not None:
            return provider_findings(self.provider_rules, self.local, effects, mutant, self.contract,
                                     self.facts, settings)
        if check is _CALLS and self.kept_calls is not None:
            return self.kept_calls.findings(effects, mutant, settings)
        return None

    def _unchanged(self, check: Check, effects: Effects, fresh: Fresh) -> bool:
        """Whether this check's findings on the mutant are the original's, by the lemmas."""
        if check is _PINS:
            return not self._touches_pins(effects, fresh)
        if any(check is view_only for view_only in _VIEW_ONLY) and _only_arguments(effects):
            return True
        if self.original[check.name]:
            return False
        if check is _IDS:
            return not effects.call_repeated
        if check is _PAIRS:
            return self._pairs_unchanged(effects)
        if check is _STRUCTURE:
            return self._structure_unchanged(effects, fresh)
        return False

    def _pairs_unchanged(self, effects: Effects) -> bool:
        roles = self.roles
        if effects.call_dropped or effects.swapped:
            return False
        if any(roles[i] in _PAIR_ROLES for i in effects.deleted):
            return False
        # Text edits and repeated calls change nothing; moves matter only as said above.
        return not (effects.moved_to_end and (
            self.allow_pending or any(roles[i] in _PAIR_ROLES for i in effects.moved_to_end)))

    def _structure_unchanged(self, effects: Effects, fresh: Fresh) -> bool:
        kinds = [bool(effects.deleted), bool(effects.text_edited), bool(effects.call_dropped),
                 bool(effects.call_repeated), bool(effects.moved_to_end), effects.swapped is not None,
                 bool(effects.block_edited), bool(effects.arguments_changed)]
        if sum(kinds) != 1 or effects.swapped is not None:
            return False  # one kind of change at a time; swaps are always rechecked
        if effects.deleted:
            return self._ids_leave_with(effects.deleted)
        if effects.text_edited or effects.block_edited:
            # structure reads content only as "is there any" (assistant) and "is it null"; a
            # block edit keeps a list, so only an assistant's emptiness can flip, as with text
            return not self._assistant_emptiness_flips(fresh)
        if effects.call_dropped:
            return self._dropped_calls_harmless(fresh)
        if effects.moved_to_end:
            return self.policy == "anywhere" and all(
                self.roles[i] in INSTRUCTION_ROLES for i in effects.moved_to_end)
        return True  # a call repeated in its own message, or arguments alone changed (views kept)

    def _ids_leave_with(self, deleted: tuple[int, ...]) -> bool:
        """No call id of a deleted assistant is still called by a surviving message."""
        views = self.after.views
        gone = Counter(
            call.id for i in deleted if views[i].role == "assistant" for call in views[i].calls
            if call.id
        )
        return all(self.call_uses[call_id] == count for call_id, count in gone.items())

    def _dropped_calls_harmless(self, fresh: Fresh) -> bool:
        """Each dropped call's id is used by no other call, and no assistant is left empty."""
        views = self.after.views
        for position, _, view in fresh:  # in-place rewrites: `position` is the original index
            dropped = Counter(call.id for call in views[position].calls)
            dropped.subtract(call.id for call in view.calls)
            for call_id, count in dropped.items():
                if count > 0 and call_id and self.call_uses[call_id] != count:
                    return False
            if view.role == "assistant" and _empty_assistant(view):
                return False
        return True

    def _assistant_emptiness_flips(self, fresh: Fresh) -> bool:
        """Whether an in-place edit turns an assistant message empty or non-empty as structure
        judges it (no calls, no content, no refusal text)."""
        views = self.after.views
        for position, _, view in fresh:
            # Text edits keep positions, so `position` is also the original index.
            if view.role == "assistant" and _empty_assistant(view) != _empty_assistant(views[position]):
                return True
        return False

    def _touches_pins(self, effects: Effects, fresh: Fresh) -> bool:
        if effects.permutes:
            return False  # pins never depend on positions
        relevant = self.pin_relevant
        return (
            any(relevant[i] for i in effects.deleted)
            or any(relevant[i] for i in effects.rewritten)
            or any(self._pin_relevant(view) for _, _, view in fresh)
        )

    def _retention(self, effects: Effects, mutant: Shape) -> list[Violation]:
        settings = self.retention_settings
        fresh = mutant.fresh
        if self._keeps_skeleton(effects, fresh):
            found = list(self.original_positional)
        else:
            found = self._positional(mutant.loaded)
        if not self.results_clean:
            return found + _RETENTION.find(mutant.loaded, self.contract, self.result_facts, settings)
        if self.facts.results is None:
            return found
        new_results = [(p, message, view) for p, message, view in fresh if view.role == "tool"]
        if new_results:
            small = Loaded([message for _, message, _ in new_results],
                           [view for _, _, view in new_results], mutant.original.format)
            for violation in _RETENTION.find(small, self.contract, self.result_facts, settings):
                assert violation.message_index is not None
                found.append(replace(violation, message_index=new_results[violation.message_index][0]))
        return found

    def _keeps_skeleton(self, effects: Effects, fresh: Fresh) -> bool:
        """Whether the edit provably leaves the collapsed skeleton (module docstring) as is."""
        if not self.has_positional:
            return True
        symbols = self.skeleton
        if effects.rewritten:
            # In-place rewrites keep positions: each new message replaces the one at its index.
            return not (effects.deleted or effects.moved_to_end or effects.swapped) and all(
                self._symbol(message, view) == symbols[position] for position, message, view in fresh)
        run_of = self.run_of
        sizes: Counter[int] = Counter()  # run -> change in its size
        users: Counter[int] = Counter()  # run -> change in its number of user messages
        if effects.swapped is not None:
            if effects.deleted or effects.moved_to_end:
                return False
            first, second = effects.swapped
            if run_of[first] < 0 or run_of[second] < 0:
                return False  # an anchor moves
            users[run_of[first]] += (symbols[second] == _USER) - (symbols[first] == _USER)
            users[run_of[second]] += (symbols[first] == _USER) - (symbols[second] == _USER)
        elif effects.moved_to_end:
            if effects.deleted or len(effects.moved_to_end) != 1:
                return False
            moved, last = effects.moved_to_end[0], run_of[-1]
            if run_of[moved] < 0 or last < 0:
                return False  # an anchor moves, or the moved message starts a new run at the end
            sizes[run_of[moved]] -= 1
            users[run_of[moved]] -= symbols[moved] == _USER
            sizes[last] += 1
            users[last] += symbols[moved] == _USER
        for index in effects.deleted:
            if run_of[index] < 0:
                return False  # an anchor goes
            sizes[run_of[index]] -= 1
            users[run_of[index]] -= symbols[index] == _USER
        for run in sizes.keys() | users.keys():
            size, count = self.run_sizes[run], self.run_users[run]
            if size + sizes[run] < 1 or (count > 0) != (count + users[run] > 0):
                return False  # a run vanishes (anchors meet), or gains or loses its only users
        return True

    def _symbol(self, message: dict[str, Any], view: MessageView,
                key: Callable[[str], bytes] | None = None) -> Symbol:
        """The message's skeleton symbol: its anchor keys if it is an anchor, else U or O.

        An anchor is a message whose key under the blocks' comparison is a block key, or
        whose key under the latest rule's comparison is the latest one's; the symbol holds
        both keys (None where it is no anchor), so equal symbols decide every block search
        and the latest test alike, whichever comparison each rule uses.
        """
        if key is None:
            key = functools.partial(_message_key, self.after.format, message)
        block_anchor = latest_anchor = None
        if self.block_anchors:
            block = key(self.block_compare)
            if block in self.block_anchors:
                block_anchor = block
        if self.latest_anchor is not None:
            latest = key(self.latest_compare)
            if latest == self.latest_anchor:
                latest_anchor = latest
        if block_anchor is None and latest_anchor is None:
            return _USER if view.role == "user" else _OTHER
        return block_anchor, latest_anchor


def _empty_assistant(view: MessageView) -> bool:
    """structure's empty-assistant condition, for an assistant message."""
    return not (view.calls or has_content(view.content) or (view.refusal and view.refusal.strip()))


def _only_arguments(effects: Effects) -> bool:
    """The edit changes call arguments in place and nothing else."""
    return bool(effects.arguments_changed) and effects == Effects(
        arguments_changed=effects.arguments_changed)


def _message_key(fmt: Format, message: dict[str, Any], compare: str) -> bytes:
    """A neutral message dict's key under `compare` (as `Loaded.key` computes it)."""
    return fmt.identity(message) if compare == EXACT else equivalence_key(message)


_OTHER = 0
_USER = 1
Symbol = int | tuple[bytes | None, bytes | None]
"""A skeleton symbol: U or O (ints), or an anchor's (block key, latest key)."""
