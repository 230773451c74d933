"""The HTML report in a real browser: headless Chromium renders the charts, runs the page's
script (allowed by its Content-Security-Policy), shows the right numbers, runs nothing a
record smuggled in, and takes a screenshot.

Skipped only where Chromium is missing *and* not under CI (`CI` set): CI installs it
(`.ci/run`), so there a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from frayproof_audit.htmlreport import ReportConfig, write_report
from tests.report_support import assert_tables_match, build_dataset, read_page

WIDTH, HEIGHT = 1280, 1800
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser test (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def browser() -> str:
    return _chromium()


@pytest.fixture(scope="module")
def rendered(browser: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """The report of a small dataset, opened once: (dataset, screenshot, DOM after scripts, log)."""
    folder = tmp_path_factory.mktemp("browser")
    out = build_dataset(folder)
    page = folder / "report.html"
    write_report(ReportConfig(str(out), str(page)))
    return (out, *_open(browser, page, folder))


def _open(browser: str, page: Path, folder: Path) -> tuple[Path, str, str]:
    shot = folder / f"{page.stem}.png"
    done = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", f"--window-size={WIDTH},{HEIGHT}",
         f"--screenshot={shot}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return shot, done.stdout, done.stderr


def test_the_page_script_ran_and_every_chart_was_drawn(rendered: tuple[Path, Path, str, str]) -> None:
    _, _, dom, log = rendered
    reader = read_page(dom)
    assert reader.root.get("data-report-ready") == "1"  # the CSP let the page's own script run
    assert "Content Security Policy" not in log  # and blocked nothing of the page's own
    assert len(reader.charts) >= 10
    for name, chart in reader.charts.items():
        attrs = chart["attrs"]
        assert int(attrs["data-drawn-width"]) > 100 and int(attrs["data-drawn-height"]) > 50, name
        assert int(attrs["data-drawn-points"]) == len(chart["values"]) == int(attrs["data-points"]) > 0, name


def test_the_rendered_tables_hold_the_numbers_of_read_table(rendered: tuple[Path, Path, str, str]) -> None:
    out, _, dom, _ = rendered
    assert_tables_match(read_page(dom), out)


def test_nothing_from_a_record_runs(rendered: tuple[Path, Path, str, str]) -> None:
    _, _, dom, _ = rendered
    reader = read_page(dom)
    assert reader.title.startswith("Compaction audit report")
    assert "data-pwned" not in reader.root
    assert "&lt;script&gt;document.title=" in dom  # shown as text, where the record put it


def test_even_a_script_that_slipped_through_escaping_is_blocked(
        browser: str, rendered: tuple[Path, Path, str, str], tmp_path: Path) -> None:
    """Defence in depth: the policy allows only the report's own script, by hash."""
    out, _, _, _ = rendered
    page = tmp_path / "tampered.html"
    write_report(ReportConfig(str(out), str(page)))
    text = page.read_text(encoding="utf-8").replace(
        "<main>", "<main><script>document.title='PWNED'</script>"
                  "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">", 1)
    page.write_text(text, encoding="utf-8")
    _, dom, log = _open(browser, page, tmp_path)
    reader = read_page(dom)
    assert reader.title.startswith("Compaction audit report") and "data-pwned" not in reader.root
    assert "violates the following Content Security Policy directive" in log
    assert reader.root.get("data-report-ready") == "1"


def test_the_screenshot_is_a_real_picture(rendered: tuple[Path, Path, str, str]) -> None:
    _, shot, _, _ = rendered
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (WIDTH, HEIGHT)
    assert len(data) > 50_000  # text, tables and charts, not a blank page
