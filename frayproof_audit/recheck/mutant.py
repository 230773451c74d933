"""A mutant as a check's re-check reads it: what its edit changed (`Effects`) and the mutant
as a layout over the original output (`Mutant`, over an `Output`).

Mutation builds mutants (`mutate/`) and a check may re-judge one from the part its edit can
change (`recheck.base`); both read these types, and this module imports neither, so the
dependency runs one way: `mutate/` → `checks/` → here. The layout itself is
`mutate.shape.Shape`; the protocols say what of it a re-check may ask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from frayproof_audit.loaded import Loaded, MessageView

Fresh = list[tuple[int, dict[str, Any], MessageView]]
"""The new messages of a mutant: (position in the mutant, neutral message dict, view)."""


@dataclass(frozen=True, slots=True)
class Effects:
    """What an edit changes, by original position. Every position not named is kept as it was,
    in its original relative order. An edit that declares nothing (`Effects()`) is re-checked
    in full by every check: the safe default for an edit the evaluator does not understand.

    - `deleted`: messages removed.
    - `text_edited`: messages replaced in place by a copy whose text parts alone differ.
    - `call_dropped`: messages replaced in place by a copy with one call fewer (still present).
    - `call_repeated`: messages replaced in place by a copy that repeats one of its calls.
    - `moved_to_end`: messages moved behind the last one (a permutation).
    - `swapped`: two messages exchanged (a permutation).
    - `arguments_changed`: messages replaced in place by a copy in which one call's arguments
      text alone differs (its id, name and type, the other calls and every other field kept),
      so the copy's `MessageView` equals the original's.
    - `block_edited`: messages replaced in place by a copy in which one content block (a
      reasoning item or a thinking block) is dropped or replaced; the content stays a list, and
      its role, calls, ids and every other field are kept.
    """

    deleted: tuple[int, ...] = ()
    text_edited: tuple[int, ...] = ()
    call_dropped: tuple[int, ...] = ()
    call_repeated: tuple[int, ...] = ()
    moved_to_end: tuple[int, ...] = ()
    swapped: tuple[int, int] | None = None
    arguments_changed: tuple[int, ...] = ()
    block_edited: tuple[int, ...] = ()
    # Derived once here: every check's re-check asks them of every mutant.
    declared: bool = field(init=False, repr=False, compare=False)
    rewritten: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Positions replaced in place by a changed copy."""
    permutes: bool = field(init=False, repr=False, compare=False)
    """Only reorders messages."""
    only_arguments: bool = field(init=False, repr=False, compare=False)
    """Changes call arguments in place and nothing else, so every message keeps its
    position and its view (a view holds a call's id, name and type, never its arguments)."""

    def __post_init__(self) -> None:
        rewritten = (self.text_edited + self.call_dropped + self.call_repeated
                     + self.arguments_changed + self.block_edited)
        moves = bool(self.moved_to_end or self.swapped)
        define = object.__setattr__
        define(self, "rewritten", rewritten)
        define(self, "declared", bool(self.deleted or rewritten or moves))
        define(self, "permutes", moves and not (self.deleted or rewritten))
        define(self, "only_arguments", bool(self.arguments_changed) and not (
            self.deleted or self.text_edited or self.call_dropped or self.call_repeated
            or moves or self.block_edited))


class Kept(NamedTuple):
    """Original messages [start, stop), at `offset` in the mutant."""

    offset: int
    start: int
    stop: int


class New(NamedTuple):
    """New messages with their views, at `offset` in the mutant."""

    offset: int
    messages: list[dict[str, Any]]
    views: list[MessageView]


class Output(Protocol):
    """The original output as every mutant of one pair shares it (`mutate.shape.Original`)."""

    @property
    def wire(self) -> list[dict[str, Any]]: ...

    @property
    def views(self) -> list[MessageView]: ...

    @property
    def format(self) -> Any:
        """The output's input format (`formats.base.Format`)."""
        ...

    @property
    def identities(self) -> list[bytes | None]:
        """Per message its identity, where computed (every mutant reuses them)."""
        ...

    @property
    def prev_nontool(self) -> list[int]:
        """Per position k: the largest j <= k whose role is not `tool`, or -1."""
        ...


class Mutant(Protocol):
    """One mutant as a layout of kept original runs and new messages (`mutate.shape.Shape`):
    each question is answered in time proportional to the pieces, not the output's length,
    except `loaded`, the whole mutant assembled (a full rerun's cost)."""

    @property
    def original(self) -> Output: ...

    @property
    def pieces(self) -> Sequence[Kept | New]: ...

    @property
    def fresh(self) -> Fresh: ...

    @property
    def length(self) -> int: ...

    @property
    def loaded(self) -> Loaded: ...

    def position(self, index: int) -> int | None:
        """Where original message `index` sits in the mutant (None: deleted or replaced)."""
        ...

    def fresh_identity(self, number: int) -> bytes:
        """The identity of new message `number` (the `fresh` entry of that number), computed
        on first use and shared with `loaded`."""
        ...

    def views_between(self, start: int, stop: int) -> list[tuple[int, MessageView]]:
        """(mutant position, view) for positions [start, stop) of the mutant."""
        ...

    def messages_between(self, start: int, stop: int) -> list[tuple[int, dict[str, Any], MessageView]]:
        """(mutant position, neutral message, view) for positions [start, stop)."""
        ...

    def view_at(self, position: int) -> MessageView: ...

    def message_at(self, position: int) -> dict[str, Any]: ...

    def last_with_role(self, role: str, stop: int | None = None) -> int:
        """The last mutant position before `stop` (default: the end) with role `role`, or -1."""
        ...

    def tail(self) -> int:
        """The last mutant position whose role is not `tool`, or -1."""
        ...
