"""`tool_call_integrity` on a mutant from the messages its edit can affect, not the whole mutant.

Rerunning the check over every mutant made mutation quadratic in the record's length for
contracts that turn it on (a 4,000-message output took 67 s with it and `provider_validity`
against 1 s without). The lemma, for an original output with no finding of this check (clean;
otherwise the caller reruns it):

A message's findings depend on the message itself, on the set K of kept call ids (ids that an
after assistant calls and before calls) and on the set R of after's (result id, content key)
pairs; never on positions. Let the edit remove messages (deleted, or rewritten: replaced in place
by new ones) and add new messages; moves and swaps change neither K nor R.

- An untouched assistant message's calls are judged as in the original (their own ids are in K
  exactly when before calls them): no findings.
- An untouched tool message with content key k was not flagged in the original; a result is
  flagged for kept call X when X is in K, X is not its own id, before has X's result with key k
  and (X, k) is not in R. If the new messages call no id outside the original K, K only shrinks,
  which flags nothing new; R loses pairs only where removed messages carried them. So an
  untouched result can be flagged only if its key is that of a pair R lost.
- The new messages are judged against the mutant's K and R.

So the mutant's findings are those of its new messages and of the untouched results whose key
is a lost pair's, each judged by the check's own `judge_message` against the mutant's K and R
(counted, not built), in mutant order. An edit whose new messages call an id outside the
original K is not covered (K would grow): the caller reruns the check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Generic, TypeVar

from frayproof_audit.checks.base import CheckSettings
from frayproof_audit.checks.tool_call_integrity import judge_message
from frayproof_audit.mutate.edits import Effects
from frayproof_audit.mutate.local import placed, window
from frayproof_audit.mutate.shape import Shape
from frayproof_audit.prepared import CallFacts, ContentKey, content_key
from frayproof_audit.report import Violation
from frayproof_audit.snapshot import Loaded, MessageView

T = TypeVar("T")
Pair = tuple[str, ContentKey]


class _Counted(Generic[T]):
    """Membership in a multiset after an edit: the original's counts, minus the removed
    messages', plus the new messages'."""

    __slots__ = ("added", "counts", "removed")

    def __init__(self, counts: Counter[T], removed: Counter[T], added: Counter[T]) -> None:
        self.counts, self.removed, self.added = counts, removed, added

    def __contains__(self, item: object) -> bool:
        return self.counts[item] - self.removed[item] + self.added[item] > 0  # type: ignore[index]


class KeptCalls:
    """Per pair: the original output's kept call ids and result pairs, counted, and its tool
    messages by content key."""

    __slots__ = ("by_key", "calls", "pairs", "uses", "views")

    def __init__(self, views: Sequence[MessageView], calls: CallFacts) -> None:
        self.views = views
        self.calls = calls
        self.uses: Counter[str] = Counter(
            call.id for view in views if view.role == "assistant" for call in view.calls
            if call.id in calls.calls
        )
        self.pairs: Counter[Pair] = Counter()
        self.by_key: dict[ContentKey, list[int]] = {}
        for index, view in enumerate(views):
            if view.role == "tool":
                key = content_key(view.content)
                self.by_key.setdefault(key, []).append(index)
                if view.tool_call_id:
                    self.pairs[(view.tool_call_id, key)] += 1

    def findings(self, effects: Effects, mutant: Shape, settings: CheckSettings) -> list[Violation] | None:
        """The mutant's findings (original clean), or None when the lemma does not cover the edit."""
        views, calls = self.views, self.calls
        lost_calls: Counter[str] = Counter()
        lost_pairs: Counter[Pair] = Counter()
        for index in effects.deleted + effects.rewritten:
            view = views[index]
            if view.role == "assistant":
                lost_calls.update(call.id for call in view.calls if call.id in calls.calls)
            elif view.role == "tool" and view.tool_call_id:
                lost_pairs[(view.tool_call_id, content_key(view.content))] += 1
        new_calls: Counter[str] = Counter()
        new_pairs: Counter[Pair] = Counter()
        for _, _, view in mutant.fresh:
            if view.role == "assistant":
                for call in view.calls:
                    if call.id in calls.calls:
                        if not self.uses[call.id]:
                            return None  # a newly kept call: K grows
                        new_calls[call.id] += 1
            elif view.role == "tool" and view.tool_call_id:
                new_pairs[(view.tool_call_id, content_key(view.content))] += 1
        kept = _Counted(self.uses, lost_calls, new_calls)
        results = _Counted(self.pairs, lost_pairs, new_pairs)
        severity = settings.severity
        found: list[tuple[int, Violation]] = []
        fresh = mutant.fresh
        if fresh:
            positions = [position for position, _, _ in fresh]
            small = window(mutant.original.format, positions, [message for _, message, _ in fresh],
                           [view for _, _, view in fresh])
            for number, (position, _, view) in enumerate(fresh):
                found += [(position, violation) for violation in placed(
                    judge_message(small, number, view, kept, calls, results, severity), positions)]
        gone = {key for (result_id, key) in lost_pairs if (result_id, key) not in results}
        stub = Loaded([], [], mutant.original.format)  # a tool message's judgment reads its view alone
        for key in gone:
            for index in self.by_key.get(key, ()):
                kept_at = mutant.position(index)
                if kept_at is None:
                    continue  # deleted, or replaced by a new message (judged above)
                found += [(kept_at, violation) for violation in placed(
                    judge_message(stub, index, views[index], kept, calls, results, severity),
                    {index: kept_at})]
        found.sort(key=lambda item: item[0])
        return [violation for _, violation in found]
