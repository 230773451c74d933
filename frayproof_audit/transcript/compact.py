"""`compact` and `find_safe_boundary`: shrink a transcript to a token budget by dropping its
oldest turns, never producing something a provider would reject.

A cut keeps the pinned leading instructions and an exact suffix of the conversation: the very
wire messages from the cut on, none rewritten, merged or reordered. It is *safe*
when it splits no wire message (so a reasoning or thinking block stays with the item it
belongs to, and an Anthropic results message stays whole), separates no call from its
result, and the suffix starts with a user turn (so it reads, and is accepted, as a
conversation). `compact` keeps the longest safe suffix that fits; when none does, it raises
`CompactionRefused` saying why, instead of returning something invalid. A transcript that is
already invalid is refused too: repair it first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from frayproof_audit.formats import Format, messages_key
from frayproof_audit.loaded import MessageView, wire_span
from frayproof_audit.model import INSTRUCTION_ROLES
from frayproof_audit.transcript.defects import pair
from frayproof_audit.transcript.inspection import inspect, inspect_transcript, wire_length
from frayproof_audit.transcript.loading import DEFAULT_FORMAT, Transcript, read_transcript
from frayproof_audit.transcript.repair import writer_for
from frayproof_audit.transcript.tokens import TokenCounter, approximate_tokens

DEFAULT_KEEP = 2


class CompactionRefused(Exception):
    """No safe, valid compaction fits the budget; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The compacted transcript (in the input's wire format) and what it cost."""

    transcript: Any
    """In the shape the input came in: a list, a request object, or a JSON string."""
    kept_from: int
    """Wire index of the first message of the kept suffix (0: nothing dropped)."""
    dropped: int
    """Wire messages dropped."""
    tokens_before: int
    tokens_after: int
    reason: str
    format: str
    """The format that read it (the detected one under `auto`)."""

    @property
    def changed(self) -> bool:
        return self.dropped > 0

    @property
    def exit_code(self) -> int:
        return 0

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "kept_from": self.kept_from, "dropped": self.dropped,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "reason": self.reason}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        return f"{self.reason} ({self.tokens_before} → {self.tokens_after} tokens)"


@dataclass(frozen=True, slots=True)
class Cuts:
    """Where a transcript can be cut: neutral index c keeps neutral messages [c, n) after the
    pinned leading instructions [0, prefix)."""

    n: int
    prefix: int
    """The leading instruction messages (system, developer), always kept."""
    wire: tuple[int | None, ...]
    """Each neutral message's wire index (None: read from outside the message list)."""
    safe: tuple[bool, ...]
    """safe[c] for c in [0, n]: the cut splits no wire message, separates no call from its
    result, and keeps a suffix that starts with a user turn (or nothing)."""
    kept: tuple[int, ...]
    """kept[c] for c in [0, n]: the wire messages the neutral messages [c, n) are read from."""


def _prefix(views: Sequence[MessageView]) -> int:
    prefix = 0
    while prefix < len(views) and views[prefix].role in INSTRUCTION_ROLES:
        prefix += 1
    return prefix


def _spans(views: Sequence[MessageView]) -> list[tuple[int, int]]:
    """(call message, result message) of every answered call."""
    pairing = pair(views, range(len(views)))
    return [(pairing.calls[call_id][0], result) for call_id, result in pairing.keepers.items()]


def reference_cuts(transcript: Transcript) -> Cuts:
    """`Cuts` by the plain reading of each rule, cut by cut (quadratic: every call span and
    every kept message looked at again for every cut). `cuts` must equal it; the tests hold
    them together."""
    loaded = transcript.loaded
    views = loaded.views
    n = len(views)
    wire = tuple(loaded.wire_index(i) for i in range(n))
    spans = _spans(views)

    def safe(cut: int) -> bool:
        if cut == n:
            return True
        previous = wire[cut - 1] if cut else None
        if cut and (wire[cut] is None or wire[cut] == previous):
            return False  # inside a wire message (or the request's own instructions)
        if any(call < cut <= result for call, result in spans):
            return False
        return views[cut].role == "user"

    return Cuts(n, _prefix(views), wire, tuple(safe(c) for c in range(n + 1)),
                tuple(len({w for w in wire[c:] if w is not None}) for c in range(n + 1)))


def cuts(transcript: Transcript) -> Cuts:
    """`reference_cuts` in time linear in the transcript: one pass marks the cuts inside a
    call's span (a difference array over the spans), one pass from the end counts the wire
    messages of each suffix."""
    loaded = transcript.loaded
    views = loaded.views
    n = len(views)
    wire = tuple(loaded.wire_index(i) for i in range(n))
    inside = [0] * (n + 2)
    for call, result in _spans(views):
        if call < result:  # the cuts call < cut <= result
            inside[call + 1] += 1
            inside[result + 1] -= 1
    safe = [True] * (n + 1)
    depth = 0
    for cut in range(n):
        depth += inside[cut]
        if cut and (wire[cut] is None or wire[cut] == wire[cut - 1]):
            safe[cut] = False
        else:
            safe[cut] = depth == 0 and views[cut].role == "user"
    kept = [0] * (n + 1)
    seen: set[int] = set()
    for index in range(n - 1, -1, -1):
        number = wire[index]
        if number is not None and number not in seen:
            seen.add(number)
        kept[index] = len(seen)
    return Cuts(n, _prefix(views), wire, tuple(safe), tuple(kept))


class _Suffix:
    """The compacted wire value of a cut: the frame (request keys, top-level instructions),
    the wire messages of the leading instructions, and the exact wire suffix from the cut on,
    every message the very object it was (never reassembled, so never merged or reordered)."""

    def __init__(self, transcript: Transcript, table: Cuts) -> None:
        self.transcript = transcript
        self.table = table
        wire = transcript.wire
        self.key = messages_key(transcript.format)
        found = wire.get(self.key) if isinstance(wire, dict) else wire
        self.messages: list[Any] = found if isinstance(found, list) else []
        loaded = transcript.loaded
        ends = [wire_span(loaded.origin(i))[1] for i in range(table.prefix)
                if loaded.origin(i).field is None]
        self.pinned = max(ends, default=0)
        """Wire messages [0, pinned) hold the leading instructions."""

    def start(self, cut: int) -> int:
        """The wire index the kept suffix starts at (the message count: nothing kept)."""
        if cut == self.table.n:
            return len(self.messages)
        return wire_span(self.transcript.loaded.origin(cut))[0]

    def output(self, cut: int) -> Any:
        kept = self.messages[:self.pinned] + self.messages[self.start(cut):]
        wire = self.transcript.wire
        if isinstance(wire, dict):
            return {**wire, self.key: kept} if isinstance(wire.get(self.key), list) else dict(wire)
        return kept


def compact(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT, *, max_tokens: int,
            keep: int = DEFAULT_KEEP, counter: TokenCounter = approximate_tokens,
            profile: str | None = None) -> CompactionResult:
    """The longest safe suffix of `snapshot`, after its leading instructions, whose whole
    transcript counts at most `max_tokens`, keeping at least `keep` wire messages of the
    conversation. Raises `CompactionRefused` when there is none."""
    return compact_transcript(read_transcript(snapshot, fmt), max_tokens=max_tokens, keep=keep,
                              counter=counter, profile=profile)


def compact_transcript(transcript: Transcript, *, max_tokens: int, keep: int = DEFAULT_KEEP,
                       counter: TokenCounter = approximate_tokens, profile: str | None = None,
                       where: Callable[[Transcript], Cuts] = cuts) -> CompactionResult:
    """`compact` of an already read transcript; `where` finds the cuts (the tests pass
    `reference_cuts` to prove `cuts` gives the same compaction)."""
    writer_for(transcript)  # a format that cannot be written back is refused before any work
    before = inspect_transcript(transcript, profile)
    if before.fatal:
        names = ", ".join(sorted({d.name for d in before.fatal}))
        raise CompactionRefused(f"the transcript is already invalid ({names}): repair it first")
    tokens_before = counter(transcript.wire)
    if tokens_before <= max_tokens:
        return CompactionResult(transcript.shaped(transcript.wire), 0, 0, tokens_before,
                                tokens_before, "already within budget", transcript.format.name)
    table = where(transcript)
    floor = min(keep, table.kept[table.prefix])
    candidates = [c for c in range(table.prefix + 1, table.n + 1)
                  if table.safe[c] and table.kept[c] >= floor]
    if not candidates:
        raise CompactionRefused(
            f"no cut keeps {floor} message(s) without splitting a message, a call from its "
            f"result, or starting the kept turns with something other than a user turn; "
            f"{tokens_before} tokens is over the budget of {max_tokens}")
    suffix = _Suffix(transcript, table)
    low, high = 0, len(candidates) - 1
    if counter(suffix.output(candidates[high])) > max_tokens:
        last = candidates[high]
        shown = "nothing" if last == table.n else transcript.loaded.site("transcript", last)
        raise CompactionRefused(
            f"the shortest safe cut (keeping {shown} on, {table.kept[last]} message(s), "
            f"after the leading instructions) still counts {counter(suffix.output(last))} "
            f"tokens, over the budget of {max_tokens}")
    while low < high:  # the first candidate that fits: fewer kept turns never count more
        middle = (low + high) // 2
        if counter(suffix.output(candidates[middle])) <= max_tokens:
            high = middle
        else:
            low = middle + 1
    cut = candidates[low]
    compacted = suffix.output(cut)
    if inspect(compacted, transcript.format, profile).fatal:  # never hand back an invalid transcript
        raise CompactionRefused("every cut that fits would leave an invalid transcript")
    start = suffix.start(cut)
    dropped = start - suffix.pinned
    return CompactionResult(transcript.shaped(compacted), start, dropped, tokens_before,
                            counter(compacted),
                            f"dropped {dropped} message(s), keeping the leading instructions "
                            f"and every message from {start} on; no call is split from its "
                            "result", transcript.format.name)


def find_safe_boundary(snapshot: Any, desired: int,
                       fmt: Format | str | None = DEFAULT_FORMAT) -> int:
    """The largest wire index b ≤ `desired` such that the messages from b on are a safe
    suffix (0 keeps everything). Raises `CompactionRefused` for an invalid transcript."""
    transcript = read_transcript(snapshot, fmt)
    if inspect_transcript(transcript).fatal:
        raise CompactionRefused("the transcript is already invalid: repair it first")
    table = cuts(transcript)
    total = wire_length(transcript.wire, transcript.format.name)
    desired = max(0, min(desired, total))
    best = 0
    for cut in range(table.n + 1):
        start = total if cut == table.n else table.wire[cut]
        if start is None:
            continue  # a request's own instructions: not a place in the message list
        if start > desired:
            break
        if start == 0 or table.safe[cut]:
            best = start
    return best
