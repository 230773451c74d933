"""Copy-on-write mutants and their evaluation against facts prepared once.

frayproof deep-copies the whole output for every mutant, serializes it for dedupe, re-parses and
re-validates every message and recomputes every identity. Here one `SharedPair` holds what all
mutants of a pair share: the output's views, identities and per-message dedupe classes, and the
before facts. A mutant is assembled from slices of those lists plus the few messages its edit
changed, which alone are validated (by the snapshot's format) and hashed. The engine's own check functions
then judge it; `incremental` decides which of them the edit can affect at all, and takes the
others' findings from the original output. The fast path changes what is rebuilt and rerun,
never how anything is judged.

Correctness rests on two facts. (1) Views and identities are pure functions of a message's
value, so a message reused unchanged has the view and identity it had in the output.
(2) The dedupe key of a mutant, the tuple of its messages' canonical-JSON classes, is equal for
two mutants exactly when their whole-list sorted-key JSON is: a list's JSON is its elements'
JSON joined in order, and canonical JSON is an injective encoding of a JSON value just as
`json.dumps(sort_keys=True)` is. Outputs that share mutable objects between positions are not
eligible (see `shares_mutable_objects`); the runner sends those down the deep-copy path.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.jsonio import canonical
from frayproof_audit.model import editable_parts
from frayproof_audit.mutate.edits import Edit
from frayproof_audit.mutate.incremental import Fresh, IncrementalEvaluator
from frayproof_audit.mutate.operators import Candidate
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Report
from frayproof_audit.snapshot import Loaded, MessageView


def shares_mutable_objects(wire: list[Any]) -> bool:
    """True when an object an operator edits in place appears at two places in the output.

    frayproof edits deep copies in place, and a deep copy keeps sharing, so an edit at one
    position would also show at the other. Only message dicts, `tool_calls` lists and content
    blocks are ever edited in place, so only those are looked at.
    """
    seen: set[int] = set()
    count = 0
    for message in wire:
        seen.add(id(message))
        count += 1
        if type(message) is not dict:
            continue
        for part in editable_parts(message):
            seen.add(id(part))
            count += 1
    return len(seen) != count


class Mutant:
    """An assembled mutant: its snapshot (mostly reused parts) and its new messages."""

    __slots__ = ("fresh", "loaded")

    def __init__(self, loaded: Loaded, fresh: Fresh) -> None:
        self.loaded = loaded
        self.fresh = fresh


class SharedPair:
    """What every mutant of one (before, output, contract) shares; built once per pair."""

    __slots__ = ("_classes", "_interned", "evaluator", "format", "identities", "views", "wire")

    def __init__(self, after: Loaded, contract: Contract, facts: BeforeFacts) -> None:
        self.wire = after.wire
        self.format = after.format
        self.views = after.views
        if _needs_identities(contract, facts):
            self.identities: list[bytes | None] = [after.identity(i) for i in range(len(after))]
        else:
            self.identities = [after.known_identity(i) for i in range(len(after))]
        self.evaluator = IncrementalEvaluator(after, contract, facts)
        self._classes: list[int] | None = None
        self._interned: dict[bytes, int] = {}

    def _class_of(self, message: dict[str, Any]) -> int:
        data = canonical(message)
        found = self._interned.get(data)
        if found is None:
            found = self._interned[data] = len(self._interned)
        return found

    def classes(self) -> list[int]:
        """Per original message: a small int, equal for messages with equal canonical JSON."""
        if self._classes is None:
            self._classes = [self._class_of(message) for message in self.wire]
        return self._classes

    def assemble(self, edit: Edit, keyed: bool = False) -> tuple[Mutant, tuple[int, ...]]:
        """Build the mutant from slices of the original and its few new messages; with
        `keyed`, also its dedupe key (else an empty tuple)."""
        wire, views, identities = self.wire, self.views, self.identities
        classes = self.classes() if keyed else None
        new_wire: list[dict[str, Any]] = []
        new_views: list[MessageView] = []
        new_ids: list[bytes | None] = []
        key: list[int] = []
        fresh: Fresh = []
        for segment in edit.segments(wire):
            if type(segment) is tuple:
                start, stop = segment
                if start < stop:
                    new_wire += wire[start:stop]
                    new_views += views[start:stop]
                    new_ids += identities[start:stop]
                    if classes is not None:
                        key += classes[start:stop]
            else:
                assert isinstance(segment, list)
                made = self.format.views(segment)
                fresh += zip(range(len(new_wire), len(new_wire) + len(segment)), segment, made,
                             strict=True)
                new_wire += segment
                new_views += made
                new_ids += [None] * len(segment)
                if classes is not None:
                    key += [self._class_of(message) for message in segment]
        return Mutant(Loaded(new_wire, new_views, self.format, new_ids), fresh), tuple(key)

    def evaluate(self, candidate: Candidate, mutant: Mutant) -> Report:
        return self.evaluator.evaluate(candidate.edit, mutant.loaded, mutant.fresh)

    def key(self, candidate: Candidate, cache: dict[int, Mutant]) -> Hashable:
        """Dedupe key of a candidate's mutant; the mutant is kept in `cache` for evaluation."""
        mutant, key = self.assemble(candidate.edit, keyed=True)
        cache[id(candidate)] = mutant
        return key


def _needs_identities(contract: Contract, facts: BeforeFacts) -> bool:
    """Whether mutants will look identities up (then compute each original one once, here)."""
    pins = contract.settings("pinned_content").enabled and any(
        pin.role is not None for pin in contract.pins)
    retain = contract.settings("retention").enabled and (
        bool(facts.exchanges) or facts.latest_user is not None)
    return pins or retain
