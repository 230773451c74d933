"""`provider_validity` under the `openai-chat` profile, on a mutant from the batches its edit can
change, not the whole mutant.

Rerunning the check over every mutant made mutation quadratic in the record's length (1,000
messages 1.35 s, 2,000 5.05 s). The lemma, for an original output with no finding of this check
(clean; otherwise the caller reruns it):

Call a *batch* a non-tool message with the run of tool messages right after it (and a run of
tool messages at the very start, with nothing before it, a batch without a head). The profile's
three rules judge each batch on its own: a tool message is an orphan, or answers an unknown id,
by its batch's head alone; a call is unanswered by its own batch's tool messages alone, unless
its message is the last non-tool message (the tail) and `allow_trailing_pending_call` excuses
it. Nothing else is read: the profile compares nothing with before.

A mutant is a layout of pieces: runs of original messages kept in order, and new messages. A
batch of the mutant that holds no new message and neither the first nor the last position of a
piece lies strictly inside one kept run and starts at a non-tool message of it (position 0 is
always a piece's first); its tool run ends inside that run as well, so it is a batch of the
original, message for message. Its findings are the original's, none, unless its head's tail
status changed; but the mutant's tail batch ends at the mutant's last position (a piece's
last), and the original's tail batch ends at the original's last message, so wherever it is
kept it holds the last position of the piece keeping it. So the mutant's findings are those of
the batches holding a new message or a piece's first or last position, each judged alone (the
pending allowance only for the mutant's tail batch), in mutant order. Other profiles read more
context (Responses' reasoning items, Anthropic's last assistant message, Gemini's previous
turn) and are rerun in full.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from frayproof_audit.checks import provider_validity
from frayproof_audit.checks.base import CheckSettings
from frayproof_audit.contract import Contract
from frayproof_audit.mutate.local import placed, window
from frayproof_audit.mutate.shape import Kept, Shape
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.providers import profile_for
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import MessageView

CHAT = "openai-chat"


def judged_by_chat(settings: CheckSettings, format_name: str) -> bool:
    """Whether these settings judge a snapshot of `format_name` by the openai-chat profile."""
    named = settings.option(provider_validity.PROFILE)
    return (named if named is not None else profile_for(format_name)) == CHAT


def chat_findings(mutant: Shape, contract: Contract, facts: BeforeFacts,
                  settings: CheckSettings) -> list[Violation]:
    """The mutant's `provider_validity` findings under openai-chat (original clean)."""
    length = mutant.length
    if not length:
        return []
    wanted: set[int] = set()
    for piece in mutant.pieces:
        if isinstance(piece, Kept):  # a kept run: its two ends
            wanted.update((piece.offset, piece.offset + piece.stop - piece.start - 1))
        else:  # new messages: all of them
            wanted.update(range(piece.offset, piece.offset + len(piece.messages)))
    tail = mutant.tail()
    allow = bool(settings.option(provider_validity.ALLOW_PENDING))
    closed = replace(settings, options={**settings.options, provider_validity.ALLOW_PENDING: False})
    found: list[Violation] = []
    for head in sorted({_head(mutant, position) for position in wanted}):
        batch = _batch(mutant, head)
        positions = [position for position, _ in batch]
        small = window(mutant.original.format, positions, [{} for _ in batch], [view for _, view in batch])
        chosen = settings if allow and head == tail else closed
        found += placed(provider_validity.find(small, contract, facts, chosen), positions)
    return found


def _head(mutant: Shape, position: int) -> int:
    """The first position of the batch holding `position`: its head, or 0 for a headless run."""
    while position > 0 and mutant.view_at(position).role == "tool":
        position -= 1
    return position


def _batch(mutant: Shape, head: int) -> Sequence[tuple[int, MessageView]]:
    """(position, view) of the batch starting at `head`: it and the tool messages after it."""
    batch = [(head, mutant.view_at(head))]
    position = head + 1
    while position < mutant.length:
        view = mutant.view_at(position)
        if view.role != "tool":
            break
        batch.append((position, view))
        position += 1
    return batch
