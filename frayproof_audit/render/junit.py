"""`--format junit`: JUnit XML as GitLab, Jenkins and other CI test reports read it.

One `<testsuite>` per registered check with one `<testcase>` per pair (a `<failure>` for its
error findings, `<skipped>` when the contract turns the check off), a `mutation` suite (one case
per mutant for `mutate`, per pair × operator for `audit`, survivors failing) and, for `audit`, a
`records` suite of records that could not be judged (`<error>`). Class names and names are
stable (`frayproof_audit.<check>`, the pair), unique within a class (GitLab keeps only the first
of equal names). Counts in the attributes are those of the cases written. Beyond `--max-results`
cases (20,000 by default: GitLab refuses reports over 30 MB) failures and errors are kept first,
and one skipped case says how many were left out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from frayproof_audit.render.ci import (
    ERROR,
    FAILURE,
    PASSED,
    SKIPPED,
    Case,
    Outcome,
    RenderContext,
    left_out_sentence,
)
from frayproof_audit.render.failure import Failure, Said
from frayproof_audit.render.outcomes import outcome_of

DEFAULT_MAX_CASES = 20_000
TOOL_SUITE = "frayproof-audit"
"""The suite of the tool's own cases: a command that could not run, the cases left out."""
TRUNCATION_SUITE = TOOL_SUITE
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_RANK = {FAILURE: 0, ERROR: 0, SKIPPED: 1, PASSED: 2}


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: control characters and lone surrogates become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def capped_cases(outcome: Outcome, cap: int) -> tuple[list[Case], int]:
    """At most `cap` cases, failures and errors first, in their original order; and the number
    left out (then the last place is kept for the case that says so)."""
    cases = list(outcome.cases)
    if outcome.cases_total <= cap and len(cases) <= cap:
        return cases, 0
    keep = sorted(range(len(cases)), key=lambda i: _RANK[cases[i].outcome])[: cap - 1]
    shown = [cases[i] for i in sorted(keep)]
    return shown, outcome.cases_total - len(shown)


def render_junit(result: object, context: RenderContext) -> str:
    cap = max(1, context.max_results or DEFAULT_MAX_CASES)
    outcome = outcome_of(result, context, cases=True)
    cases, left_out = capped_cases(outcome, cap)
    if left_out:
        cases.append(Case(TRUNCATION_SUITE, "frayproof_audit.output", "cases left out", SKIPPED,
                          left_out_sentence(left_out, outcome.cases_total, "test cases",
                                                            outcome.command)))
    return junit_document(outcome.command, cases)


def junit_failure(failure: Failure) -> Said:
    """One test case `frayproof_audit.<command>` in error."""
    case = Case(TOOL_SUITE, f"frayproof_audit.{failure.command}", failure.label.lower(),
                ERROR, failure.line, type=failure.label)
    return Said(junit_document(failure.command, [case]), failure.line)


def junit_document(command: str, cases: list[Case]) -> str:
    """The report of `command`: one `<testsuite>` per case suite, in first-seen order."""
    root = ET.Element("testsuites", name=f"frayproof-audit {command}")
    suites: dict[str, list[Case]] = {}
    for case in cases:
        suites.setdefault(case.suite, []).append(case)
    for name, members in suites.items():
        root.append(_suite(name, members))
    _count(root, cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _count(element: ET.Element, cases: Iterable[Case]) -> None:
    listed = list(cases)
    element.set("tests", str(len(listed)))
    element.set("failures", str(sum(case.outcome == FAILURE for case in listed)))
    element.set("errors", str(sum(case.outcome == ERROR for case in listed)))
    element.set("skipped", str(sum(case.outcome == SKIPPED for case in listed)))
    element.set("time", "0")


def _suite(name: str, cases: list[Case]) -> ET.Element:
    suite = ET.Element("testsuite", name=_clean(name))
    _count(suite, cases)
    seen: dict[tuple[str, str], int] = {}
    for case in cases:
        key = (case.classname, case.name)
        seen[key] = seen.get(key, 0) + 1
        name_shown = case.name if seen[key] == 1 else f"{case.name} #{seen[key]}"
        element = ET.SubElement(suite, "testcase", classname=_clean(case.classname),
                                name=_clean(name_shown), time="0")
        if case.file:
            element.set("file", _clean(case.file))
        if case.line:
            element.set("line", str(case.line))
        if case.outcome in (FAILURE, ERROR):
            detail = ET.SubElement(element, case.outcome, message=_clean(case.message))
            if case.type:
                detail.set("type", _clean(case.type))
            detail.text = _clean(case.text or case.message)
        elif case.outcome == SKIPPED:
            ET.SubElement(element, "skipped", message=_clean(case.message))
        elif case.text:
            ET.SubElement(element, "system-out").text = _clean(case.text)
    return suite
