"""Named exceptions: bad input, a contract that rejected output, and its warning form.

`InputError` is a `ValueError` so code written against frayproof's API keeps catching it; it
always means "exit 2", never "the contract failed".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frayproof_audit.report import Report


class InputError(ValueError):
    """A snapshot, record, contract or option could not be read as the format requires."""


class ContractViolation(Exception):
    """Raised by `guard(on_violation="raise")` when the output breaks the contract."""

    def __init__(self, report: Report) -> None:
        super().__init__(report.to_text())
        self.report = report


class ContractWarning(UserWarning):
    """Emitted by `guard(on_violation="warn")` when the output breaks the contract."""
