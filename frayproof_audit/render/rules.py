"""The rules of the CI outputs, read from the registries: one per condition code (`CHECKS`), one
per mutation operator (`OPERATOR_TABLE`) and a few notices of the tool itself.

Nothing here is keyed on a code or an operator name: a check's conditions, its summary and its
module's docstring (the bad and the good pattern) are the rule's text, and an operator's label,
survivor hint and skip reason are its rule's. A new check or operator gets its rule at once.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from importlib import metadata

from frayproof_audit.checks import CHECKS, Check, Condition
from frayproof_audit.mutate import operators
from frayproof_audit.mutate.operators import Operator
from frayproof_audit.render.ci import Rule

MUTANT_PREFIX = "MUT-"
"""Rule id of a surviving mutant of an operator: `MUT-drop_tool_call` (no `/`: SARIF reads a
rule id with slashes as a hierarchy)."""
CAPPED = "RESULTS-CAPPED"
INPUT_ERROR = "INPUT-ERROR"
ENGINE_ERROR = "ENGINE-ERROR"
NOT_MEASURED = "MUT-NOT-MEASURED"

_FIELD = re.compile(r"\{(\w+)\}")


def mutant_rule_id(operator: str) -> str:
    return MUTANT_PREFIX + operator


@cache
def information_uri() -> str | None:
    """The project's homepage from its package metadata (`[project.urls]`), if it declares one."""
    try:
        meta = metadata.metadata("frayproof-audit")
    except metadata.PackageNotFoundError:
        return None
    for entry in meta.get_all("Project-URL") or ():
        label, _, url = str(entry).partition(",")
        if label.strip().lower() in ("homepage", "home", "source", "repository"):
            return url.strip()
    home = str(meta["Home-page"] or "") if "Home-page" in meta else ""
    return home.strip() or None


def _title(condition: Condition) -> str:
    """The condition's fixed title with its per-finding fields shown as `<field>`."""
    return _FIELD.sub(r"<\1>", condition.title)


def _check_doc(check: Check) -> str:
    module = sys.modules.get(check.find.__module__)
    doc = (module.__doc__ or "").strip() if module is not None else ""
    return doc or check.summary


def _condition_rule(check: Check, condition: Condition) -> Rule:
    where = f"check {check.name} (contract key checks.{check.key})"
    help_text = (
        f"{_title(condition)}\n\n{_check_doc(check)}\n\n"
        f"How to fix: change the transformation (the compactor) so its output keeps what {where} "
        f"asks for; if the contract asks for more than you need, change checks.{check.key} "
        f"(severity: warning reports without failing; enabled: false turns the check off)."
    )
    return Rule(
        id=condition.code,
        name=f"{check.name}.{condition.code}",
        short=_title(condition)[:1024],
        full=f"{check.summary} ({where})"[:1024],
        help=help_text,
        level="warning" if check.default_severity == "warning" else "error",
        tags=("frayproof-audit", "contract", check.name),
    )


def _operator_rule(operator: Operator) -> Rule:
    return Rule(
        id=mutant_rule_id(operator.name),
        name=f"survived.{operator.name}",
        short=f"Surviving mutant of {operator.name}: {operator.label}"[:1024],
        full=(f"The contract passed the real output after {operator.name} planted this fault "
              f"({operator.label.rstrip('.').lower()}), so it would let the same fault of a "
              f"real compaction through.")[:1024],
        help=(f"{operator.label}\n\nWhat it means: {operator.survivor_hint}\n\n"
              f"How to fix: make the contract catch it (the hint names the rule to add or "
              f"tighten), then run mutate again. When the operator does not apply: "
              f"{operator.skip_reason}"),
        level="error",
        tags=("frayproof-audit", "mutation", operator.name),
    )


_TOOL_RULES = (
    Rule(CAPPED, "results-capped", "Results were left out to stay within the output's limits.",
         "More results than the output may hold (GitHub accepts 25,000 per SARIF run); the "
         "most severe ones are kept.",
         "The results shown are the most severe, in report order. Raise --max-results, or read "
         "every finding with --format json or from the audit tables.", "note",
         ("frayproof-audit",)),
    Rule(INPUT_ERROR, "input-error", "A record could not be read or audited.",
         "The record is not valid input: invalid JSON, a missing or wrongly typed field, an "
         "invalid message. It was not judged.",
         "Fix the logger that wrote the record, or map its fields with --field NAME=PATH. "
         "--fail-on input-errors makes any such record fail the run.", "warning",
         ("frayproof-audit", "input")),
    Rule(ENGINE_ERROR, "engine-error", "Auditing a record raised an unexpected exception (a bug).",
         "frayproof-audit failed on this record; the pairs table's engine_error column says "
         "what was raised and where.",
         "Report it with the record; --allow-engine-errors accepts such records.", "error",
         ("frayproof-audit",)),
    Rule(NOT_MEASURED, "not-measured", "No mutant applied to this output.",
         "No operator found a site in the output, so the contract's coverage was not measured.",
         "Test an output with tool calls, user messages or pinned text, or choose other "
         "--operators.", "error", ("frayproof-audit", "mutation")),
)


def all_rules(*, mutation: bool) -> tuple[Rule, ...]:
    """Every condition's rule, the operators' rules when `mutation`, then the tool's notices."""
    rules = [_condition_rule(check, condition) for check in CHECKS for condition in check.conditions]
    if mutation:
        rules.extend(_operator_rule(operator) for operator in operators.OPERATOR_TABLE)
    rules.extend(_TOOL_RULES)
    return tuple(rules)
