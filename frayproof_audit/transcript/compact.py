"""`compact` and `find_safe_boundary`: shrink a transcript to a token budget by dropping its
oldest turns, never producing something a provider would reject.

A cut keeps the pinned leading instructions and a suffix of the conversation. It is *safe*
when it splits no wire message (so a reasoning or thinking block stays with the item it
belongs to, and an Anthropic results message stays whole), separates no call from its
result, and the suffix starts with a user turn (so it reads, and is accepted, as a
conversation). `compact` keeps the longest safe suffix that fits; when none does, it raises
`CompactionRefused` saying why, instead of returning something invalid. A transcript that is
already invalid is refused too: repair it first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from frayproof_audit.formats import Format
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


class _Cuts:
    """Where a transcript can be cut: neutral index c keeps neutral messages [c, n)."""

    def __init__(self, transcript: Transcript) -> None:
        loaded = transcript.loaded
        self.loaded = loaded
        views = loaded.views
        self.n = len(views)
        self.prefix = 0
        while self.prefix < self.n and views[self.prefix].role in INSTRUCTION_ROLES:
            self.prefix += 1
        self.wire: list[int | None] = [loaded.wire_index(i) for i in range(self.n)]
        pairing = pair(views, range(self.n))
        self.spans = [(pairing.calls[call_id][0], result)
                      for call_id, result in pairing.keepers.items()]

    def wire_start(self, cut: int) -> int | None:
        return self.wire[cut] if cut < self.n else None

    def safe(self, cut: int) -> bool:
        if cut == self.n:
            return True
        view = self.loaded.views[cut]
        previous = self.wire[cut - 1] if cut else None
        if cut and (self.wire[cut] is None or self.wire[cut] == previous):
            return False  # inside a wire message (or the request's own instructions)
        if any(call < cut <= result for call, result in self.spans):
            return False
        return view.role == "user"

    def kept_messages(self, cut: int) -> int:
        return len({w for w in self.wire[cut:] if w is not None})


def compact(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT, *, max_tokens: int,
            keep: int = DEFAULT_KEEP, counter: TokenCounter = approximate_tokens,
            profile: str | None = None) -> CompactionResult:
    """The longest safe suffix of `snapshot`, after its leading instructions, whose whole
    transcript counts at most `max_tokens`, keeping at least `keep` wire messages of the
    conversation. Raises `CompactionRefused` when there is none."""
    transcript = read_transcript(snapshot, fmt)
    writer = writer_for(transcript)
    before = inspect_transcript(transcript, profile)
    if before.fatal:
        names = ", ".join(sorted({d.name for d in before.fatal}))
        raise CompactionRefused(f"the transcript is already invalid ({names}): repair it first")
    tokens_before = counter(transcript.wire)
    if tokens_before <= max_tokens:
        return CompactionResult(transcript.shaped(transcript.wire), 0, 0, tokens_before,
                                tokens_before, "already within budget", transcript.format.name)
    cuts = _Cuts(transcript)
    total = wire_length(transcript.wire, transcript.format.name)
    floor = min(keep, cuts.kept_messages(cuts.prefix))
    candidates = [c for c in range(cuts.prefix + 1, cuts.n + 1)
                  if cuts.safe(c) and cuts.kept_messages(c) >= floor]
    if not candidates:
        raise CompactionRefused(
            f"no cut keeps {floor} message(s) without splitting a message, a call from its "
            f"result, or starting the kept turns with something other than a user turn; "
            f"{tokens_before} tokens is over the budget of {max_tokens}")
    pieces = writer.pieces(transcript)

    def output(cut: int) -> Any:
        kept = [*range(cuts.prefix), *range(cut, cuts.n)]
        return writer.assemble(transcript, [p for i in kept if (p := pieces[i]) is not None])

    low, high = 0, len(candidates) - 1
    if counter(output(candidates[high])) > max_tokens:
        last = candidates[high]
        where = "nothing" if last == cuts.n else transcript.loaded.site("transcript", last)
        raise CompactionRefused(
            f"the shortest safe cut (keeping {where} on, {cuts.kept_messages(last)} message(s), "
            f"after the leading instructions) still counts {counter(output(last))} tokens, over "
            f"the budget of {max_tokens}")
    while low < high:  # the first candidate that fits: fewer kept turns never count more
        middle = (low + high) // 2
        if counter(output(candidates[middle])) <= max_tokens:
            high = middle
        else:
            low = middle + 1
    cut = candidates[low]
    compacted = output(cut)
    if inspect(compacted, transcript.format, profile).fatal:  # never hand back an invalid transcript
        raise CompactionRefused("every cut that fits would leave an invalid transcript")
    kept_from = cuts.wire_start(cut)
    kept_total = wire_length(compacted, transcript.format.name)
    start = total if kept_from is None else kept_from
    return CompactionResult(transcript.shaped(compacted), start, total - kept_total, tokens_before,
                            counter(compacted),
                            f"dropped {total - kept_total} message(s), keeping the leading "
                            f"instructions and every message from {start} on; no call is split "
                            "from its result", transcript.format.name)


def find_safe_boundary(snapshot: Any, desired: int,
                       fmt: Format | str | None = DEFAULT_FORMAT) -> int:
    """The largest wire index b ≤ `desired` such that the messages from b on are a safe
    suffix (0 keeps everything). Raises `CompactionRefused` for an invalid transcript."""
    transcript = read_transcript(snapshot, fmt)
    if inspect_transcript(transcript).fatal:
        raise CompactionRefused("the transcript is already invalid: repair it first")
    cuts = _Cuts(transcript)
    total = wire_length(transcript.wire, transcript.format.name)
    desired = max(0, min(desired, total))
    best = 0
    for cut in range(cuts.n + 1):
        start = total if cut == cuts.n else cuts.wire[cut]
        if start is None:
            continue  # a request's own instructions: not a place in the message list
        if start > desired:
            break
        if start == 0 or cuts.safe(cut):
            best = start
    return best
