"""Facts taken from the before snapshot once, then compared against any number of afters.

Mutation testing checks dozens of mutants against one before; everything here is computed
once per (before, contract) pair and shared by every mutant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frayproof_audit.jsonio import canonical
from frayproof_audit.model import text_parts

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.report import Violation
    from frayproof_audit.snapshot import Loaded


@dataclass(frozen=True, slots=True)
class PinFacts:
    """For a role pin: (index, identity) of each before message of that role.
    For a contains pin: the first before index whose text contains it (None: inactive)."""

    role_messages: tuple[tuple[int, bytes], ...] = ()
    text_index: int | None = None


def content_retained(content: Any, originals: list[Any]) -> bool:
    """Whether `content` equals one of the before contents (`tool_results: complete`).

    Strings compare directly (no hashing or serializing of large results); anything else
    compares as canonical JSON, so key order never matters and `1` never equals `1.0`.
    """
    if type(content) is str:
        return any(type(original) is str and original == content for original in originals)
    key = canonical(content)
    return any(type(original) is not str and canonical(original) == key for original in originals)


@dataclass(frozen=True, slots=True)
class BeforeFacts:
    pins: tuple[PinFacts, ...]
    exchanges: tuple[tuple[int, int, tuple[bytes, ...]], ...]
    """Last N closed exchanges of before: (start, end, identities), oldest first."""
    latest_user: tuple[int, bytes] | None
    results: dict[str, list[Any]] | None
    """Before tool contents by call id (`tool_results: complete`), or None when inactive."""
    tool_arguments: tuple[Violation, ...] = ()
    """Findings of `tool_arguments` on before's calls (`scope: both`), judged once per pair."""


def closed_exchanges(roles: list[str]) -> list[tuple[int, int]]:
    """Spans [u, u') between consecutive user messages holding an assistant or tool message."""
    users = [index for index, role in enumerate(roles) if role == "user"]
    spans = []
    for start, end in itertools.pairwise(users):
        if any(roles[k] in ("assistant", "tool") for k in range(start + 1, end)):
            spans.append((start, end))
    return spans


def prepare_before(before: Loaded, contract: Contract) -> BeforeFacts:
    views = before.views
    pins = []
    for pin in contract.pins:
        if pin.role is not None:
            pins.append(PinFacts(role_messages=tuple(
                (index, before.identity(index))
                for index, view in enumerate(views) if view.role == pin.role
            )))
        else:
            text = pin.contains or ""
            first = next(
                (index for index, view in enumerate(views)
                 if any(text in part for part in text_parts(view.content))),
                None,
            )
            pins.append(PinFacts(text_index=first))
    retain = contract.retain
    exchanges: list[tuple[int, int, tuple[bytes, ...]]] = []
    if retain.recent_exchanges > 0:
        spans = closed_exchanges([view.role for view in views])[-retain.recent_exchanges:]
        exchanges = [
            (start, end, tuple(before.identity(k) for k in range(start, end))) for start, end in spans
        ]
    latest_user = None
    if retain.latest_user_message is not None:
        index = before.last_index("user")
        if index is not None:
            latest_user = (index, before.identity(index))
    results: dict[str, list[Any]] | None = None
    if retain.tool_results is not None:
        results = {}
        for view in views:
            if view.role == "tool" and view.tool_call_id:
                results.setdefault(view.tool_call_id, []).append(view.content)
    # Imported here: the checks package imports this module (retention), so a top-level import
    # would make importing `prepared` first a cycle.
    from frayproof_audit.checks.tool_arguments import before_findings

    return BeforeFacts(tuple(pins), tuple(exchanges), latest_user, results,
                       before_findings(before, contract))
