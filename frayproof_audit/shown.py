"""What a CI output shows beyond its result, read from the files the command was given.

Rendering reads no file (`render/`): a command (or a library caller) reads here, once, what the
chosen output will show, and hands it over in the `RenderContext`: the lines of the snapshot
files the outcome points at (`render.outcomes.lined_files`), the checks the contract runs (the
contract is read again: a result does not hold it), and for an audit the rows of its committed
tables, at most the output's cap of each kind (`corpus.dataset.run_details`). Outputs that are not CI
outputs (`text`, `json`) show the result alone, and nothing is read for them.

    context = read_shown(report, "sarif", RenderContext(files=..., subject=..., contract=...))
    text = render(report, "sarif", context)
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from frayproof_audit.checks import CHECKS
from frayproof_audit.contract import load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.files import read_regular_file
from frayproof_audit.render import get_output
from frayproof_audit.render.ci import RenderContext, Shown
from frayproof_audit.report import Report

if TYPE_CHECKING:
    from frayproof_audit.corpus.dataset.run_details import RunDetails
    from frayproof_audit.render.positions import SnapshotLines

MAX_LINE_FILE_BYTES = 64 * 1024 * 1024
"""Snapshot files larger than this are not re-read for line numbers (logical locations only)."""


def read_shown(result: object, output: str, context: RenderContext) -> RenderContext:
    """`context` with what output `output` shows of `result` read into `context.shown`
    (unchanged for an output that is no CI output). Raises `DatasetError` when an audit's
    tables cannot be read back."""
    chosen = get_output(output)
    if not chosen.ci:
        return context
    # What only a CI output needs, imported when one is chosen (as `render` imports them).
    from frayproof_audit.render.outcomes import lined_files

    lines = {path: snapshot_lines(path) for path in lined_files(result, context)}
    details = _rows(result, chosen.limit(context.max_results))
    return replace(context, shown=Shown(lines, enabled_checks(context.contract), details))


def _rows(result: object, limit: int) -> RunDetails | None:
    """An audit's committed rows (at most `limit` of each kind); None for another result."""
    if isinstance(result, Report):
        return None
    from frayproof_audit.corpus.run.summary import RunSummary  # an audit's: check does not pay

    if not isinstance(result, RunSummary):
        return None
    from frayproof_audit.corpus.dataset.run_details import run_details  # pyarrow

    return run_details(result.out, result.run_id, limit)


def snapshot_lines(path: str) -> SnapshotLines:
    """Where each value of the JSON file at `path` starts; none for a file that cannot be read
    (missing, too large, not UTF-8): its results name their place as a logical location."""
    from frayproof_audit.render.positions import SnapshotLines  # a CI output's only

    try:
        text = read_regular_file(path, MAX_LINE_FILE_BYTES).decode("utf-8-sig")
    except (InputError, OSError, UnicodeDecodeError):
        text = ""
    return SnapshotLines.from_text(text)


def enabled_checks(contract: str | None) -> frozenset[str] | None:
    """Names of the checks the contract runs; None when the contract cannot be read again."""
    try:
        resolved = load_contract(contract)
    except InputError:
        return None
    return frozenset(check.name for check in CHECKS if resolved.settings(check.key).enabled)
