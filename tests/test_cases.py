"""Run every data-driven case in tests/cases/ through the engine (lists and files alike)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from frayproof_audit import check, validate
from frayproof_audit.checks import CHECK_NAMES, CONDITIONS
from frayproof_audit.report import Report
from tests.case_data import Case, load_cases
from tests.helpers import REPO, conditions, make_contract, verdict

CASES = load_cases()


def run(case: Case, after: object, before: object) -> Report:
    contract = make_contract(case.contract)
    if case.before is None:
        return validate(after, contract)
    return check(before, after, contract)


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_case(case: Case, write_json: Callable[..., Path]) -> None:
    report = run(case, case.after, case.before)
    expected = [item[:7] for item in case.expect]
    assert verdict(report) == expected
    assert conditions(report) == [item[7] for item in case.expect]
    assert report.passed == all(item[1] != "error" for item in case.expect)

    # The same messages read from JSON files give the same verdict.
    from_files = run(
        case,
        write_json(case.after),
        None if case.before is None else write_json(case.before),
    )
    assert verdict(from_files) == expected


def test_every_check_has_a_case_file() -> None:
    files = {case.file for case in CASES}
    assert files == set(CHECK_NAMES)


def test_case_ids_are_unique_per_file() -> None:
    labels = [case.label for case in CASES]
    assert len(labels) == len(set(labels))


def test_every_finding_condition_has_a_case() -> None:
    covered = {item[7] for case in CASES for item in case.expect}
    assert covered == set(CONDITIONS)


def test_every_check_and_condition_is_documented() -> None:
    text = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    for name in (*CHECK_NAMES, *CONDITIONS):
        assert f"`{name}`" in text, name
