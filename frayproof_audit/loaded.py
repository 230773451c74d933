"""`Loaded`: a validated snapshot in the neutral model, as every check and operator reads it.

It holds the neutral message dicts (Chat-Completions-shaped, see `model`; for the `openai`
format they are the parsed wire dicts themselves, never copied), one `MessageView` per message,
identities computed on first use, the format that read it, and where each neutral message sits
in the user's wire data (`origins`; None when message i is wire message i).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast, overload

from frayproof_audit.equivalence import EXACT, equivalence_key

if TYPE_CHECKING:
    from frayproof_audit.formats.base import Format


def textual(value: Any) -> bool:
    """Whether a parsed JSON value holds no number and no boolean at any depth. For such a
    value Python equality is canonical-JSON equality: strings, null, lists and objects (string
    keys) compare by type and content alike; only numbers and booleans compare equal across
    types or spellings (`True == 1`, `1 == 1.0`, `0.0 == -0.0`)."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list:
        items = value
    else:
        return kind is str or value is None
    for item in items:
        kind = type(item)
        if kind is str or item is None:
            continue
        # Recursive: 40 % cheaper per message than a stack of pending values. Parsed JSON is at
        # most `jsonio.MAX_DEPTH` deep; a deeper Python value raises RecursionError, which
        # `same_key` answers with the keys.
        if (kind is not dict and kind is not list) or not textual(item):
            return False
    return True


class Origin(NamedTuple):
    """Where a neutral message came from: the wire message's index and, for formats that
    split one wire message into several neutral ones, the block index inside it. `field` names
    a part of the snapshot outside its message list (Anthropic's top-level `system`); then
    `message` is meaningless and findings carry no message index."""

    message: int
    block: int | None = None
    field: str | None = None
    calls: tuple[int, ...] | None = None
    """For formats whose messages hold calls among other parts (OTel GenAI `parts`): the wire
    position of each neutral call, in call order, so a call's site names its own part. None
    when call k is the wire's call k."""


class Run(Origin):
    """The origin of a neutral message read from several consecutive wire messages (the
    Responses API's items of one turn): `start` and `stop` bound them (`stop` excluded), and
    `message` is the one findings point at. The bounds are attributes of this subclass, kept
    out of the tuple, so equality and unpacking are `Origin`'s: checks see an ordinary origin,
    and only what rewrites wire data (`wire_span`) reads the bounds."""

    start: int
    stop: int


def run_origin(message: int, start: int, stop: int) -> Origin:
    """The origin of a neutral message read from wire messages [start, stop), pointing at
    `message` (a plain `Origin` when that is one message)."""
    if stop - start == 1:
        return Origin(start)
    run = Run(message)
    run.start = start
    run.stop = stop
    return run


def wire_span(origin: Origin) -> tuple[int, int]:
    """The wire messages [start, stop) a neutral message is read from, in any format."""
    if isinstance(origin, Run):
        return origin.start, origin.stop
    return origin.message, origin.message + 1


class CallView(NamedTuple):
    """What the checks need of one tool call."""

    id: str
    name: str
    type: str


class MessageView(NamedTuple):
    """What the checks need of one message; absent fields already normalized."""

    role: str
    content: str | list[Any] | None
    calls: tuple[CallView, ...]
    tool_call_id: str | None
    refusal: str | None


class Loaded:
    """A validated snapshot: neutral message dicts, a view per message, identities cached."""

    __slots__ = ("_equivalents", "_identities", "format", "guessed", "notes", "origins", "views", "wire")

    def __init__(
        self,
        wire: list[dict[str, Any]],
        views: list[MessageView],
        fmt: Format,
        identities: list[bytes | None] | None = None,
        origins: tuple[Origin, ...] | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.wire = wire
        self.views = views
        self.format = fmt
        self.origins = origins
        self.notes = notes
        self.guessed = False
        """True when `auto` chose the format for want of evidence (both readings agree)."""
        """What the format normalised while reading (ids with surrounding spaces, ...), for a
        check to report; empty for `openai`."""
        self._identities: list[bytes | None] = (
            identities if identities is not None else [None] * len(wire)
        )
        self._equivalents: list[bytes | None] | None = None

    def known_identity(self, index: int) -> bytes | None:
        """The identity if already computed (lets derived snapshots reuse it)."""
        return self._identities[index]

    def __len__(self) -> int:
        return len(self.views)

    def identity(self, index: int) -> bytes:
        """Canonical identity of message `index`, computed on first use."""
        found = self._identities[index]
        if found is None:
            # Kept as an exact-size copy: orjson's result holds on to its whole write buffer
            # (about 4 KB even for a small message), which for a long snapshot whose every
            # identity is cached (mutation) costs 4 KB per message.
            found = bytes(memoryview(self.format.identity(self.wire[index])))
            self._identities[index] = found
        return found

    def equivalence_key(self, index: int) -> bytes:
        """The neutral form of message `index` (`equivalence`), computed on first use."""
        if self._equivalents is None:
            self._equivalents = [None] * len(self.wire)
        found = self._equivalents[index]
        if found is None:
            found = bytes(memoryview(equivalence_key(self.wire[index])))
            self._equivalents[index] = found
        return found

    def key(self, index: int, compare: str) -> bytes:
        """Message `index` as a pin or retention rule compares it: its identity under
        `exact`, its neutral form under `equivalent`."""
        if compare == EXACT:
            return self.identity(index)
        return self.equivalence_key(index)

    def same_key(self, index: int, other: Loaded, other_index: int, compare: str) -> bool:
        """Whether `self.key(index, compare) == other.key(other_index, compare)`. Python
        equality of the two messages decides first (C speed, key order ignored as the keys ignore
        it); only where it cannot (not equal, or numbers and booleans, which `==` confuses:
        `True == 1`, `1 == 1.0`, `0.0 == -0.0`) are the keys computed. Both snapshots' formats
        must compute keys alike (every format does: `ChatShaped`)."""
        if compare == EXACT:  # both keys already known (mutants reuse their original's)
            known, theirs = self._identities[index], other._identities[other_index]
            if known is not None and theirs is not None:
                return known == theirs
        own, message = self.wire[index], other.wire[other_index]
        if own is message:
            return True
        try:
            if own == message and textual(own):
                return True
        except RecursionError:  # nested deeper than equality goes: the keys decide
            pass
        return self.key(index, compare) == other.key(other_index, compare)

    def known_keys(self, compare: str) -> list[bytes] | None:
        """Every message's key under `compare`, when all are already computed (a mutant's
        kept messages carry their original's identities), else None: then comparing by
        equality first (`same_key`) is cheaper than computing them."""
        if compare != EXACT:
            return None
        identities = self._identities
        if None in identities:
            return None
        return cast("list[bytes]", identities)  # no None in it

    def keys(self, start: int, stop: int, compare: str) -> KeySpan:
        """The keys of messages [start, stop) under `compare`, each computed on first use."""
        return KeySpan(self, range(start, stop), compare)

    def keys_of(self, indexes: Sequence[int], compare: str) -> KeySpan:
        """The keys of messages `indexes` (in that order) under `compare`, each computed on
        first use."""
        return KeySpan(self, indexes, compare)

    def last_index(self, role: str) -> int | None:
        """Index of the last message with `role`, or None."""
        views = self.views
        for index in range(len(views) - 1, -1, -1):
            if views[index].role == role:
                return index
        return None

    def origin(self, index: int) -> Origin:
        """Where neutral message `index` sits in the wire data."""
        return Origin(index) if self.origins is None else self.origins[index]

    def wire_index(self, index: int) -> int | None:
        """The wire message index of neutral message `index` (None for a `field` origin)."""
        if self.origins is None:
            return index
        origin = self.origins[index]
        return None if origin.field is not None else origin.message

    def site(
        self, snapshot: str, index: int, call: int | None = None, argument: str | None = None
    ) -> str:
        """`after[4]`, `after[4].tool_calls[1]`, `after[4].tool_calls[1].arguments.path`, ... in
        the user's own coordinates (the format spells them). `argument` is passed on only when
        given, so a format written before argument sites existed still labels the others."""
        if argument is None:
            return self.format.site(snapshot, self.origin(index), call)
        return self.format.site(snapshot, self.origin(index), call, argument)

    def span_site(self, snapshot: str, start: int, stop: int) -> str:
        """The messages [start, stop) (stop > start), e.g. `after[3:7]`."""
        return self.format.span(snapshot, self.origin(start), self.origin(stop - 1))


class KeySpan(Sequence[bytes]):
    """The keys of some messages of one snapshot (`Loaded.keys`, `Loaded.keys_of`), each
    computed on first use: checks that compare by equality first (`Loaded.same_key`) often
    never need them."""

    __slots__ = ("_all", "compare", "indexes", "snapshot")

    def __init__(self, snapshot: Loaded, indexes: Sequence[int], compare: str) -> None:
        self.snapshot, self.indexes, self.compare = snapshot, indexes, compare
        self._all: tuple[bytes, ...] | None = None

    def all(self) -> tuple[bytes, ...]:
        """Every key, computed (once) now."""
        found = self._all
        if found is None:
            found = self._all = tuple(self)
        return found

    def __len__(self) -> int:
        return len(self.indexes)

    @overload
    def __getitem__(self, position: int) -> bytes: ...

    @overload
    def __getitem__(self, position: slice) -> tuple[bytes, ...]: ...

    def __getitem__(self, position: int | slice) -> bytes | tuple[bytes, ...]:
        if isinstance(position, slice):
            return tuple(self[k] for k in range(*position.indices(len(self))))
        return self.snapshot.key(self.indexes[position], self.compare)

    def __iter__(self) -> Iterator[bytes]:
        key, compare = self.snapshot.key, self.compare
        return (key(index, compare) for index in self.indexes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"KeySpan({tuple(self)!r})"
