"""A result (`Report`, `MutationReport`, `RunSummary`) → the `Outcome` every CI output writes.

Places: a finding of `check` points at the file its snapshot was read from (`before` or
`after`), at the line where its message starts when the file is a JSON list, and always names
its message as a logical location (`after[4]`); a surviving mutant points at its first site. An
audit's results point at the JSONL file and line of their record, or name the Parquet row
(`row[12]`) as a logical location. Test cases are one per pair × registered check (skipped when
the contract turns the check off), one per mutant, one per unjudged record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from frayproof_audit.checks import CHECKS
from frayproof_audit.contract import load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.files import read_regular_file
from frayproof_audit.mutate.report import SKIPPED, SURVIVED, MutantOutcome, MutationReport
from frayproof_audit.render.ci import (
    FAILURE,
    PASSED,
    Case,
    Item,
    Outcome,
    Place,
    RenderContext,
    by_severity,
)
from frayproof_audit.render.ci import SKIPPED as CASE_SKIPPED
from frayproof_audit.render.positions import SnapshotLines
from frayproof_audit.render.rules import NOT_MEASURED, all_rules, mutant_rule_id
from frayproof_audit.report import Report, Violation

MUTATION_SUITE = "mutation"
MAX_LINE_FILE_BYTES = 64 * 1024 * 1024
"""Snapshot files larger than this are not re-read for line numbers (logical locations only)."""


def outcome_of(result: object, context: RenderContext, limit: int, *, cases: bool = False) -> Outcome:
    """The `Outcome` of any result the commands produce; `limit` bounds what an audit reads.
    Test cases are built only when asked for (`cases`: JUnit), since an audit's are many."""
    if isinstance(result, Report):
        return _of_report(result, context)
    if isinstance(result, MutationReport):
        return _of_mutation(result, context)
    from frayproof_audit.corpus.run.summary import RunSummary

    if isinstance(result, RunSummary):
        from frayproof_audit.render.audit_outcome import audit_outcome

        return audit_outcome(result, context, limit, cases=cases)
    raise TypeError(f"no CI output for a {type(result).__name__}")


# ---- places ---------------------------------------------------------------------------------

class _Places:
    """Places in the files of one result; each snapshot file is read (for its lines) once."""

    def __init__(self, context: RenderContext) -> None:
        self._files = context.files
        self._lines: dict[str, SnapshotLines] = {}

    def _of(self, path: str) -> SnapshotLines:
        if path not in self._lines:
            try:
                text = read_regular_file(path, MAX_LINE_FILE_BYTES).decode("utf-8-sig")
            except (InputError, OSError, UnicodeDecodeError):
                text = ""
            self._lines[path] = SnapshotLines.from_text(text)
        return self._lines[path]

    def at(self, snapshot: str, label: str) -> Place:
        """`label` (`after[4]`, a mutant's site) in the file snapshot `snapshot` was read from."""
        path = self._files.get(snapshot)
        if path is None:
            return Place(None, None, label)
        line = self._of(path).line_of(label) if path.endswith(".json") else None
        return Place(path, line, label)


def _label(violation: Violation) -> str:
    if violation.message_index is None:
        return violation.snapshot
    return f"{violation.snapshot}[{violation.message_index}]"


def violation_text(violation: Violation, where: str) -> str:
    """The message of a finding with its place and named parts (`tool_call_id`, `pin`, `rule`)."""
    extras = [f"{name} {json.dumps(getattr(violation, name), ensure_ascii=False)}"
              for name in ("tool_call_id", "pin", "rule") if getattr(violation, name) is not None]
    detail = "; ".join([f"{violation.check} at {where}", *extras])
    return f"{violation.message} ({detail})"


# ---- check / validate -----------------------------------------------------------------------

def _violation_item(violation: Violation, context: RenderContext, places: _Places) -> Item:
    label = _label(violation)
    return Item(
        rule=violation.code or violation.check,
        level="warning" if violation.severity == "warning" else "error",
        message=violation_text(violation, label),
        place=places.at(violation.snapshot, label),
        identity=("finding", violation.code or violation.check, context.subject, label,
                  violation.tool_call_id or "", violation.pin or "", violation.rule or ""),
        properties={"check": violation.check, "snapshot": violation.snapshot,
                    "message_index": violation.message_index},
    )


def enabled_checks(contract: str | None) -> frozenset[str] | None:
    """Names of the checks the contract runs; None when the contract cannot be read again."""
    try:
        resolved = load_contract(contract)
    except InputError:
        return None
    return frozenset(check.name for check in CHECKS if resolved.settings(check.key).enabled)


def check_cases(violations: Iterable[Violation], name: str, enabled: frozenset[str] | None,
                has_before: bool, file: str | None = None, line: int | None = None) -> list[Case]:
    """One case per registered check for one pair: failed by its error findings, skipped when
    the contract turns the check off or it needs a before snapshot that is not there."""
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
            outcome, message = CASE_SKIPPED, "off in the contract"
        cases.append(Case(check.name, f"frayproof_audit.{check.name}", name, outcome, message,
                          text if outcome != CASE_SKIPPED else "", kind, file, line))
    return cases


def _of_report(report: Report, context: RenderContext) -> Outcome:
    places = _Places(context)
    items = by_severity(_violation_item(v, context, places) for v in report.violations)
    cases = check_cases(report.violations, context.subject, enabled_checks(context.contract),
                        "before" in context.files, context.subject or None)
    return Outcome(
        command=context.command or "check", rules=all_rules(mutation=False), items=tuple(items),
        items_total=len(items), cases=tuple(cases), cases_total=len(cases),
        verdict=report.to_text().splitlines()[0], exit_code=report.exit_code,
        properties={"errors": report.errors, "warnings": report.warnings},
    )


# ---- mutate ---------------------------------------------------------------------------------

def survivor_message(operator: str, description: str, site: str, reason: str) -> str:
    return (f"Surviving mutant: {description} ({operator} at {site}) passed the contract."
            f" {reason}").strip()


def _survivor_item(mutant: MutantOutcome, context: RenderContext, places: _Places) -> Item:
    site = mutant.sites[0] if mutant.sites else "after"
    return Item(
        rule=mutant_rule_id(mutant.operator),
        level="error",
        message=survivor_message(mutant.operator, mutant.description, site, mutant.reason),
        place=places.at("after", site),
        identity=("mutant", mutant.operator, context.subject, *mutant.sites),
        properties={"operator": mutant.operator, "sites": list(mutant.sites)},
    )


def _mutant_case(mutant: MutantOutcome, subject: str) -> Case:
    name = f"{subject} {', '.join(mutant.sites)}" if mutant.sites else f"{subject} (no site)"
    classname = f"frayproof_audit.mutation.{mutant.operator}"
    if mutant.status == SURVIVED:
        return Case(MUTATION_SUITE, classname, name, FAILURE, f"Survived: {mutant.description}",
                    mutant.to_text(), "survived")
    if mutant.status == SKIPPED:
        return Case(MUTATION_SUITE, classname, name, CASE_SKIPPED, mutant.reason)
    return Case(MUTATION_SUITE, classname, name, PASSED, text=mutant.to_text())


def _of_mutation(report: MutationReport, context: RenderContext) -> Outcome:
    baseline = report.baseline
    places = _Places(context)
    if not baseline.passed:
        items = by_severity(_violation_item(v, context, places) for v in baseline.violations)
    else:
        items = [_survivor_item(m, context, places) for m in report.mutants if m.status == SURVIVED]
        if not report.applicable:
            items.append(Item(NOT_MEASURED, "error", "No mutant applied to this output: the "
                              "contract's coverage was not measured.",
                              places.at("after", "after"),
                              ("not-measured", context.subject)))
    cases = check_cases(baseline.violations, context.subject, enabled_checks(context.contract),
                        True, context.subject or None)
    cases.extend(_mutant_case(m, context.subject) for m in report.mutants)
    text = report.to_text().splitlines()
    verdict = text[1] if baseline.passed and len(text) > 1 else text[0]
    return Outcome(
        command="mutate", rules=all_rules(mutation=True), items=tuple(items),
        items_total=len(items), cases=tuple(cases), cases_total=len(cases), verdict=verdict,
        exit_code=report.exit_code,
        properties={"caught": report.caught, "survived": report.survived,
                    "skipped": report.skipped, "score_percent": report.score_percent},
    )

