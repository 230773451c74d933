"""Compute the report and write it through `files.write_through`."""

from __future__ import annotations

from pathlib import Path

from frayproof_audit.files import write_through
from frayproof_audit.htmlreport.config import ReportConfig, ReportError
from frayproof_audit.htmlreport.data import ReportData, gather
from frayproof_audit.htmlreport.page import render_page


def write_report(config: ReportConfig) -> ReportData:
    """Compute the report of `config.out` and write it to `config.output`: a file is replaced
    atomically (a reader never sees half a page); a link is written through to its target, a
    FIFO or device into, never replaced by a file."""
    target = Path(config.output)
    if not target.parent.is_dir():
        raise ReportError(f"cannot write '{config.output}': folder '{target.parent}' does not exist")
    data = gather(config)
    write_through(config.output, render_page(data).encode("utf-8"))
    return data
