"""retention: positional rules that hold whatever the session's content is.

`latest_user_message: exact` — the last user message of before is the last user message of
after, identical, at or after the retained exchanges.
`recent_exchanges: N` — the last N closed exchanges of before appear verbatim, contiguous and
in order in after (summaries may sit between them).
`tool_results: complete` — a result kept for a before id keeps one of its before contents.
`compare: equivalent` (and `latest_user_message: equivalent`) accept re-serialized messages
and contents (`equivalence`); `exact` is frayproof's identity.
Bad:  after drops the final user request, or truncates a kept tool result.
Good: older exchanges replaced by a summary; the recent ones and the request kept verbatim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.equivalence import EXACT
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.snapshot import Loaded

NAME = "retention"
LATEST = Condition("RET-LATEST",
                   "Latest user message was not retained {how}, after the retained exchanges.")
EXCHANGE = Condition("RET-EXCHANGE",
                     "Recent exchange {span} is not retained {how} and in order.")
RESULT = Condition("RET-RESULT",
                   "Retained tool result content differs from every original result for this id.")


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    if before is None or not contract.retain.active:
        return []
    exchange_findings: list[Violation] = []
    cursor = 0
    compare = contract.retain.compare
    for start, end, identities in before.exchanges:
        position = _find_block(after, identities, before.snapshot, start, cursor, compare)
        if position is None:
            span = (f"before[{start}:{end}]" if before.snapshot is None
                    else before.snapshot.span_site("before", start, end))
            exchange_findings.append(EXCHANGE.violation(
                NAME, severity, "before", start, rule="recent_exchanges", span=span,
                how="verbatim" if compare == EXACT else "as equivalent messages"))
        else:
            cursor = position + len(identities)
    found: list[Violation] = []
    if before.latest_user is not None:
        before_index, key = before.latest_user
        after_index = after.last_index("user")
        latest = contract.retain.latest_user_message or EXACT
        if (after_index is None or after_index < cursor
                or not _same(after, after_index, key, before.snapshot, before_index, latest)):
            found.append(LATEST.violation(
                NAME, severity, "before", before_index, rule="latest_user_message",
                how="exactly" if latest == EXACT else "as an equivalent message"))
    found.extend(exchange_findings)
    if before.results is not None:
        for index, view in enumerate(after.views):
            if view.role != "tool" or not view.tool_call_id:
                continue
            if before.results.retained(view.tool_call_id, view.content, compare) is False:
                found.append(RESULT.violation(NAME, severity, "after", index,
                                              tool_call_id=view.tool_call_id, rule="tool_results"))
    return found


def _same(after: Loaded, index: int, key: Sequence[bytes], before: Loaded | None,
          before_index: int, compare: str) -> bool:
    """Whether after message `index` has `key[0]`, before message `before_index`'s key (by
    equality first when the before snapshot is at hand: `Loaded.same_key`)."""
    if before is None:
        return after.key(index, compare) == key[0]
    return after.same_key(index, before, before_index, compare)


def _find_block(after: Loaded, identities: Sequence[bytes], before: Loaded | None, start: int,
                cursor: int, compare: str) -> int | None:
    """Smallest p ≥ cursor where after[p:p+len] has exactly these keys (`Loaded.key`) of before
    messages [start, start+len) (compared by equality first: `Loaded.same_key`)."""
    length = len(identities)
    if length == 0:
        return cursor if cursor <= len(after) else None
    views = after.views
    if before is None:
        key = after.identity if compare == EXACT else after.equivalence_key
        first = identities[0]
        for position in range(cursor, len(after) - length + 1):
            if views[position].role != "user" or key(position) != first:
                continue
            if all(key(position + k) == identities[k] for k in range(1, length)):
                return position
        return None
    same = after.same_key
    for position in range(cursor, len(after) - length + 1):
        if views[position].role != "user" or not same(position, before, start, compare):
            continue
        if all(same(position + k, before, start + k, compare) for k in range(1, length)):
            return position
    return None


CHECK = Check(
    name=NAME,
    key="retention",
    conditions=(LATEST, EXCHANGE, RESULT),
    find=find,
    summary="Positional rules: the latest request, recent exchanges and kept results survive.",
    needs_before=True,
    active=lambda contract: contract.retain.active,
    asks_for="retention rules",
)
