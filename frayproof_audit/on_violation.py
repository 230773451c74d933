"""What a guard does with a pair that breaks its contract: the one list of choices, shared by
`guard` and the capture recorder behind `guard(record=…)` (neither imports the other for it)."""

from __future__ import annotations

MODES = ("raise", "warn", "log")
"""`raise` a `ContractViolation`, `warn` with a `ContractWarning`, or `log` it."""


def checked_mode(on_violation: str) -> str:
    """`on_violation` itself, or ValueError naming the choices."""
    if on_violation not in MODES:
        raise ValueError(f"on_violation must be one of {', '.join(MODES)}")
    return on_violation
