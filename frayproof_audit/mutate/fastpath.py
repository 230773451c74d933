"""Copy-on-write mutants and their evaluation against facts prepared once.

frayproof deep-copies the whole output for every mutant, serializes it for dedupe, re-parses and
re-validates every message and recomputes every identity. Here one `SharedPair` holds what all
mutants of a pair share: the output's views, identities and per-message dedupe classes, and the
before facts. A mutant is a `Shape`: a layout of original ranges plus the few messages its edit
changed, which alone are validated (by the snapshot's format) and hashed; it is assembled into
a full snapshot only if some check must be rerun over all of it. The engine's own check
functions then judge it; each check's re-check (asked by `incremental`) decides whether the edit
can affect it at all, taking its findings from the original output otherwise (or rerunning it
on the few messages the edit can affect). The fast path changes what is rebuilt and rerun,
never how anything is judged.

Correctness rests on two facts. (1) Views and identities are pure functions of a message's
value, so a message reused unchanged has the view and identity it had in the output.
(2) Two mutants are merged exactly when their sequences of per-message canonical-JSON classes
are equal, which is exactly when their whole-list sorted-key JSON is: a list's JSON is its
elements' JSON joined in order, and canonical JSON is an injective encoding of a JSON value just
as `json.dumps(sort_keys=True)` is. A hash of the sequence only picks which groups to compare
(`SharedPair.distinct`). Outputs that share mutable objects between positions are not eligible
(see `shares_mutable_objects`); the runner sends those down the deep-copy path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import editable_parts
from frayproof_audit.mutate.edits import Edit
from frayproof_audit.mutate.incremental import IncrementalEvaluator
from frayproof_audit.mutate.operators import Candidate, Group
from frayproof_audit.mutate.shape import Original, Shape
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.report import Report, Violation


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


class SharedPair:
    """What every mutant of one (before, output, contract) shares; built once per pair."""

    __slots__ = ("evaluator", "original")

    def __init__(self, after: Loaded, contract: Contract, facts: BeforeFacts,
                 found: Mapping[str, list[Violation]] | None = None) -> None:
        # The identities known so far; a check whose mutants will look identities up has every
        # one computed into this list once, by its re-check (`PairContext.keep_identities`).
        self.original = Original(after.wire, after.views, after.format,
                                 [after.known_identity(i) for i in range(len(after))])
        self.evaluator = IncrementalEvaluator(after, contract, facts, self.original, found)

    def shape(self, edit: Edit) -> Shape:
        """The mutant of `edit` as a layout over the original (nothing copied yet)."""
        return Shape(self.original, edit.segments(self.original.wire))

    def evaluate(self, candidate: Candidate, mutant: Shape) -> Report:
        return self.evaluator.evaluate(candidate.edit, mutant)

    def distinct(self, candidates: Sequence[Candidate]) -> list[tuple[Group, Shape]]:
        """Merge candidates whose mutants are equal lists, first one first (as `dedupe`).

        Mutants are bucketed by (length, hash of the class sequence), computed from the pieces
        alone; a candidate joins a group only after its full class sequence equals the group's,
        so a hash collision can only cost time, never merge two different mutants. Within one
        operator, equal class sequences are rare (they need identical neighbouring messages),
        so the full comparison almost never runs.
        """
        if len(candidates) == 1:
            only = candidates[0]
            return [(Group(only, (only.site,)), self.shape(only.edit))]
        groups: list[tuple[Group, Shape]] = []
        full: dict[int, list[int]] = {}
        buckets: dict[tuple[int, int], list[int]] = {}
        for candidate in candidates:
            mutant = self.shape(candidate.edit)
            bucket = buckets.setdefault((mutant.length, mutant.class_hash()), [])
            for number in bucket:
                group, first = groups[number]
                known = full.get(number)
                if known is None:
                    known = full[number] = first.classes()
                if known == mutant.classes():
                    groups[number] = (Group(group.first, (*group.sites, candidate.site)), first)
                    break
            else:
                bucket.append(len(groups))
                groups.append((Group(candidate, (candidate.site,)), mutant))
        return groups

