"""A pytest-friendly assertion; needs no pytest at runtime."""

from __future__ import annotations

from typing import Any

from frayproof_audit.engine import check


def assert_contract(before: Any, after: Any, contract: Any = None) -> None:
    """Raise `AssertionError` with the report text when `after` breaks the contract."""
    report = check(before, after, contract)
    if not report.passed:
        raise AssertionError(report.to_text())
