"""Compute the report and write it, atomically."""

from __future__ import annotations

import os
from pathlib import Path

from frayproof_audit.htmlreport.config import ReportConfig, ReportError
from frayproof_audit.htmlreport.data import ReportData, gather
from frayproof_audit.htmlreport.page import render_page


def write_report(config: ReportConfig) -> ReportData:
    """Compute the report of `config.out` and write it to `config.output` (a temporary name in
    the same folder first, then a rename: a reader never sees half a page)."""
    target = Path(config.output)
    if not target.parent.is_dir():
        raise ReportError(f"cannot write '{config.output}': folder '{target.parent}' does not exist")
    data = gather(config)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(render_page(data), encoding="utf-8")
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return data
