"""The parts every result's `Outcome` shares: the message of a finding and of a surviving mutant,
and one pair's test cases, one per registered check. `outcomes.py` (check, mutate) and
`audit_outcome.py` (audit) build from them, so a finding reads the same in every output."""

from __future__ import annotations

import json
from collections.abc import Iterable

from frayproof_audit.checks import CHECKS
from frayproof_audit.render.ci import FAILURE, PASSED, Case
from frayproof_audit.render.ci import SKIPPED as CASE_SKIPPED
from frayproof_audit.report import Violation

MUTATION_SUITE = "mutation"


def violation_text(violation: Violation, where: str) -> str:
    """The message of a finding with its place and named parts (`tool_call_id`, `pin`, `rule`)."""
    extras = [f"{name} {json.dumps(getattr(violation, name), ensure_ascii=False)}"
              for name in ("tool_call_id", "pin", "rule") if getattr(violation, name) is not None]
    detail = "; ".join([f"{violation.check} at {where}", *extras])
    return f"{violation.message} ({detail})"


def survivor_message(operator: str, description: str, site: str, reason: str) -> str:
    return (f"Surviving mutant: {description} ({operator} at {site}) passed the contract."
            f" {reason}").strip()


def check_cases(violations: Iterable[Violation], name: str, enabled: frozenset[str] | None,
                has_before: bool, file: str | None = None, line: int | None = None) -> list[Case]:
    """One case per registered check for one pair: failed by its error findings, skipped when
    it needs a before snapshot that is not there. A check the contract turns off has no case:
    a suite of skipped cases for a check nobody enabled is noise in a CI test report."""
    by_check: dict[str, list[Violation]] = {}
    for violation in violations:
        by_check.setdefault(violation.check, []).append(violation)
    cases = []
    for check in CHECKS:
        found = by_check.get(check.name, [])
        errors = [v for v in found if v.severity == "error"]
        text = "\n".join(v.to_text() for v in found)
        outcome, message, kind = PASSED, "", ""
        if errors:
            outcome, message = FAILURE, errors[0].message
            kind = ",".join(dict.fromkeys(v.code or v.check for v in errors))
        elif check.needs_before and not has_before:
            outcome, message = CASE_SKIPPED, "needs a before snapshot"
        elif enabled is not None and check.name not in enabled:
            continue
        cases.append(Case(check.name, f"frayproof_audit.{check.name}", name, outcome, message,
                          text if outcome != CASE_SKIPPED else "", kind, file, line))
    return cases
