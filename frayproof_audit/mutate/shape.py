"""A mutant as a layout over the original output, never copied unless a check needs it whole.

An edit's `segments` say which original ranges a mutant reuses, in which order, and which few
messages are new. `Shape` keeps exactly that (ranges with their offsets in the mutant, and the
new messages with their views) and answers what the incremental evaluator asks in time
proportional to the number of pieces, not to the output's length: where an original message
sits in the mutant, the view at a mutant position, the last non-tool position, a hash of the
mutant's message classes. `loaded` builds the full snapshot only on first use (a check that must
be rerun over the whole mutant); that costs what the old per-mutant assembly cost.

`Original` is what every shape of one output shares: views, identities, per-message classes
for dedupe, their prefix hashes and the neighbour tables. It is built once per pair. A check's
re-check reads both through the protocols of `recheck.mutant` (`Output`, `Mutant`).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded, MessageView
from frayproof_audit.mutate.edits import Segment
from frayproof_audit.recheck.mutant import Fresh, Kept, New

MODULUS = (1 << 61) - 1
"""A Mersenne prime: polynomial hashes of class sequences are taken modulo it."""
BASE = 1_000_003


def weak_class(view: MessageView) -> int:
    """A hash of what the message's view holds: equal for two messages whose canonical JSON is
    equal (they are then equal values, so their views are equal), and cheap, since views are
    already made and a text's hash is cached with it. Dedupe buckets mutants by it, then
    compares their exact classes; it never decides alone."""
    content = view.content
    return hash((view.role, content if type(content) is str else
                 None if content is None else len(content),
                 view.calls, view.tool_call_id, view.refusal)) & MODULUS


class Original:
    """Per-pair facts of the original output that every mutant's shape reads."""

    __slots__ = ("_hashes", "_interned", "_powers", "classes_", "format", "identities",
                 "prev_nontool", "views", "wire")

    def __init__(self, wire: list[dict[str, Any]], views: list[MessageView], fmt: Any,
                 identities: list[bytes | None]) -> None:
        self.wire = wire
        self.views = views
        self.format = fmt
        self.identities = identities
        self.classes_: list[int] | None = None
        self._interned: dict[bytes, int] = {}
        self._hashes: list[int] = []
        self._powers: list[int] = [1]
        prev: list[int] = []
        last = -1
        for index, view in enumerate(views):
            if view.role != "tool":
                last = index
            prev.append(last)
        self.prev_nontool = prev
        """Per position k: the largest j <= k whose role is not `tool`, or -1."""

    def class_of(self, message: dict[str, Any]) -> int:
        """A small int, equal for two messages exactly when their canonical JSON is equal."""
        data = canonical(message)
        found = self._interned.get(data)
        if found is None:
            # orjson's bytes keep its whole write buffer (4 KB for a small message): keep an
            # exact-size copy, or the table would hold ~4 KB per distinct message.
            found = self._interned[bytes(memoryview(data))] = len(self._interned) + 1
        return found

    def classes(self) -> list[int]:
        """Per original message its class (computed once)."""
        if self.classes_ is None:
            self.classes_ = [self.class_of(message) for message in self.wire]
        return self.classes_

    def hashed(self) -> None:
        """The prefix hashes of the original's sequence of `weak_class`es (computed once)."""
        if self._hashes:
            return
        hashes, powers, value, power = [0], self._powers, 0, 1
        for view in self.views:
            value = (value * BASE + weak_class(view)) % MODULUS
            power = power * BASE % MODULUS
            hashes.append(value)
            powers.append(power)
        self._hashes = hashes

    def range_hash(self, start: int, stop: int) -> int:
        hashes = self._hashes
        return (hashes[stop] - hashes[start] * self._powers[stop - start]) % MODULUS

    def power(self, length: int) -> int:
        if length < len(self._powers):
            return self._powers[length]
        return pow(BASE, length, MODULUS)


class Shape:
    """One mutant: original ranges `(offset in mutant, start, stop)` and new messages."""

    __slots__ = ("_by_start", "_fresh_ids", "_loaded", "_loaded_ids", "_offsets", "fresh", "length",
                 "original", "pieces", "ranges")

    def __init__(self, original: Original, segments: list[Segment]) -> None:
        self.original = original
        pieces: list[Kept | New] = []
        ranges: list[Kept] = []
        fresh: Fresh = []
        offset = 0
        for segment in segments:
            if type(segment) is tuple:
                start, stop = segment
                if start < stop:
                    kept = Kept(offset, start, stop)
                    pieces.append(kept)
                    ranges.append(kept)
                    offset += stop - start
            else:
                assert isinstance(segment, list)
                made = original.format.views(segment)
                pieces.append(New(offset, segment, made))
                fresh += zip(range(offset, offset + len(segment)), segment, made, strict=True)
                offset += len(segment)
        self.pieces = pieces
        self.ranges = ranges
        self.fresh = fresh
        self.length = offset
        self._by_start: list[tuple[int, int, int]] | None = None
        self._offsets: list[int] | None = None
        self._loaded: Loaded | None = None
        self._loaded_ids: list[bytes | None] = []
        """The identities the assembled mutant holds (`loaded`), the same list."""
        self._fresh_ids: list[bytes | None] | None = None

    def fresh_identity(self, number: int) -> bytes:
        """The identity of new message `number` (in `fresh` order), computed once: a re-check
        that reads it and a rerun over the whole mutant share it, in whichever order they
        come."""
        identities = self._fresh_ids
        if identities is None:
            identities = self._fresh_ids = [None] * len(self.fresh)
        found = identities[number]
        if found is None:
            position, message, _ = self.fresh[number]
            if self._loaded is not None:
                found = self._loaded.known_identity(position)
            if found is None:
                # An exact-size copy, as `Loaded.identity` keeps (orjson's keeps its buffer).
                found = bytes(memoryview(self.original.format.identity(message)))
            identities[number] = found
            if self._loaded is not None:
                self._loaded_ids[position] = found
        return found

    # ------------------------------------------------------------------ positions

    def position(self, index: int) -> int | None:
        """Where original message `index` sits in the mutant (None: deleted or replaced)."""
        by_start = self._by_start
        if by_start is None:
            by_start = self._by_start = sorted((start, stop, offset)
                                               for offset, start, stop in self.ranges)
        found = bisect_right(by_start, (index, MODULUS, 0)) - 1
        if found < 0:
            return None
        start, stop, offset = by_start[found]
        return offset + index - start if index < stop else None

    def _parts(self, piece: Kept | New) -> tuple[list[dict[str, Any]], list[MessageView], int, int]:
        """A piece's messages and views (the original's, for a kept run), the shift from a mutant
        position to their index, and the position after the piece."""
        if isinstance(piece, Kept):
            original = self.original
            return (original.wire, original.views, piece.start - piece.offset,
                    piece.offset + piece.stop - piece.start)
        return piece.messages, piece.views, -piece.offset, piece.offset + len(piece.views)

    def views_between(self, start: int, stop: int) -> list[tuple[int, MessageView]]:
        """(mutant position, view) for positions [start, stop) of the mutant."""
        found: list[tuple[int, MessageView]] = []
        for piece in self.pieces:
            _, views, shift, end = self._parts(piece)
            found += ((k, views[k + shift]) for k in range(max(start, piece.offset), min(stop, end)))
        return found

    def messages_between(self, start: int, stop: int) -> list[tuple[int, dict[str, Any], MessageView]]:
        """(mutant position, neutral message, view) for positions [start, stop) of the mutant:
        the original's own dicts where it keeps them (for rules that read a message's blocks)."""
        found: list[tuple[int, dict[str, Any], MessageView]] = []
        for piece in self.pieces:
            messages, views, shift, end = self._parts(piece)
            found += ((k, messages[k + shift], views[k + shift])
                      for k in range(max(start, piece.offset), min(stop, end)))
        return found

    def view_at(self, position: int) -> MessageView:
        """The view at one mutant position (the piece holding it found by bisection)."""
        _, views, shift, _ = self._parts(self._piece_at(position))
        return views[position + shift]

    def message_at(self, position: int) -> dict[str, Any]:
        """The neutral message at one mutant position (the original's own dict where kept)."""
        messages, _, shift, _ = self._parts(self._piece_at(position))
        return messages[position + shift]

    def _piece_at(self, position: int) -> Kept | New:
        offsets = self._offsets
        if offsets is None:
            offsets = self._offsets = [piece.offset for piece in self.pieces]
        return self.pieces[bisect_right(offsets, position) - 1]

    def last_with_role(self, role: str, stop: int | None = None) -> int:
        """The last mutant position before `stop` (default: the end) whose role is `role`, or
        -1; walked piece by piece from the end, so it costs the distance it walks."""
        stop = self.length if stop is None else stop
        for piece in reversed(self.pieces):
            _, views, shift, end = self._parts(piece)
            for k in range(min(stop, end) - 1, piece.offset - 1, -1):
                if views[k + shift].role == role:
                    return k
        return -1

    def tail(self) -> int:
        """The last mutant position whose role is not `tool`, or -1."""
        prev = self.original.prev_nontool
        for piece in reversed(self.pieces):
            if isinstance(piece, Kept):
                found = prev[piece.stop - 1]
                if found >= piece.start:
                    return piece.offset + found - piece.start
            else:
                made: list[MessageView] = piece.views
                offset: int = piece.offset
                for k in range(len(made) - 1, -1, -1):
                    if made[k].role != "tool":
                        return offset + k
        return -1

    # ------------------------------------------------------------------ dedupe

    def class_hash(self) -> int:
        """Polynomial hash of the mutant's sequence of `weak_class`es, from the pieces alone:
        equal mutants hash alike (their classes, and so their weak classes, are equal)."""
        original = self.original
        original.hashed()
        value = 0
        for piece in self.pieces:
            if isinstance(piece, Kept):
                start, stop = piece.start, piece.stop
                value = (value * original.power(stop - start) + original.range_hash(start, stop)) % MODULUS
            else:
                for view in piece.views:
                    value = (value * BASE + weak_class(view)) % MODULUS
        return value

    def classes(self) -> list[int]:
        """The mutant's class sequence in full (only to confirm two equal hashes)."""
        original = self.original
        classes = original.classes()
        found: list[int] = []
        for piece in self.pieces:
            if isinstance(piece, Kept):
                found += classes[piece.start:piece.stop]
            else:
                found += [original.class_of(message) for message in piece.messages]
        return found

    # ------------------------------------------------------------------ the whole mutant

    @property
    def loaded(self) -> Loaded:
        """The mutant as a snapshot (reused dicts, views and identities), built on first use."""
        if self._loaded is None:
            original = self.original
            wire, views, identities = original.wire, original.views, original.identities
            new_wire: list[dict[str, Any]] = []
            new_views: list[MessageView] = []
            new_ids: list[bytes | None] = []
            fresh_ids = self._fresh_ids
            number = 0
            for piece in self.pieces:
                if isinstance(piece, Kept):
                    start, stop = piece.start, piece.stop
                    new_wire += wire[start:stop]
                    new_views += views[start:stop]
                    new_ids += identities[start:stop]
                else:
                    count = len(piece.messages)
                    new_wire += piece.messages
                    new_views += piece.views
                    new_ids += (fresh_ids[number:number + count] if fresh_ids is not None
                                else [None] * count)
                    number += count
            self._loaded_ids = new_ids
            self._loaded = Loaded(new_wire, new_views, original.format, new_ids)
        return self._loaded
