"""Judge a mutant by running only the checks its edit can change (the fast path's evaluator).

Every check is still run by the engine's own `find` functions; what this module decides is
*which* checks need to run on a mutant and which findings can be taken from the real output
(the "original", whose per-check findings are computed once per pair). The rules are small
lemmas about the checks, each stated where it is used. They rely on the baseline having passed
(mutants are only built then) and, for after-indexed checks, on the original having **no
finding at all** from that check (call it *clean*); a check with warnings on the original is
simply rerun. Unknown checks (a future engine) are always rerun.

Lemmas (O = original output, M = mutant; "clean" = no finding of that check on O):
- unique_tool_ids, O clean: deleting messages or calls, moving messages and editing text never
  create a repeated id; only `duplicate_tool_id` can.
- tool_pair_integrity, O clean: text edits and duplicating an answered call (same id, same
  message) change nothing; removing the latest user message or moving an instruction (without
  the trailing-pending allowance) keeps every call's answer and never un-excuses a call.
- structure, O clean: deleting a call, a result, the latest user message or a closed exchange
  can only shrink `called` and end batches whose later results were not called; truncating a
  tool result keeps it non-null; a text edit matters only if an assistant's has-content flips;
  moving an instruction matters only for placement policies other than `anywhere`.
- pinned_content never depends on positions (findings point into before): M's findings equal
  O's unless the edit deletes or alters a message of a pinned role or one whose text holds an
  active contains-pin literal (or creates such text).
- retention splits into two parts. Result findings are per message: with O clean for them,
  M's are those of its new messages. Latest/exchange findings depend only on M's *skeleton*:
  each message mapped to its identity if that identity is an *anchor* (it occurs in a retained
  before exchange, or is the before's latest user message), else to U (a user message) or O
  (anything else), with every run of O collapsed to one O. Blocks consist of anchors only, so a
  match never spans an O, and collapsing O runs preserves the order of all other positions,
  hence every block search, the cursor and the latest-user comparison. An edit that leaves the
  collapsed skeleton unchanged leaves these findings (which point into before) unchanged:
  changing a message without changing its symbol, deleting an O next to another O, swapping two
  O messages, or moving an O next to another O to behind a final O.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

from frayproof_audit.checks import AFTER_CHECKS, BEFORE_CHECKS
from frayproof_audit.checks import pinned_content as pins_check
from frayproof_audit.checks import retention as retention_check
from frayproof_audit.checks import structure as structure_check
from frayproof_audit.checks import tool_pairs as pairs_check
from frayproof_audit.checks import unique_ids as ids_check
from frayproof_audit.contract import CheckSettings, Contract
from frayproof_audit.model import has_content, text_parts
from frayproof_audit.mutate.edits import (
    AppendCallCopy,
    DeleteMessage,
    DropCall,
    Edit,
    EditText,
    KeepInstructions,
    MoveToEnd,
    Swap,
)
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Report, Violation
from frayproof_audit.snapshot import Loaded, MessageView, message_identity

Fresh = list[tuple[int, dict[str, Any], MessageView]]
"""The new messages of a mutant: (position in the mutant, wire dict, view)."""

_CHECKS: tuple[ModuleType, ...] = AFTER_CHECKS + BEFORE_CHECKS


class IncrementalEvaluator:
    """Per-pair knowledge of the original output's findings, and the per-mutant decisions."""

    def __init__(self, after: Loaded, contract: Contract, facts: BeforeFacts) -> None:
        self.after = after
        self.contract = contract
        self.facts = facts
        self.enabled = [
            (module, settings)
            for module in _CHECKS
            if (settings := _settings(contract, module)).enabled
        ]
        self.original: dict[str, list[Violation]] = {
            module.NAME: module.find(after, contract, facts, settings.severity)
            for module, settings in self.enabled
        }
        self._prepare_pins(after)
        self._prepare_retention(after)

    # ------------------------------------------------------------------ per-pair preparation

    def _prepare_pins(self, after: Loaded) -> None:
        contract = self.contract
        self.pinned_roles = {pin.role for pin in contract.pins if pin.role is not None}
        self.literals = [
            pin.contains
            for pin, facts in zip(contract.pins, self.facts.pins, strict=True)
            if pin.contains is not None and facts.text_index is not None
        ]
        self.pin_relevant = [self._pin_relevant(view) for view in after.views]

    def _pin_relevant(self, view: MessageView) -> bool:
        if view.role in self.pinned_roles:
            return True
        literals = self.literals
        return bool(literals) and any(
            literal in part for part in text_parts(view.content) for literal in literals
        )

    def _prepare_retention(self, after: Loaded) -> None:
        """Split retention into its positional part and its per-result part, when running the
        two parts on the original reproduces the whole check (else never split)."""
        facts = self.facts
        self.split_retention = False
        if retention_check.NAME not in self.original:
            return
        severity = self.contract.retention.severity
        self.positional_facts = replace(facts, results=None)
        self.result_facts = replace(facts, exchanges=(), latest_user=None)
        self.has_positional = bool(facts.exchanges) or facts.latest_user is not None
        positional = self._positional(after, severity)
        results = retention_check.find(after, self.contract, self.result_facts, severity)
        if positional + results != self.original[retention_check.NAME]:
            return
        self.split_retention = True
        self.original_positional = positional
        self.results_clean = not results
        anchors = {identity for _, _, block in facts.exchanges for identity in block}
        if facts.latest_user is not None:
            anchors.add(facts.latest_user[1])
        self.anchors = anchors
        self.skeleton: list[int | bytes] = []
        if self.has_positional:
            for index, view in enumerate(after.views):
                identity = after.identity(index)
                self.skeleton.append(identity if identity in anchors
                                     else _USER if view.role == "user" else _OTHER)

    def _positional(self, loaded: Loaded, severity: str) -> list[Violation]:
        if not self.has_positional:
            return []
        return retention_check.find(loaded, self.contract, self.positional_facts, severity)

    # ------------------------------------------------------------------ per mutant

    def evaluate(self, operator: str, edit: Edit, loaded: Loaded, fresh: Fresh) -> Report:
        found: list[Violation] = []
        for module, settings in self.enabled:
            name = module.NAME
            if name == retention_check.NAME and self.split_retention:
                found += self._retention(edit, loaded, fresh, settings.severity)
            elif self._unchanged(module, operator, edit, fresh):
                found += self.original[name]
            else:
                found += module.find(loaded, self.contract, self.facts, settings.severity)
        return Report(tuple(found))

    def _unchanged(self, module: ModuleType, operator: str, edit: Edit, fresh: Fresh) -> bool:
        """Whether this check's findings on the mutant are the original's, by the lemmas."""
        if module is pins_check:
            return not self._touches_pins(edit, fresh)
        if self.original[module.NAME]:
            return False
        if module is ids_check:
            return operator != "duplicate_tool_id"
        if module is pairs_check:
            if operator in ("remove_pinned_text", "truncate_tool_result", "duplicate_tool_id",
                            "drop_latest_user"):
                return True
            return operator == "move_instruction" and not self.contract.allow_trailing_pending_call
        if module is structure_check:
            if operator in ("drop_tool_call", "drop_tool_result", "duplicate_tool_id",
                            "drop_latest_user", "drop_recent_exchange", "truncate_tool_result"):
                return True
            if operator == "move_instruction":
                return self.contract.system_messages == "anywhere"
            if operator == "remove_pinned_text":
                return not self._assistant_emptiness_flips(fresh)
        return False

    def _assistant_emptiness_flips(self, fresh: Fresh) -> bool:
        views = self.after.views
        for position, _, view in fresh:
            # Text edits keep positions, so `position` is also the original index.
            if view.role == "assistant" and (
                has_content(view.content) != has_content(views[position].content)
            ):
                return True
        return False

    def _touches_pins(self, edit: Edit, fresh: Fresh) -> bool:
        relevant = self.pin_relevant
        if isinstance(edit, DropCall | DeleteMessage | AppendCallCopy):
            return relevant[edit.index]
        if isinstance(edit, EditText):
            return any(relevant[i] for i in edit.indices) or any(
                self._pin_relevant(view) for _, _, view in fresh
            )
        if isinstance(edit, KeepInstructions):
            kept = set(edit.kept)
            return any(relevant[i] for i in range(edit.start, edit.stop) if i not in kept)
        return False  # Swap, MoveToEnd: a permutation changes no pin's verdict

    def _retention(self, edit: Edit, loaded: Loaded, fresh: Fresh, severity: str) -> list[Violation]:
        if self._keeps_skeleton(edit, fresh):
            found = list(self.original_positional)
        else:
            found = self._positional(loaded, severity)
        if not self.results_clean:
            return found + retention_check.find(loaded, self.contract, self.result_facts, severity)
        if self.facts.results is None:
            return found
        new_results = [(p, message, view) for p, message, view in fresh if view.role == "tool"]
        if new_results:
            small = Loaded([message for _, message, _ in new_results],
                           [view for _, _, view in new_results])
            for violation in retention_check.find(small, self.contract, self.result_facts, severity):
                assert violation.message_index is not None
                found.append(replace(violation, message_index=new_results[violation.message_index][0]))
        return found

    def _keeps_skeleton(self, edit: Edit, fresh: Fresh) -> bool:
        """Whether the edit provably leaves the collapsed skeleton (module docstring) as is."""
        if not self.has_positional:
            return True
        symbols = self.skeleton
        if isinstance(edit, DeleteMessage) or (isinstance(edit, DropCall) and edit.drops_message):
            return self._lone_removable(edit.index)
        if isinstance(edit, DropCall | AppendCallCopy | EditText):
            # In-place edits keep positions: each new message replaces the one at its index.
            return all(self._symbol(message, view) == symbols[position]
                       for position, message, view in fresh)
        if isinstance(edit, Swap):
            return symbols[edit.first] == symbols[edit.second] == _OTHER
        if isinstance(edit, MoveToEnd):
            return self._lone_removable(edit.index) and symbols[-1] == _OTHER
        return False

    def _lone_removable(self, index: int) -> bool:
        symbols = self.skeleton
        return symbols[index] == _OTHER and (
            (index > 0 and symbols[index - 1] == _OTHER)
            or (index + 1 < len(symbols) and symbols[index + 1] == _OTHER))

    def _symbol(self, message: dict[str, Any], view: MessageView) -> int | bytes:
        identity = message_identity(message)
        if identity in self.anchors:
            return identity
        return _USER if view.role == "user" else _OTHER


_OTHER = 0
_USER = 1


def _settings(contract: Contract, module: ModuleType) -> CheckSettings:
    settings: CheckSettings = getattr(contract, module.SETTINGS)
    return settings
