"""An audit's `RunSummary` → `Outcome`, from the rows the run committed (`corpus.dataset.run_details`), which
the caller read into `context.shown.details`.

A result points at its record: the JSONL file and line (`source`, `source_row`), or for a
Parquet source the file with the row as a logical location (`row[12]/after[4]`), since a
Parquet row has no line. Levels follow the run's gates: a surviving mutant or an unreadable
record is an error when the gates make it fail the run, a warning otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from frayproof_audit.blame import INHERITED
from frayproof_audit.checks import CHECKS
from frayproof_audit.corpus.store.pair_status import PairStatus
from frayproof_audit.render.ci import (
    ERROR,
    FAILURE,
    Case,
    Item,
    Outcome,
    Place,
    RenderContext,
    by_severity,
)
from frayproof_audit.render.parts import (
    MUTATION_SUITE,
    check_cases,
    survivor_message,
    violation_text,
)
from frayproof_audit.render.rules import ENGINE_ERROR, INPUT_ERROR, all_rules, mutant_rule_id
from frayproof_audit.report import Violation

if TYPE_CHECKING:  # the rows' types: pyarrow is the caller's import, not the renderer's
    from frayproof_audit.corpus.dataset.run_details import FindingRow, Record, RunDetails
    from frayproof_audit.corpus.run.summary import RunSummary

RECORDS_SUITE = "records"


def _place(record: Record, label: str | None) -> Place:
    if record.is_parquet:
        row = f"row[{record.source_row}]"
        return Place(record.source or None, None, f"{row}/{label}" if label else row)
    return Place(record.source or None, record.source_row or None,
                 f"{record.pair_id}/{label}" if label else record.pair_id)


def _violation(row: FindingRow) -> Violation:
    return Violation(row.check, row.severity, row.snapshot, row.message_index, row.message,
                     tool_call_id=row.tool_call_id, pin=row.pin, rule=row.rule, code=row.code)


def _finding_item(row: FindingRow) -> Item:
    violation = _violation(row)
    inherited = row.origin == INHERITED
    label = (f"{row.snapshot}[{row.message_index}]" if row.message_index is not None
             else row.snapshot)
    return Item(
        rule=row.code or row.check,
        level="warning" if row.severity == "warning" else "error",
        message=f"{violation_text(violation, label)} in pair {row.record.pair_id}"
        + (" (inherited: its before already had it)" if inherited else ""),
        place=_place(row.record, label),
        identity=("finding", row.code or row.check, row.record.pair_id, label,
                  row.tool_call_id or "", row.pin or "", row.rule or ""),
        properties=_record_properties(row.record) | {"check": row.check}
        | ({"origin": INHERITED} if inherited else {}),
    )


def _record_properties(record: Record) -> dict[str, object]:
    return {"pair_id": record.pair_id, "source": record.source, "source_row": record.source_row,
            "compactor": record.compactor}


def _items(details: RunDetails, summary: RunSummary) -> list[Item]:
    items = [_finding_item(row) for row in details.findings]
    survivors_gate = "survivors" in summary.fail_on and "none" not in summary.fail_on
    survivor_level = "error" if survivors_gate else "warning"
    for mutant in details.survivors:
        site = mutant.sites[0] if mutant.sites else "after"
        items.append(Item(
            rule=mutant_rule_id(mutant.operator), level=survivor_level,
            message=(survivor_message(mutant.operator, mutant.description or mutant.operator,
                                      site, mutant.reason or "")
                     + f" In pair {mutant.record.pair_id}."),
            place=_place(mutant.record, site),
            identity=("mutant", mutant.operator, mutant.record.pair_id, *mutant.sites),
            properties=_record_properties(mutant.record) | {"operator": mutant.operator},
        ))
    input_level = "error" if _input_errors_gate(summary) else "warning"
    for bad in details.unjudged:
        engine = bad.status == PairStatus.ENGINE_ERROR
        items.append(Item(
            rule=ENGINE_ERROR if engine else INPUT_ERROR,
            level="error" if engine else input_level,
            message=bad.reason or bad.status,
            place=_place(bad.record, None),
            identity=(bad.status, bad.record.source, str(bad.record.source_row)),
            properties=_record_properties(bad.record),
        ))
    return by_severity(items)


def _input_errors_gate(summary: RunSummary) -> bool:
    """Whether unreadable records fail this run: `--fail-on input-errors`, or a rate above
    `--max-input-error-rate` (unless `--fail-on none`)."""
    if "none" in summary.fail_on:
        return False
    if "input-errors" in summary.fail_on:
        return summary.input_errors > 0
    rate, limit = summary.input_error_rate, summary.max_input_error_rate
    return rate is not None and limit is not None and rate > limit


def _cases(details: RunDetails, enabled: frozenset[str] | None) -> list[Case]:
    loaded: dict[tuple[str, str, int], list[Violation]] = {}
    for row in details.findings:
        key = (row.record.pair_id, row.record.source, row.record.source_row)
        loaded.setdefault(key, []).append(_violation(row))
    cases: list[Case] = []
    for pair in details.judged:
        record = pair.record
        found = loaded.get((record.pair_id, record.source, record.source_row), [])
        shown = {v.check for v in found if v.severity == "error"}
        # A failing check whose findings were past the read limit still fails its case.
        found += [Violation(name, "error", "after", None, "Error finding(s): see the findings table.")
                  for name in sorted(pair.failing_checks - shown)]
        line = None if record.is_parquet else record.source_row
        cases.extend(check_cases(found, record.pair_id, enabled, True, record.source, line))
    survivors: dict[tuple[str, str, int, str], list[str]] = {}
    for mutant in details.survivors:
        record = mutant.record
        survivors.setdefault((record.pair_id, record.source, record.source_row, mutant.operator),
                             []).append(f"SURVIVED {mutant.operator} [{', '.join(mutant.sites)}]:"
                                        f" {mutant.reason or mutant.description or ''}".rstrip())
    for tally in details.operators:
        record = tally.record
        line = None if record.is_parquet else record.source_row
        base = Case(MUTATION_SUITE, f"frayproof_audit.mutation.{tally.operator}", record.pair_id,
                    file=record.source or None, line=line)
        applicable = tally.caught + tally.survived
        if tally.survived:
            sites = survivors.get((record.pair_id, record.source, record.source_row, tally.operator), [])
            message = f"{tally.survived} of {applicable} mutant(s) survived"
            cases.append(replace(base, outcome=FAILURE, message=message, type="survived",
                                 text="\n".join(sites) or message))
        else:
            cases.append(replace(base, text=f"{tally.caught} of {applicable} mutant(s) caught"))
    for bad in details.unjudged:
        record = bad.record
        cases.append(Case(RECORDS_SUITE, "frayproof_audit.records", record.pair_id, ERROR,
                          bad.reason, bad.reason, bad.status, file=record.source or None,
                          line=None if record.is_parquet else record.source_row))
    return cases


class RowsNotRead(ValueError):
    """An audit's outcome asked for without its committed rows (`context.shown.details`)."""


def audit_outcome(summary: RunSummary, context: RenderContext, *, cases: bool = False) -> Outcome:
    """The outcome of an audit run from the rows of its tables the caller read
    (`frayproof_audit.shown.read_shown`); its test cases only when `cases` (they are a case per
    pair × check)."""
    shown = context.shown
    if shown is None or shown.details is None:
        raise RowsNotRead(f"the CI outputs of run {summary.run_id} show its committed rows: read "
                          "them first (frayproof_audit.shown.read_shown)")
    details = shown.details
    items = _items(details, summary)
    built = _cases(details, shown.enabled) if cases else []
    notices = [*summary.gate_failures, *summary.notes,
               *(f"{item.shard}: not audited: {item.reason}" for item in summary.not_audited)]
    return Outcome(
        command="audit", rules=all_rules(mutation=True), items=tuple(items),
        items_total=details.findings_total + details.survivors_total + details.unjudged_total,
        cases=tuple(built),
        cases_total=details.judged_total * len(CHECKS) + details.operators_total
        + details.unjudged_total,
        verdict=summary.verdict, exit_code=summary.exit_code, notices=tuple(notices),
        properties={"run_id": summary.run_id, "pairs": summary.pairs, "passed": summary.passed,
                    "failed": summary.failed, "input_errors": summary.input_errors,
                    "engine_errors": summary.engine_errors,
                    "mutants_caught": summary.mutants_caught,
                    "mutants_survived": summary.mutants_survived},
    )
