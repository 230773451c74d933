"""tool_call_integrity: a call kept from before is the same call, and its result keeps its id.

Off by default (frayproof has no such check, so contracts that do not ask for it keep
frayproof's verdicts); `checks: {tool_call_integrity: true}` turns it on.

A call is *kept* when its id is called by an assistant message in both before and after. Then:
Bad:  before calls a: get_weather {"location": "Paris"}, after calls a: lookup {...} → TC-NAME
Bad:  before {"location": "Paris", "unit": "C"}, after {"location": "Par"}          → TC-ARGS
Bad:  before [tool a "12 C"] [tool b "3 C"], after [tool a "3 C"] [tool b "12 C"]   → TC-RESULT-ID
Good: after {"unit":"C","location":"Paris"}  (spacing and key order are not changes)

Arguments compare as parsed JSON (`jsonio.loads_strict`): key order and whitespace never
matter, a changed value, a dropped or added key, a truncated string or `1` becoming `1.0` do.
When either side is not JSON, the raw texts compare. A finding names the first difference by
its path (`$.location`, `$.stops[2]`) and shows both values, cut to a readable length.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.jsonio import JSONProblem, loads_strict
from frayproof_audit.loaded import Loaded
from frayproof_audit.model import call_arguments
from frayproof_audit.prepared import ContentKey, ResultIndex, content_key
from frayproof_audit.recheck.local import placed, window
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import MessageView
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "tool_call_integrity"
KEY = "tool_call_integrity"
RENAMED = Condition("TC-NAME", "Kept tool call changed its tool name: before {before}, after {after}.")
ARGUMENTS = Condition(
    "TC-ARGS", "Kept tool call changed its arguments at {path}: before {before}, after {after}.")
RESULT_ID = Condition("TC-RESULT-ID", "Result of a kept tool call now carries another id: {found}.")

SHOWN = 40
"""Characters of a value a finding shows (then `…`)."""
CONTEXT = 10
"""Characters of a common prefix kept in view before the first changed character of a string."""


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()
"""The value on the side of a difference where a key or item does not exist."""


@dataclass(frozen=True, slots=True)
class CallFacts:
    """Before's tool calls and results (prepared only when the check is enabled).

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


def prepare(before: Loaded, contract: Contract) -> CallFacts | None:
    """`CallFacts` when the check is on (they cost nothing when it is off)."""
    return call_facts(before) if contract.settings(KEY).enabled else None


def kept_call_facts(before: BeforeFacts) -> CallFacts | None:
    return cast("CallFacts | None", before.of(KEY))


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    """Findings in after order: per assistant message its calls' TC-NAME then TC-ARGS, per tool
    message its TC-RESULT-ID. Facts prepared for a contract with this check off (None) give
    none: they hold nothing to compare with."""
    facts = kept_call_facts(before) if before is not None else None
    if facts is None:
        return []
    severity = settings.severity
    views = after.views
    kept = {
        call.id for view in views if view.role == "assistant" for call in view.calls
        if call.id in facts.calls
    }
    if not kept:
        return []
    found: list[Violation] = []
    after_results = _AfterResults(views)
    for index, view in enumerate(views):
        found += judge_message(after, index, view, kept, facts, after_results, severity)
    return found


def judge_message(after: Loaded, index: int, view: MessageView, kept: Container[str], facts: CallFacts,
                  after_results: Container[tuple[str, ContentKey]], severity: str) -> list[Violation]:
    """One after message's findings: an assistant's calls' TC-NAME then TC-ARGS, a tool
    message's TC-RESULT-ID. `index` is its place in `after` (whose wire holds its arguments);
    `kept` holds the kept call ids and `after_results` after's (call id, content key) pairs,
    both of the whole snapshot (mutation's re-check passes a mutant's, `KeptCalls`)."""
    if view.role == "assistant":
        found: list[Violation] = []
        for position, call in enumerate(view.calls):
            if call.id in kept:
                found += _compare_call(after, index, position, call.id, call.name, facts, severity)
        return found
    if view.role == "tool":
        own = view.tool_call_id
        moved_from = _moved_result(own or "", content_key(view.content), kept, facts, after_results)
        if moved_from is not None:
            shown = "(none)" if own is None else json.dumps(own, ensure_ascii=False)
            return [RESULT_ID.violation(NAME, severity, "after", index, tool_call_id=moved_from,
                                        found=shown)]
    return []


def _compare_call(after: Loaded, index: int, position: int, call_id: str, name: str,
                  facts: CallFacts, severity: str) -> list[Violation]:
    before_name, before_arguments = facts.call(call_id)
    found = []
    if name != before_name:
        found.append(RENAMED.violation(NAME, severity, "after", index, tool_call_id=call_id,
                                       before=_show(before_name), after=_show(name)))
    difference = arguments_difference(before_arguments, call_arguments(after.wire[index], position))
    if difference is not None:
        path, old, new = difference
        found.append(ARGUMENTS.violation(NAME, severity, "after", index, tool_call_id=call_id,
                                         path=path, **_shown_pair(old, new)))
    return found


class _AfterResults:
    """(call id, content key) of after's tool messages with an id, gathered on first use: only
    a result that before does not have under its own id asks (see `CallFacts`)."""

    __slots__ = ("_pairs", "_views")

    def __init__(self, views: Sequence[MessageView]) -> None:
        self._views = views
        self._pairs: set[tuple[str, ContentKey]] | None = None

    def __contains__(self, pair: object) -> bool:
        if self._pairs is None:
            self._pairs = {(view.tool_call_id, content_key(view.content)) for view in self._views
                           if view.role == "tool" and view.tool_call_id}
        return pair in self._pairs


def _moved_result(own: str, key: ContentKey, kept: Container[str], facts: CallFacts,
                  after_results: Container[tuple[str, ContentKey]]) -> str | None:
    """The kept call whose result this after tool message (id `own`, content `key`) carries
    under another id, if any.

    It is call X's when: X is kept, X ≠ own, before has a result for X with this content, before
    has no result for `own` with this content (two calls that returned the same text keep
    theirs), and after has no result for X with this content (X's own result is still there).
    """
    if facts.has_result(own, key):
        return None
    for call_id in facts.result_ids(key):
        if call_id != own and call_id in kept and (call_id, key) not in after_results:
            return call_id
    return None


# --- the first difference of two arguments texts --------------------------------------------

def arguments_difference(before: str, after: str) -> tuple[str, Any, Any] | None:
    """(path, before value, after value) of the first difference, or None when equal.

    Both parse as JSON: values compare by type and value (a key order or spacing change is
    none). Otherwise the raw texts compare, at path `$`.
    """
    if before == after:
        return None
    old, new = _parsed(before), _parsed(after)
    if old is _NOT_JSON or new is _NOT_JSON:
        return ("$", before, after)
    return first_difference(old, new, "$")


_NOT_JSON = object()


def _parsed(text: str) -> Any:
    try:
        return loads_strict(text.encode("utf-8"))
    except (JSONProblem, UnicodeEncodeError):
        return _NOT_JSON


def first_difference(old: Any, new: Any, path: str) -> tuple[str, Any, Any] | None:
    """Depth first, in before's key order then after's added keys; array items by position.
    Depth is bounded by the parser's nesting limit."""
    if type(old) is not type(new):
        return (path, old, new)
    if type(old) is dict:
        for key, value in old.items():
            if key not in new:
                return (_step(path, key), value, ABSENT)
            found = first_difference(value, new[key], _step(path, key))
            if found is not None:
                return found
        for key, value in new.items():
            if key not in old:
                return (_step(path, key), ABSENT, value)
        return None
    if type(old) is list:
        for position, (a, b) in enumerate(zip(old, new, strict=False)):
            found = first_difference(a, b, f"{path}[{position}]")
            if found is not None:
                return found
        if len(old) != len(new):
            position = min(len(old), len(new))
            return (f"{path}[{position}]", old[position] if position < len(old) else ABSENT,
                    new[position] if position < len(new) else ABSENT)
        return None
    return None if old == new else (path, old, new)


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _step(path: str, key: str) -> str:
    return f"{path}.{key}" if _KEY.fullmatch(key) else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _shown_pair(old: Any, new: Any) -> dict[str, str]:
    """Both values for a finding; two long strings are shown from just before where they part."""
    if type(old) is str and type(new) is str:
        common = 0
        for a, b in zip(old, new, strict=False):
            if a != b:
                break
            common += 1
        start = max(0, common - CONTEXT)
        if start and max(len(old), len(new)) > SHOWN:
            return {"before": _show(old[start:], "…"), "after": _show(new[start:], "…")}
    return {"before": _show(old), "after": _show(new)}


def _show(value: Any, lead: str = "") -> str:
    if value is ABSENT:
        return "(absent)"
    if type(value) is str:
        text = value if len(value) <= SHOWN else value[:SHOWN]
        quoted = json.dumps(text, ensure_ascii=False)
        if len(value) > SHOWN:
            quoted = quoted[:-1] + "…\""
        return quoted if not lead else f'"{lead}{quoted[1:]}'
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


# --- mutation's re-check ---------------------------------------------------------------------

T = TypeVar("T")
_ResultPair = tuple[str, ContentKey]


class _Counted(Generic[T]):
    """Membership in a multiset after an edit: the original's counts, minus the removed
    messages', plus the new messages'."""

    __slots__ = ("added", "counts", "removed")

    def __init__(self, counts: Counter[T], removed: Counter[T], added: Counter[T]) -> None:
        self.counts, self.removed, self.added = counts, removed, added

    def __contains__(self, item: object) -> bool:
        return self.counts[item] - self.removed[item] + self.added[item] > 0  # type: ignore[index]


class KeptCalls:
    """Per pair: the original output's kept call ids and result pairs, counted, and its tool messages
    by content key.

    Mutation's re-check (`_recheck` builds it per pair), for an original output with no finding of
    this check (clean). Rerunning the check over every mutant made mutation quadratic in the
    record's length for contracts that turn it on (a 4,000-message output took 67 s with it and
    `provider_validity` against 1 s without). A message's findings depend on the message itself, on
    the set K of kept call ids (ids that an after assistant calls and before calls) and on the set R
    of after's (result id, content key) pairs; never on positions. Let the edit remove messages
    (deleted, or rewritten: replaced in place by new ones) and add new messages; moves and swaps
    change neither K nor R.

    - An untouched assistant message's calls are judged as in the original (their own ids are in K
      exactly when before calls them): no findings.
    - An untouched tool message with content key k was not flagged in the original; a result is
      flagged for kept call X when X is in K, X is not its own id, before has X's result with key k
      and (X, k) is not in R. If the new messages call no id outside the original K, K only shrinks,
      which flags nothing new; R loses pairs only where removed messages carried them. So an
      untouched result can be flagged only if its key is that of a pair R lost.
    - The new messages are judged against the mutant's K and R.

    So the mutant's findings are those of its new messages and of the untouched results whose key is
    a lost pair's, each judged by `judge_message` against the mutant's K and R (counted, not built),
    in mutant order (`findings`). An edit whose new messages call an id outside the original K is
    not covered (K would grow): the check is rerun.
    """

    __slots__ = ("by_key", "calls", "pairs", "uses", "views")

    def __init__(self, views: Sequence[MessageView], calls: CallFacts) -> None:
        self.views = views
        self.calls = calls
        self.uses: Counter[str] = Counter(
            call.id for view in views if view.role == "assistant" for call in view.calls
            if call.id in calls.calls
        )
        self.pairs: Counter[_ResultPair] = Counter()
        self.by_key: dict[ContentKey, list[int]] = {}
        for index, view in enumerate(views):
            if view.role == "tool":
                key = content_key(view.content)
                self.by_key.setdefault(key, []).append(index)
                if view.tool_call_id:
                    self.pairs[(view.tool_call_id, key)] += 1

    def findings(self, effects: Effects, mutant: Mutant, settings: CheckSettings) -> list[Violation] | None:
        """The mutant's findings (original clean), or None when the lemma does not cover the edit."""
        views, calls = self.views, self.calls
        lost_calls: Counter[str] = Counter()
        lost_pairs: Counter[_ResultPair] = Counter()
        for index in effects.deleted + effects.rewritten:
            view = views[index]
            if view.role == "assistant":
                lost_calls.update(call.id for call in view.calls if call.id in calls.calls)
            elif view.role == "tool" and view.tool_call_id:
                lost_pairs[(view.tool_call_id, content_key(view.content))] += 1
        new_calls: Counter[str] = Counter()
        new_pairs: Counter[_ResultPair] = Counter()
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


class _Recheck:
    __slots__ = ("kept", "settings")

    def __init__(self, kept: KeptCalls, settings: CheckSettings) -> None:
        self.kept, self.settings = kept, settings

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        return self.kept.findings(effects, mutant, self.settings)


def _recheck(pair: PairContext, check: Check, settings: CheckSettings,
             found: list[Violation]) -> _Recheck | None:
    facts = kept_call_facts(pair.facts)
    if facts is None or found:
        return None
    return _Recheck(KeptCalls(pair.after.views, facts), settings)


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=(RENAMED, ARGUMENTS, RESULT_ID),
    find=find,
    summary="A call kept from before keeps its tool name and arguments, and its result its id.",
    needs_before=True,
    active=lambda contract: True,
    asks_for="kept-call rules (checks.tool_call_integrity)",
    enabled_by_default=False,
    prepare=prepare,
    recheck=_recheck,
)
