"""Compute the report and write it: one file, or a folder when the pair pages are many.

One self-contained file holds the report, the list of pairs and every pair's page. With more
than `FOLDER_FROM` pair pages (or when `-o` names a folder), the report is a folder instead:
`index.html` (the report and the list) and `pairs/<key>.html` (a page per pair), each file
self-contained as the single one is; a file name given for it gets a small page linking to the
folder, so a CI job that attaches `report.html` still finds the way. A folder is written beside
the old one and swapped in, and only ever replaces a folder the report wrote itself.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from frayproof_audit.files import write_through
from frayproof_audit.htmlreport.config import FOLDER_FROM, ReportConfig, ReportError
from frayproof_audit.htmlreport.data import ReportData, gather
from frayproof_audit.htmlreport.page import render_page, render_pair_file, render_pointer
from frayproof_audit.htmlreport.pages import PairPage, PairPages, Selected, render_pages, select_pages

MARKER = ".frayproof-report"
"""Written into a report folder: the next report may replace that folder, and only that one."""


@dataclass(frozen=True)
class WrittenReport:
    """What was written: the report's data, its pair pages, and where (`folder` when it is one)."""

    data: ReportData
    pages: PairPages
    path: str
    folder: bool


def write_report(config: ReportConfig) -> ReportData:
    """Compute the report of `config.out` and write it to `config.output`: a file is replaced
    atomically (a reader never sees half a page); a link is written through to its target, a
    FIFO or device into, never replaced by a file."""
    return write_report_pages(config).data


def _wants_folder(output: str) -> bool:
    return output.endswith(("/", os.sep)) or os.path.isdir(output)


def write_report_pages(config: ReportConfig) -> WrittenReport:
    """`write_report`, saying where it went and which pairs got pages."""
    target = Path(config.output.rstrip("/" + os.sep) or config.output)
    if not target.parent.is_dir():
        raise ReportError(f"cannot write '{config.output}': folder '{target.parent}' does not exist")
    if config.max_pairs < 0:
        raise ReportError("--max-pairs must be 0 or more")
    data = gather(config)
    selected = select_pages(config, data)
    if not _wants_folder(config.output) and len(selected.pairs) <= FOLDER_FROM:
        pages = render_pages(selected, data.out, folder=False)
        write_through(config.output, render_page(data, pages).encode("utf-8"))
        return WrittenReport(data, pages, config.output, False)
    wanted = _wants_folder(config.output)
    folder = str(target) if wanted else str(target.with_suffix(""))
    if not wanted and folder == config.output:  # `-o report`, a file without a suffix
        folder += "-report"
    pages = _write_folder(folder, data, selected)
    if not wanted:
        write_through(config.output, render_pointer(data, os.path.relpath(folder, target.parent),
                                                    len(pages.pages)).encode("utf-8"))
    return WrittenReport(data, pages, os.path.join(folder, "index.html"), True)


def _write_folder(folder: str, data: ReportData, selected: Selected) -> PairPages:
    """The report as a folder: each pair's page written as it is drawn, then the index (which
    links them), then the folder swapped in for the old one."""
    if os.path.lexists(folder):
        if not os.path.isdir(folder) or os.path.islink(folder):
            raise ReportError(f"cannot write the report folder '{folder}': it exists and is not a folder")
        if os.listdir(folder) and not os.path.exists(os.path.join(folder, MARKER)):
            raise ReportError(f"cannot write the report folder '{folder}': it holds files the report did "
                              "not write (choose an empty or new folder)")
    parent, name = os.path.split(os.path.abspath(folder))
    fresh = os.path.join(parent, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    os.makedirs(os.path.join(fresh, "pairs"))

    def write(page: PairPage, section: str) -> None:
        with open(os.path.join(fresh, "pairs", f"{page.key}.html"), "w", encoding="utf-8") as handle:
            handle.write(render_pair_file(data, page, section))

    try:
        with open(os.path.join(fresh, MARKER), "w", encoding="utf-8") as handle:
            handle.write("written by frayproof-audit report\n")
        pages = render_pages(selected, data.out, folder=True, write=write)
        with open(os.path.join(fresh, "index.html"), "w", encoding="utf-8") as handle:
            handle.write(render_page(data, pages, folder=True))
        old = None
        if os.path.exists(folder):
            old = os.path.join(parent, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.old")
            os.rename(folder, old)
        os.rename(fresh, folder)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return pages
