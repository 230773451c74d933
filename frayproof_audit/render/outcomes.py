"""A result (`Report`, `MutationReport`, `RunSummary`) → the `Outcome` every CI output writes.

Places: a finding of `check` points at the file its snapshot was read from (`before` or
`after`), at the line where its message starts when the file is a JSON list, and always names
its message as a logical location (`after[4]`); a surviving mutant points at its first site. An
audit's results point at the JSONL file and line of their record, or name the Parquet row
(`row[12]`) as a logical location (`audit_outcome.py`). Test cases are one per pair ×
registered check (skipped when the contract turns the check off), one per mutant, one per
unjudged record.

Nothing here reads a file: the lines of the snapshot files, the checks the contract runs and an
audit's rows come in `context.shown`, read by the caller (`frayproof_audit.shown`) from the
files `lined_files` names.
"""

from __future__ import annotations

from frayproof_audit.mutate.report import SKIPPED, SURVIVED, MutantOutcome, MutationReport
from frayproof_audit.render.audit_outcome import audit_outcome
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
from frayproof_audit.render.parts import (
    MUTATION_SUITE,
    check_cases,
    survivor_message,
    violation_text,
)
from frayproof_audit.render.rules import NOT_MEASURED, all_rules, mutant_rule_id
from frayproof_audit.report import Report, Violation


def outcome_of(result: object, context: RenderContext, *, cases: bool = False) -> Outcome:
    """The `Outcome` of any result the commands produce, showing what `context.shown` holds.
    Test cases are built only when asked for (`cases`: JUnit), since an audit's are many."""
    if isinstance(result, Report):
        return _of_report(result, context)
    if isinstance(result, MutationReport):
        return _of_mutation(result, context)
    from frayproof_audit.corpus.run.summary import RunSummary  # not for check: its imports cost

    if isinstance(result, RunSummary):
        return audit_outcome(result, context, cases=cases)
    raise TypeError(f"no CI output for a {type(result).__name__}")


def lined_files(result: object, context: RenderContext) -> tuple[str, ...]:
    """The snapshot files (JSON) whose lines the outcome of `result` points at: the files a
    caller reads into `Shown.lines`, and no other."""
    snapshots: list[str] = []
    if isinstance(result, Report):
        snapshots = [v.snapshot for v in result.violations]
    elif isinstance(result, MutationReport):
        if not result.baseline.passed:
            snapshots = [v.snapshot for v in result.baseline.violations]
        elif not result.applicable or any(m.status == SURVIVED for m in result.mutants):
            snapshots = ["after"]
    paths = (context.files.get(snapshot) for snapshot in dict.fromkeys(snapshots))
    return tuple(dict.fromkeys(path for path in paths if path is not None and _lined(path)))


def _lined(path: str) -> bool:
    return path.endswith(".json")


# ---- places ---------------------------------------------------------------------------------

class _Places:
    """Places in the files of one result, with the lines the caller read (`Shown.lines`)."""

    def __init__(self, context: RenderContext) -> None:
        self._files = context.files
        self._lines = context.shown.lines if context.shown is not None else {}

    def at(self, snapshot: str, label: str) -> Place:
        """`label` (`after[4]`, a mutant's site) in the file snapshot `snapshot` was read from."""
        path = self._files.get(snapshot)
        if path is None:
            return Place(None, None, label)
        lines = self._lines.get(path) if _lined(path) else None
        return Place(path, None if lines is None else lines.line_of(label), label)


def _enabled(context: RenderContext) -> frozenset[str] | None:
    return context.shown.enabled if context.shown is not None else None


def _label(violation: Violation) -> str:
    if violation.message_index is None:
        return violation.snapshot
    return f"{violation.snapshot}[{violation.message_index}]"


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


def _of_report(report: Report, context: RenderContext) -> Outcome:
    places = _Places(context)
    items = by_severity(_violation_item(v, context, places) for v in report.violations)
    cases = check_cases(report.violations, context.subject, _enabled(context),
                        "before" in context.files, context.subject or None)
    return Outcome(
        command=context.command or "check", rules=all_rules(mutation=False), items=tuple(items),
        items_total=len(items), cases=tuple(cases), cases_total=len(cases),
        verdict=report.to_text().splitlines()[0], exit_code=report.exit_code,
        properties={"errors": report.errors, "warnings": report.warnings},
    )


# ---- mutate ---------------------------------------------------------------------------------

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
    cases = check_cases(baseline.violations, context.subject, _enabled(context),
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

