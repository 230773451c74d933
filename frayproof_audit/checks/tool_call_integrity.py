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
from collections.abc import Container, Sequence
from typing import TYPE_CHECKING, Any

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.jsonio import JSONProblem, loads_strict
from frayproof_audit.model import call_arguments
from frayproof_audit.prepared import CALL_FACTS_KEY, ContentKey, content_key
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import MessageView
    from frayproof_audit.prepared import BeforeFacts, CallFacts
    from frayproof_audit.snapshot import Loaded

NAME = "tool_call_integrity"
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


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    """Findings in after order: per assistant message its calls' TC-NAME then TC-ARGS, per tool
    message its TC-RESULT-ID. Facts prepared for a contract with this check off (None) give
    none: they hold nothing to compare with."""
    facts = before.calls if before is not None else None
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
    both of the whole snapshot (the mutation fast path passes a mutant's, `mutate.kept_calls`)."""
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


CHECK = Check(
    name=NAME,
    key=CALL_FACTS_KEY,
    conditions=(RENAMED, ARGUMENTS, RESULT_ID),
    find=find,
    summary="A call kept from before keeps its tool name and arguments, and its result its id.",
    needs_before=True,
    active=lambda contract: True,
    asks_for="kept-call rules (checks.tool_call_integrity)",
    enabled_by_default=False,
)
