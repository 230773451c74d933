"""`frayproof-audit report`: one self-contained HTML page over an audit dataset.

The page holds the run summary, failure tables per check, condition code and compactor, survival
per mutation operator with per-night trend charts, the worst pairs with their findings and the
mutants that survived on them, and the contract text. It loads nothing when opened (inline CSS,
inline SVG charts, one inline script, a Content-Security-Policy that forbids the network), so it
can be mailed, attached to a CI run or opened from disk years later.

`config` holds the options (cheap to import); `data.gather` computes the content with Polars;
`page.render_page` turns it into HTML; `write.write_report` does both and writes the file.
Names are imported on first use, so the command line pays for Polars only when it reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from frayproof_audit.htmlreport.config import ReportConfig, ReportError
    from frayproof_audit.htmlreport.data import ReportData, gather
    from frayproof_audit.htmlreport.page import render_page
    from frayproof_audit.htmlreport.write import write_report

_LAZY = {
    "ReportConfig": "frayproof_audit.htmlreport.config",
    "ReportError": "frayproof_audit.htmlreport.config",
    "ReportData": "frayproof_audit.htmlreport.data",
    "gather": "frayproof_audit.htmlreport.data",
    "render_page": "frayproof_audit.htmlreport.page",
    "write_report": "frayproof_audit.htmlreport.write",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = ["ReportConfig", "ReportData", "ReportError", "gather", "render_page", "write_report"]
