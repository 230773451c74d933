"""The report's options, apart from the code that needs Polars (the CLI imports only this)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from frayproof_audit.corpus.store.failure_rule import DEFAULT_BLAME, Blame
from frayproof_audit.errors import InputError

DEFAULT_WORST = 20
DEFAULT_BASELINE = 7
DEFAULT_MAX_PAIRS = 1000
FOLDER_FROM = 2000
"""More pair pages than this go into a folder (`index.html` and one file per pair), not one file."""


class ReportError(InputError):
    """The report cannot be made: no runs, an unknown run or compactor (exit 2)."""


@dataclass(frozen=True, slots=True)
class ReportConfig:
    """What `frayproof-audit report` was asked for."""

    out: str
    output: str
    runs: tuple[str, ...] = ()
    """Only these runs (default: every run judged with the latest run's contract)."""
    contract: str | None = None
    """`latest`, `all` or a fingerprint: which contract's runs count (`corpus.dataset.selection`)."""
    compactors: tuple[str, ...] = ()
    """Only pairs of these compactors (default: all)."""
    since: date | None = None
    """Only rows with `log_date` on or after this day."""
    until: date | None = None
    """Only rows with `log_date` on or before this day."""
    worst: int = DEFAULT_WORST
    """How many failing pairs, and how many passing pairs with survivors, to show in detail."""
    baseline: int = DEFAULT_BASELINE
    """Earlier nights whose median a night is compared with."""
    points: float = 0.0
    """A night is flagged as a regression only when worse than its baseline by more than this
    many percentage points (as `trend --fail-on-regression P` judges), and beyond noise."""
    max_pairs: int = DEFAULT_MAX_PAIRS
    """Pairs that get a page of their own (worst first); the page says how many of how many."""
    source_root: str | None = None
    """Where the dataset's relative `source` paths are found (None: the current folder)."""
    blame: Blame = DEFAULT_BLAME
    """Which failing pairs and findings count (`corpus.store.failure_rule`)."""
