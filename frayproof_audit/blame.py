"""Blame: whether a pair's finding is one the compactor made (`introduced`) or one its `before`
already held (`inherited`).

The rule, deterministic and the same everywhere (docs/audit.md, "Blame"): the baseline is what
`check(before, before)` finds (before judged as its own after, against its own facts). Each
finding has a key: its check, code, severity, snapshot, `tool_call_id`, `pin`, `rule`, and the
identity of the message it points at (the format's canonical identity of that message, in the
snapshot the finding names; none for a finding on no message). A finding's position and text
are not in the key: a message kept verbatim at another index is the same message. The
findings of the pair are taken in report order, and each is `inherited` when a baseline finding
with the same key is left, which it then uses up (a multiset: a defect of before duplicated
by the compactor is inherited once, and introduced for the copy), else `introduced`.

So `check(before, before)` introduces nothing, for every snapshot (a property test holds it),
and a finding on a message the compactor changed, moved next to another or created is its own.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frayproof_audit.loaded import Loaded
    from frayproof_audit.report import Report, Violation

INTRODUCED = "introduced"
"""The compactor made this finding: before held no such condition on the same ids and messages."""
INHERITED = "inherited"
"""Before already held this finding (`check(before, before)` finds it too): not the compactor's."""
ORIGINS = (INTRODUCED, INHERITED)

FindingKey = tuple[str, str | None, str, str, str | None, str | None, str | None, bytes | None]


def origins(report: Report, baseline: Report, after: Loaded, before: Loaded) -> tuple[str, ...]:
    """The origin of each finding of `report` (the pair's, unlocalized: message indexes are the
    neutral model's), in report order, given `baseline`, `before`'s findings judged against itself."""
    left = Counter(finding_key(v, before, before) for v in baseline.violations)
    found: list[str] = []
    for violation in report.violations:
        key = finding_key(violation, after, before)
        if left[key] > 0:
            left[key] -= 1
            found.append(INHERITED)
        else:
            found.append(INTRODUCED)
    return tuple(found)


def finding_key(violation: Violation, after: Loaded, before: Loaded) -> FindingKey:
    """What makes two findings the same condition on the same ids and messages (see above)."""
    snapshot = after if violation.snapshot == "after" else before
    index = violation.message_index
    identity = snapshot.identity(index) if index is not None and 0 <= index < len(snapshot) else None
    return (violation.check, violation.code, violation.severity, violation.snapshot,
            violation.tool_call_id, violation.pin, violation.rule, identity)


def introduced_errors(report: Report, found: tuple[str, ...]) -> int:
    """Error findings the compactor introduced."""
    return sum(1 for violation, origin in zip(report.violations, found, strict=True)
               if origin == INTRODUCED and violation.severity == "error")
