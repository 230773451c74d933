"""`RunStatus`: what a committed run's numbers are worth, the values of `runs.status` (schema 5).

Its own module so readers can use it without importing pyarrow.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    OK = "ok"
    """At least one pair was checked (or an incremental run found nothing new to read)."""
    FAILED = "failed"
    """Nothing could be checked: every record was an input or engine error (the run exited 2).
    Committed so its rows say why, and left out of `stats`, `trend` and `report` unless named
    with `--run`."""


def derived_status(status: str | None, pairs: int, passed: int, failed: int) -> RunStatus:
    """A run's status: its `runs.status`, or for a run written before the column (tables schema
    1–4) the same rule read from its counts (records read, none of them checked: failed)."""
    if status is not None:
        return RunStatus(status)
    return RunStatus.FAILED if pairs > 0 and passed + failed == 0 else RunStatus.OK
