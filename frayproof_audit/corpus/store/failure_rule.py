"""The one rule that decides whether a pair counts as the compactor's failure, for the audit's
gates (`Tally`, `RunSummary`) and for every reading of a dataset (`stats`, `trend`, `report`):
`counts_as_failure` and `counts_finding` for Python, `failure_expr` and `counted_findings` for
Polars, the same rules.

Under `--blame introduced` (the default) a failing pair counts only when the compactor introduced
an error (`pairs.introduced_errors > 0`), and only introduced findings count towards a check's or
a code's rate; under `--blame all`, frayproof's reading, every failing pair and every finding
counts. Rows written before blame existed (tables schema < 6: `introduced_errors` and `origin`
null) count as introduced: nothing says otherwise. `pairs.status` is frayproof's verdict under
both readings.

Its own module, with Polars imported only by the expressions, so the workers never load it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from frayproof_audit.blame import INTRODUCED
from frayproof_audit.corpus.store.pair_status import PairStatus

if TYPE_CHECKING:
    import polars as pl


class Blame(StrEnum):
    INTRODUCED = "introduced"
    """A pair counts as a failure when the compactor introduced an error (the default)."""
    ALL = "all"
    """frayproof's reading: every failing pair counts, whatever before already held."""


BLAMES = tuple(blame.value for blame in Blame)
DEFAULT_BLAME = Blame.INTRODUCED


def counts_as_failure(status: str, introduced_errors: int | None, blame: Blame) -> bool:
    """Whether a pair of this status and introduced error count is the compactor's failure."""
    if status != PairStatus.FAIL:
        return False
    return blame is Blame.ALL or introduced_errors is None or introduced_errors > 0


def counts_finding(origin: str | None, blame: Blame) -> bool:
    """Whether a finding of this origin counts towards its check's and code's failures."""
    return blame is Blame.ALL or origin is None or origin == INTRODUCED


def failure_expr(blame: Blame) -> pl.Expr:
    """`counts_as_failure` over a frame of `pairs` rows (`status`, `introduced_errors`)."""
    import polars as pl

    failed = pl.col("status") == PairStatus.FAIL
    if blame is Blame.ALL:
        return failed
    introduced = pl.col("introduced_errors")
    return failed & (introduced.is_null() | (introduced > 0))


def inherited_expr(blame: Blame) -> pl.Expr:
    """Failing pairs that do not count as failures under `blame`: every error of theirs was
    already in before (always false under `all`)."""
    import polars as pl

    return (pl.col("status") == PairStatus.FAIL) & ~failure_expr(blame)


def counted_findings(blame: Blame) -> pl.Expr:
    """`counts_finding` over a frame of `findings` rows (`origin`)."""
    import polars as pl

    if blame is Blame.ALL:
        return pl.lit(True)
    origin = pl.col("origin")
    return origin.is_null() | (origin == INTRODUCED)
