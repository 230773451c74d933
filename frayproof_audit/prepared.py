"""Facts taken from the before snapshot once, then compared against any number of afters.

Mutation testing checks dozens of mutants against one before; what a check takes from it is
computed once per (before, contract) pair and shared by every mutant. This module holds the
container (`BeforeFacts`) and the helpers more than one check or operator uses (kept tool
results by id, content keys, closed exchanges); it knows no check, and each check prepares its
own facts (`Check.prepare`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frayproof_audit.equivalence import EXACT
from frayproof_audit.equivalence import content_key as equivalence_content_key
from frayproof_audit.jsonio import canonical
from frayproof_audit.loaded import Loaded


def content_retained(content: Any, originals: list[Any], compare: str = EXACT) -> bool:
    """Whether `content` equals one of the before contents (`tool_results: complete`).

    Strings compare directly (no hashing or serializing of large results); anything else
    compares as canonical JSON, so key order never matters and `1` never equals `1.0`.
    Under `equivalent` the contents' neutral forms compare (a string equals the same text as
    a list of text parts).
    """
    if compare != EXACT:
        key = equivalence_content_key(content)
        return any(equivalence_content_key(original) == key for original in originals)
    if type(content) is str:
        return any(type(original) is str and original == content for original in originals)
    key = canonical(content)
    return any(type(original) is not str and canonical(original) == key for original in originals)


ContentKey = str | bytes
"""A result content as `content_retained` compares it: the string itself, else canonical JSON."""


def content_key(content: Any) -> ContentKey:
    return content if type(content) is str else canonical(content)


SCAN_AT_MOST = 8
"""Up to this many before results share an id, a result is compared with each of them (no
hashing or serializing of large results); above, their keys are put in a set once, so a log
that reuses one id for every call costs linear time, not quadratic."""


class ResultIndex:
    """Whether a content is among the before results of its id, answered by comparing with
    each of them when they are few (`content_retained`, the plain reading), else by a set of
    their keys under the comparison, built on first use and kept (mutation asks again for
    every mutant). Filled one id at a time, whole: a thread sharing it sees a set or none."""

    __slots__ = ("_keys", "results")

    def __init__(self, results: dict[str, list[Any]]) -> None:
        self.results = results
        self._keys: dict[tuple[str, str], frozenset[ContentKey]] = {}

    def retained(self, call_id: str, content: Any, compare: str = EXACT) -> bool | None:
        """`content_retained(content, results[call_id], compare)`; None when before has no
        result with that id."""
        originals = self.results.get(call_id)
        if originals is None:
            return None
        if len(originals) <= SCAN_AT_MOST:
            return content_retained(content, originals, compare)
        return _compared_key(content, compare) in self._keys_of(call_id, compare)

    def has_key(self, call_id: str, key: ContentKey) -> bool:
        """Whether before has a result for `call_id` whose content key (`content_key`) is `key`."""
        originals = self.results.get(call_id, ())
        if len(originals) <= SCAN_AT_MOST:
            return key_among(key, originals)
        return key in self._keys_of(call_id, EXACT)

    def _keys_of(self, call_id: str, compare: str) -> frozenset[ContentKey]:
        found = self._keys.get((call_id, compare))
        if found is None:
            found = frozenset(_compared_key(original, compare) for original in self.results[call_id])
            self._keys[(call_id, compare)] = found
        return found


def key_among(key: ContentKey, originals: Sequence[Any]) -> bool:
    """Whether one of `originals` has content key `key` (`content_key`), compared one by one:
    the plain reading of `ResultIndex.has_key`."""
    for content in originals:
        if type(content) is str:
            if content == key:
                return True
        elif type(key) is bytes and canonical(content) == key:
            return True
    return False


def _compared_key(content: Any, compare: str) -> ContentKey:
    """What `content_retained` compares under `compare`: under `exact` a string is itself and
    anything else its canonical JSON (bytes, never equal to a string); under `equivalent`, the
    neutral form."""
    return content_key(content) if compare == EXACT else equivalence_content_key(content)


@dataclass(frozen=True, slots=True)
class BeforeFacts:
    """What the checks compare an after snapshot with, taken from the before snapshot once per
    pair (`engine.prepare_before`) and shared by every mutant of it: the snapshot itself, and
    under each check's contract key what its `Check.prepare` returned (`of`).

    It knows no check: each check reads its own entry (and says what it holds)."""

    snapshot: Loaded
    """The before snapshot, so a check compares an after message with a before one by Python
    equality first and reads the keys only where equality cannot decide (`Loaded.same_key`)."""
    by_check: Mapping[str, object] = field(default_factory=dict)

    def of(self, key: str) -> object:
        """What the check registered under contract key `key` prepared (None: nothing)."""
        return self.by_check.get(key)

    def with_facts(self, key: str, facts: object) -> BeforeFacts:
        """These facts with the entry of check `key` replaced (to run a check on a part of its
        facts, as mutation's re-checks do)."""
        return BeforeFacts(self.snapshot, {**self.by_check, key: facts})


def closed_exchanges(roles: list[str]) -> list[tuple[int, int]]:
    """Spans [u, u') between consecutive user messages holding an assistant or tool message."""
    users = [index for index, role in enumerate(roles) if role == "user"]
    spans = []
    for start, end in itertools.pairwise(users):
        if any(roles[k] in ("assistant", "tool") for k in range(start + 1, end)):
            spans.append((start, end))
    return spans


def last_closed_exchanges(roles: list[str], count: int) -> list[tuple[int, int]]:
    """`closed_exchanges(roles)[-count:]` (count ≥ 1), found from the end: only the messages
    after the first of the last `count` spans are read."""
    spans: list[tuple[int, int]] = []
    end = None
    for index in range(len(roles) - 1, -1, -1):
        if roles[index] != "user":
            continue
        if end is not None and any(roles[k] in ("assistant", "tool") for k in range(index + 1, end)):
            spans.append((index, end))
            if len(spans) == count:
                break
        end = index
    spans.reverse()
    return spans
