"""Facts taken from the before snapshot once, then compared against any number of afters.

Mutation testing checks dozens of mutants against one before; everything here is computed
once per (before, contract) pair and shared by every mutant.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frayproof_audit.equivalence import EXACT, text_runs
from frayproof_audit.equivalence import content_key as equivalence_content_key
from frayproof_audit.jsonio import canonical
from frayproof_audit.model import call_arguments, text_parts
from frayproof_audit.providers.base import PriorFacts
from frayproof_audit.providers.prior import prior_facts

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.report import Violation
    from frayproof_audit.snapshot import Loaded


def pin_texts(content: Any, match: str) -> list[str]:
    """The texts a contains pin searches: each text part under `exact` (parts never joined,
    as in frayproof), each run of text parts joined under `equivalent`."""
    return text_parts(content) if match == EXACT else text_runs(content)


@dataclass(frozen=True, slots=True)
class PinFacts:
    """For a role pin: the index of each before message of that role, and their keys (each
    message's identity, or its neutral form under `match: equivalent`), computed on first use:
    a check that compares by equality first never needs them.
    For a contains pin: the first before index whose text contains it (None: inactive)."""

    role_indexes: tuple[int, ...] = ()
    role_keys: Sequence[bytes] = ()
    text_index: int | None = None


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
class CallFacts:
    """Before's tool calls and results, for `tool_call_integrity` (prepared only when enabled).

    `calls`: call id → (tool name, message index, call position) of the first assistant call
    with that id (`call` gives its name and arguments text).
    `results`: call id → the contents of the before results with that id, in order.
    `order`: (call id, content) of every before result with an id, in message order.

    Preparing this touches every call and result of before, so it reads no arguments and
    serializes or hashes no content: a kept call's arguments are read when it is compared, a
    kept result is found by comparing it with the few results of its own id, and only a result
    that is not among them (rare: a compactor bug) needs the index by content (`result_ids`),
    which is then built once and kept.
    """

    calls: dict[str, tuple[str, int, int]]
    results: dict[str, list[Any]]
    order: list[tuple[str, Any]]
    wire: list[Any]
    by_content: dict[ContentKey, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    index: ResultIndex = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", ResultIndex(self.results))

    def call(self, call_id: str) -> tuple[str, str]:
        """(tool name, arguments text) of before's first call with id `call_id`."""
        name, index, position = self.calls[call_id]
        return name, call_arguments(self.wire[index], position)

    def has_result(self, call_id: str, key: ContentKey) -> bool:
        """Whether before has a result for `call_id` whose content key is `key`."""
        return self.index.has_key(call_id, key)

    def result_ids(self, key: ContentKey) -> tuple[str, ...]:
        """The ids of the before results with content key `key`, in message order (each once)."""
        if not self.by_content and self.order:
            index: dict[ContentKey, list[str]] = {}
            for call_id, content in self.order:
                ids = index.setdefault(content_key(content), [])
                if call_id not in ids:
                    ids.append(call_id)
            # Filled in one step, so a thread sharing these facts sees all of it or none.
            self.by_content.update({content: tuple(ids) for content, ids in index.items()})
        return self.by_content.get(key, ())


def call_facts(before: Loaded) -> CallFacts:
    calls: dict[str, tuple[str, int, int]] = {}
    results: dict[str, list[Any]] = {}
    order: list[tuple[str, Any]] = []
    for index, (role, content, views, tool_call_id, _refusal) in enumerate(before.views):
        if views and role == "assistant":
            for position, (call_id, name, _type) in enumerate(views):
                if call_id and call_id not in calls:
                    calls[call_id] = (name, index, position)
        elif tool_call_id and role == "tool":
            if tool_call_id in results:
                results[tool_call_id].append(content)
            else:
                results[tool_call_id] = [content]
            order.append((tool_call_id, content))
    return CallFacts(calls, results, order, before.wire)


CALL_FACTS_KEY = "tool_call_integrity"
"""The contract key of the one check that reads `CallFacts` (they cost nothing when it is off)."""
PROVIDER_KEY = "provider_validity"
"""The contract key of the one check that reads `PriorFacts`."""


@dataclass(frozen=True, slots=True)
class BeforeFacts:
    pins: tuple[PinFacts, ...]
    exchanges: tuple[tuple[int, int, Sequence[bytes]], ...]
    """Last N closed exchanges of before: (start, end, keys), oldest first (each message's
    key under `retain.compare`: `Loaded.key`, computed on first use: `Loaded.keys`)."""
    latest_user: tuple[int, Sequence[bytes]] | None
    """Before's last user message: its index, and its key under `latest_user_message` as a
    one-key sequence computed on first use (`Loaded.keys_of`)."""
    results: ResultIndex | None
    """Before tool contents by call id (`tool_results: complete`), or None when inactive."""
    tool_arguments: tuple[Violation, ...] = ()
    """Findings of `tool_arguments` on before's calls (`scope: both`), judged once per pair."""
    calls: CallFacts | None = None
    """Before calls and results (`tool_call_integrity`), or None when that check is off."""
    notes: tuple[str, ...] = ()
    """What the format normalised while reading before (`format_notes` reports it)."""
    provider: PriorFacts | None = None
    """Before's thinking blocks and reasoning pairs (`provider_validity`), or None when off."""
    snapshot: Loaded | None = None
    """The before snapshot itself, so a check compares an after message with a before one by
    Python equality first and reads the keys only where equality cannot decide
    (`Loaded.same_key`)."""


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


def prepare_before(before: Loaded, contract: Contract) -> BeforeFacts:
    views = before.views
    pins = []
    for pin in contract.pins:
        if pin.role is not None:
            indexes = tuple(index for index, view in enumerate(views) if view.role == pin.role)
            pins.append(PinFacts(indexes, before.keys_of(indexes, pin.match)))
        else:
            text = pin.contains or ""
            first = next(
                (index for index, view in enumerate(views)
                 if any(text in part for part in pin_texts(view.content, pin.match))),
                None,
            )
            pins.append(PinFacts(text_index=first))
    retain = contract.retain
    exchanges: list[tuple[int, int, Sequence[bytes]]] = []
    if retain.recent_exchanges > 0:
        spans = last_closed_exchanges([view.role for view in views], retain.recent_exchanges)
        exchanges = [
            (start, end, before.keys(start, end, retain.compare))
            for start, end in spans
        ]
    latest_user = None
    if retain.latest_user_message is not None:
        index = before.last_index("user")
        if index is not None:
            latest_user = (index, before.keys_of((index,), retain.latest_user_message))
    results: ResultIndex | None = None
    if retain.tool_results is not None:
        contents: dict[str, list[Any]] = {}
        for view in views:
            if view.role == "tool" and view.tool_call_id:
                contents.setdefault(view.tool_call_id, []).append(view.content)
        results = ResultIndex(contents)
    # Imported here: the checks package imports this module (retention), so a top-level import
    # would make importing `prepared` first a cycle.
    from frayproof_audit.checks.tool_arguments import before_findings

    calls = call_facts(before) if contract.settings(CALL_FACTS_KEY).enabled else None
    provider = prior_facts(before) if contract.settings(PROVIDER_KEY).enabled else None
    return BeforeFacts(tuple(pins), tuple(exchanges), latest_user, results,
                       before_findings(before, contract), calls, before.notes, provider, before)
