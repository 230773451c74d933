"""Findings and the report that owns the verdict, its renderings and its exit code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EXIT_PASS = 0
"""Nothing failed: no violation, no gate tripped."""
EXIT_FAIL = 1
"""Contract violations, or a gate of `audit` failed (its summary says which)."""
EXIT_INPUT_ERROR = 2
"""The command could not run, or ran and could judge nothing: a bad option, contract, input or
output path, an environment fault (a full disk), or an audit that checked no pair at all."""
EXIT_INTERNAL_ERROR = 123
"""An unexpected exception: a bug. One line on stderr, the traceback in a crash log file."""
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT), after cleaning up (128 + 2)."""
EXIT_TERMINATED = 143
"""Stopped by SIGTERM, after cleaning up like Ctrl-C (128 + 15)."""
SCHEMA_VERSION = 1

VIOLATION_FIELDS = (
    "check",
    "code",
    "severity",
    "snapshot",
    "message_index",
    "tool_call_id",
    "pin",
    "rule",
    "message",
)


@dataclass(frozen=True, slots=True)
class Violation:
    """One finding. Fields map one-to-one onto the `findings` table columns."""

    check: str
    severity: str
    snapshot: str
    message_index: int | None
    message: str
    tool_call_id: str | None = None
    pin: str | None = None
    rule: str | None = None
    code: str | None = None
    """The stable condition code (`TP-ORPHAN`, ...): never renamed, only added."""

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in VIOLATION_FIELDS}

    def to_text(self) -> str:
        where = f"{self.snapshot}[{self.message_index}]" if self.message_index is not None else self.snapshot
        code = f" {self.code}" if self.code else ""
        line = f"{self.severity.upper()}{code} {self.check} {where}: {self.message}"
        for name in ("tool_call_id", "pin", "rule"):
            value = getattr(self, name)
            if value is not None:
                line += f" {name}={json.dumps(value, ensure_ascii=False)}"
        return line


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of `validate` or `check`: passed iff no error-severity finding."""

    violations: tuple[Violation, ...] = ()

    @property
    def errors(self) -> int:
        return sum(1 for v in self.violations if v.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for v in self.violations if v.severity == "warning")

    @property
    def passed(self) -> bool:
        return self.errors == 0

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_FAIL

    def error_checks(self) -> list[str]:
        """Distinct checks with an error finding, in order of first appearance."""
        return list(dict.fromkeys(v.check for v in self.violations if v.severity == "error"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "errors": self.errors,
            "passed": self.passed,
            "schema_version": SCHEMA_VERSION,
            "violations": [v.to_dict() for v in self.violations],
            "warnings": self.warnings,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False)

    def to_text(self) -> str:
        head = f"{'PASS' if self.passed else 'FAIL'}: {self.errors} error(s), {self.warnings} warning(s)"
        return "\n".join([head, *(v.to_text() for v in self.violations)])


def input_error_json(message: str) -> str:
    """The one-line envelope printed for an input error in JSON mode."""
    return json.dumps({"schema_version": SCHEMA_VERSION, "error": message}, ensure_ascii=False)
