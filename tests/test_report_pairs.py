"""The report's pair pages as written (no browser): the cap worst first and said, the size of a
page bounded whatever the session's size, the file growing linearly with the pages, a large
selection written as a folder that never replaces someone else's, record text escaped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frayproof_audit.corpus import audit
from frayproof_audit.htmlreport import ReportConfig, ReportError
from frayproof_audit.htmlreport import write as report_write
from frayproof_audit.htmlreport.pair_page import MAX_FINDINGS, MAX_ROWS, PAGE_CHARS, PREVIEW_CHARS, anchor_id
from frayproof_audit.htmlreport.write import MARKER, write_report_pages
from frayproof_audit.pairview.stored import show_stored
from tests.corpus_support import CONTRACT_TEXT, line, record, write_jsonl
from tests.helpers import call, result, run_cli, system, user
from tests.pair_pages_support import HOSTILE_PAIR, HOSTILE_TEXT, PairsDataset, build_pairs_dataset

PAGE_BUDGET = 192 * 1024
"""Bytes one pair page may take, whatever its session (as `benchmarks/bench_report.py` checks)."""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> PairsDataset:
    return build_pairs_dataset(tmp_path_factory.mktemp("pairs"))


@pytest.fixture(scope="module")
def uniform(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sixteen failing pairs of one shape (the same compaction of the same session)."""
    folder = tmp_path_factory.mktemp("uniform")
    write_jsonl(folder / "in" / "a.jsonl", [line(record(i, "drop_result")) for i in range(16)])
    (folder / "contract.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")
    audit([str(folder / "in")], str(folder / "contract.yaml"), str(folder / "out"), jobs=1, run_id="u",
          fail_on=("none",), mutate=False)
    return folder / "out"


def _section(page: str, pair_id: str) -> str:
    opening = f'<section class="view pairpage" id="p[0-9a-f]+" data-pair="{re.escape(pair_id)}"'
    found = re.search(opening, page)
    assert found is not None, pair_id
    return page[found.start():page.index("</section>", found.start())]


def test_the_cap_keeps_the_worst_pairs_and_says_how_many_of_how_many(
        dataset: PairsDataset, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    done = run_cli("report", dataset.out, "-o", target, "--max-pairs", "3", "--source-root", dataset.root)
    assert done.stdout.endswith(", 3 of 7 (--max-pairs 3) pair page(s)\n")
    page = target.read_text(encoding="utf-8")
    assert page.count('<section class="view pairpage"') == 3
    assert ("3 of the 7 pairs worth a page have one (worst first, <code>--max-pairs 3</code>): 3 of 7 "
            "failing, 0 of 0 passing") in page
    none = write_report_pages(ReportConfig(str(dataset.out), str(target), max_pairs=0))
    assert none.pages.pages == () and none.pages.candidates == 7


def test_every_page_is_read_back_and_the_cli_says_when_an_input_is_gone(
        dataset: PairsDataset, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    written = write_report_pages(ReportConfig(str(dataset.out), str(target), source_root=str(dataset.root)))
    assert {page.state for page in written.pages.pages} == {"found"}
    done = run_cli("report", dataset.out, "-o", target, cwd=tmp_path)  # relative sources: not found here
    assert "note: 7 pair page(s) show no messages: their input is gone or changed" in done.stderr
    page = target.read_text(encoding="utf-8")
    assert "Messages not shown: &#x27;corpus.jsonl&#x27; no longer exists" in page


def test_record_text_is_escaped_wherever_it_lands(dataset: PairsDataset, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    write_report_pages(ReportConfig(str(dataset.out), str(target), source_root=str(dataset.root)))
    page = target.read_text(encoding="utf-8")
    assert page.count("<script") == 1 and page.count("<style") == 1 and "<img" not in page
    assert re.search(r'<[a-z]+[^<>]*\s(href|src)="javascript:', page) is None  # only ever text
    assert HOSTILE_TEXT not in page
    section = _section(page, HOSTILE_PAIR)
    escaped = ("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/style&gt;&lt;img src=x onerror=\"document."
               "documentElement.setAttribute('data-pwned','1')\"&gt;&lt;a href=\"javascript:alert(2)\"&gt;"
               "x&lt;/a&gt;")
    assert section.count(escaped) >= 2  # the tool result and the latest user message, as text
    assert re.search(r'data-f="[^"<>]*"', page)  # the filter data, an attribute escaped


def _session(exchanges: int, size: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [system()]
    for number in range(exchanges):
        messages += [user(f"question {number}"), call(f"c{number}"),
                     result(f"c{number}", f"{number:05d} " + "x" * size)]
    return messages


def test_a_page_stays_under_its_budget_whatever_the_size_of_its_session(tmp_path: Path) -> None:
    """500 exchanges of 3 KB results (1.5 MB a snapshot); the compaction keeps every other
    message, so no stretch is long enough to fold, and strands one result."""
    before = _session(500, 3000)
    after = [m for k, m in enumerate(before) if k % 2 == 0 or k < 4]
    write_jsonl(tmp_path / "in" / "big.jsonl", [line({"pair_id": "big", "before": before, "after": after})])
    (tmp_path / "contract.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")
    audit([str(tmp_path / "in")], str(tmp_path / "contract.yaml"), str(tmp_path / "out"), jobs=1,
          run_id="big", fail_on=("none",), mutate=False)
    target = tmp_path / "r.html"
    written = write_report_pages(ReportConfig(str(tmp_path / "out"), str(target)))
    (page,) = written.pages.pages
    (shown,) = show_stored(tmp_path / "out", "big").shown  # the view the page was drawn from
    assert page.state == shown.state == "found" and len(shown.view.rows) == len(before)
    report = target.read_text(encoding="utf-8")
    section = _section(report, "big")
    assert len(section.encode("utf-8")) < PAGE_BUDGET
    assert section.count('<tr class="r-') <= MAX_ROWS  # drawn rows (no change notes: nothing changed)
    assert "more messages, not drawn on this page (it draws at most" in section
    assert page.findings == len(shown.view.findings) == 499
    assert section.count('<li id="') == MAX_FINDINGS
    more = page.findings - MAX_FINDINGS
    assert f"… and {more:,} more findings, not listed or marked on this page" in section
    assert f"frayproof-audit show {tmp_path / 'out'} big --run big --full" in section
    texts = sum(len(text) for text in re.findall(r'<pre class="t">([^<]*)</pre>', section))
    assert texts <= PAGE_CHARS + MAX_ROWS * PREVIEW_CHARS
    # every finding listed is drawn where it is, with its mark, and links there
    for item in shown.view.findings[:MAX_FINDINGS]:
        assert item.anchor is not None
        place = anchor_id(page.key, item.anchor)
        assert f'id="{place}"' in section and f'href="#{place}"' in section
        assert f'href="#{page.key}-{item.ref}" title=' in section


def test_the_file_grows_linearly_with_the_pages_shown(uniform: Path, tmp_path: Path) -> None:
    sizes = {}
    for count in (2, 4, 8, 16):
        target = tmp_path / f"r{count}.html"
        write_report_pages(ReportConfig(str(uniform), str(target), max_pairs=count))
        sizes[count] = target.stat().st_size
    steps = [(sizes[b] - sizes[a]) / (b - a) for a, b in ((2, 4), (4, 8), (8, 16))]
    assert max(steps) / min(steps) < 1.05, steps  # every page costs the same
    assert steps[0] < 12 * 1024  # a small pair's page is small


def test_a_large_selection_is_a_folder_that_never_replaces_another(uniform: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_write, "FOLDER_FROM", 4)
    target = tmp_path / "report.html"
    written = write_report_pages(ReportConfig(str(uniform), str(target)))
    folder = tmp_path / "report"
    assert written.folder and Path(written.path) == folder / "index.html"
    assert sorted(p.name for p in folder.iterdir()) == [MARKER, "index.html", "pairs"]
    assert len(list((folder / "pairs").glob("p*.html"))) == 16
    pointer = target.read_text(encoding="utf-8")
    assert 'href="report/index.html"' in pointer and "With 16 pair pages this report is a folder" in pointer
    index = (folder / "index.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'href="pairs/(p[0-9a-f]+\.html)"', index))
    assert linked == {p.name for p in (folder / "pairs").iterdir()} and len(linked) == 16
    assert '<section class="view pairpage"' not in index
    page = next((folder / "pairs").glob("p*.html")).read_text(encoding="utf-8")
    assert 'href="../index.html#pairs"' in page and page.count("<script") == 1
    again = write_report_pages(ReportConfig(str(uniform), str(target), max_pairs=5))  # replaces its own
    assert again.folder and len(list((folder / "pairs").iterdir())) == 5
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report.")]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ReportError, match="holds files the report did not write"):
        write_report_pages(ReportConfig(str(uniform), str(foreign) + "/"))
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_folder_named_with_or_without_its_slash_is_written_again(uniform: Path, tmp_path: Path) -> None:
    """`-o site/` makes the folder; `-o site/` or `-o site` again rewrites that folder (it
    exists: neither refused as a directory nor written beside it as `site-report`)."""
    site = tmp_path / "site"
    for output in (f"{site}/", f"{site}/", str(site)):
        done = run_cli("report", uniform, "-o", output, "--max-pairs", "3")
        assert done.stdout.startswith(f"Wrote {site / 'index.html'} (a folder): ")
        assert done.stdout.endswith(", 3 of 16 (--max-pairs 3) pair page(s)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert len(list((site / "pairs").iterdir())) == 3
