"""`frayproof-audit report`: the HTML page's numbers, escaping, self-containment and options."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.dataset.selection import MixedContracts
from frayproof_audit.htmlreport import ReportConfig, ReportError, gather, write_report
from frayproof_audit.htmlreport.svg import BandPoint, Point, rate_chart
from tests.corpus_support import line, record, write_jsonl
from tests.helpers import run_cli
from tests.report_support import (
    HOSTILE_COMPACTOR,
    assert_tables_match,
    build_dataset,
    read_page,
)
from tests.trend_support import REGRESSION_NIGHT, build_nights


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_dataset(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def page(dataset: Path) -> str:
    output = dataset.parent / "report.html"
    write_report(ReportConfig(str(dataset), str(output)))
    return output.read_text(encoding="utf-8")


def test_the_tables_hold_the_numbers_of_the_dataset(page: str, dataset: Path) -> None:
    reader = read_page(page)
    assert_tables_match(reader, dataset)
    # every check the contract enables has a row, failing or not
    assert {"structure", "unique_tool_ids"} <= set(reader.tables["t-checks"])
    assert reader.tables["t-checks"]["structure"]["failing_pairs"] == "0"


def test_every_record_controlled_text_is_escaped(page: str) -> None:
    assert page.count("<script>") == 1  # the report's own, at the end
    assert page.count("<script") == 1
    assert "<img" not in page and "<b>bold" not in page
    assert "&lt;script&gt;document.title=&#x27;PWNED&#x27;&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page
    assert "&lt;img src=x onerror=&quot;" in page
    assert "# &lt;/pre&gt;&lt;script&gt;" in page  # the contract's comment
    reader = read_page(page)
    assert HOSTILE_COMPACTOR in reader.tables["t-compactors"]  # read back as text, intact


def test_the_page_needs_nothing_from_anywhere(page: str) -> None:
    assert re.search(r"\s(src|href)=\"(?!#)", page) is None  # no file, URL or data fetched
    assert "<link" not in page and "@import" not in page and "url(" not in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None and "default-src &#x27;none&#x27;" in policy.group(1)


def test_worst_pairs_show_findings_and_the_survivors_with_their_rule(page: str, dataset: Path) -> None:
    failing = page.split('id="worst-failing"', 1)[1].split('id="worst-blind"', 1)[0]
    assert "TP-UNANSWERED" in failing or "TP-ORPHAN" in failing
    blind = page.split('id="worst-blind"', 1)[1].split('id="contract"', 1)[0]
    survivors = (read_table(dataset, "mutants").filter(pl.col("status") == "survived").collect())
    assert survivors.height > 0
    first = survivors.row(0, named=True)
    assert "contract rule that would catch it" in blind
    assert "retain.recent_exchanges" in blind or survivors["reason"][0].split(";")[0] in blind
    assert any(site in blind for row in survivors.iter_rows(named=True) for site in row["sites"])
    assert first["operator"] in blind


def test_charts_have_one_point_per_night_with_data(page: str) -> None:
    reader = read_page(page)
    trend = reader.charts["chart-nights-0"]
    assert trend["attrs"]["data-points"] == "3" and len(trend["values"]) == 3
    operators = [c for name, c in reader.charts.items() if name.startswith("chart-operator-trends-")]
    assert operators and all(len(c["values"]) == 3 for c in operators)
    assert all(0 <= v <= 1 for c in reader.charts.values() for v in c["values"])


def test_worst_caps_and_compactor_filter(dataset: Path, tmp_path: Path) -> None:
    data = gather(ReportConfig(str(dataset), str(tmp_path / "r.html"), worst=1, compactors=("drop_result",)))
    assert len(data.failing_pairs) == 1 and data.failing_total > 1
    assert set(data.compactors["compactor"].to_list()) == {"drop_result"}
    assert data.totals.passed == 0 and data.totals.failed == data.failing_total
    last = gather(ReportConfig(str(dataset), str(tmp_path / "r.html"), since=date(2025, 6, 4)))
    assert last.nights["log_date"].to_list() == [date(2025, 6, 4)]
    assert [n.night for n in last.operator_trends[0].nights] == [date(2025, 6, 4)]
    with pytest.raises(ReportError, match="no committed run with pairs in those days"):
        gather(ReportConfig(str(dataset), str(tmp_path / "r.html"), since=date(2030, 1, 1)))
    with pytest.raises(ReportError, match="no pairs of compactor 'nope'"):
        gather(ReportConfig(str(dataset), str(tmp_path / "r.html"), compactors=("nope",)))


def test_runs_of_different_contracts_are_never_added_up(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "in" / "a.jsonl", [line(record(i)) for i in range(8)])
    strict = tmp_path / "strict.yaml"
    strict.write_text("version: 1\nchecks:\n  structure: false\n", encoding="utf-8")
    out = tmp_path / "out"
    audit([str(tmp_path / "in")], None, str(out), jobs=1, run_id="old", fail_on=("none",), mutate=False)
    audit([str(tmp_path / "in")], str(strict), str(out), jobs=1, run_id="new", fail_on=("none",),
          mutate=False)
    data = gather(ReportConfig(str(out), str(tmp_path / "r.html")))
    assert data.runs["run_id"].to_list() == ["new"] and data.left_out == ("old",)
    assert data.totals.pairs == 8
    with pytest.raises(MixedContracts, match="2 different contracts"):
        gather(ReportConfig(str(out), str(tmp_path / "r.html"), runs=("old", "new")))
    assert gather(ReportConfig(str(out), str(tmp_path / "r.html"), runs=("old",))).left_out == ()
    result = run_cli("report", out, "-o", tmp_path / "r.html")
    assert "left out 1 run(s) of 1 other contract(s)" in result.stderr and ": old);" in result.stderr
    assert 'id="left-out"' in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_cli_writes_the_page_and_refuses_bad_input(dataset: Path, tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    result = run_cli("report", dataset, "-o", target, "--worst", "3", "--baseline", "2",
                     "--since", "2025-06-03", real=True)
    assert result.stdout == (f"Wrote {target}: 1 run(s), 27 pairs, nights 2025-06-03 to 2025-06-04, "
                             "27 pair page(s)\n")
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert "no committed run 'x'" in run_cli("report", dataset, "-o", target, "--run", "x", expect=2).stderr
    assert "not a folder" in run_cli("report", tmp_path / "none", "-o", target, expect=2).stderr
    assert "does not exist" in run_cli("report", dataset, "-o", tmp_path / "no" / "r.html", expect=2).stderr
    empty = tmp_path / "empty"
    shutil.copytree(dataset, empty)
    shutil.rmtree(empty / "runs")
    (empty / "runs").mkdir()
    assert "no committed run" in run_cli("report", empty, "-o", target, expect=2).stderr


labels = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(labels, st.one_of(st.none(), st.floats(0, 1))), min_size=1, max_size=8), labels)
def test_a_chart_is_well_formed_svg_whatever_its_text(values: list[tuple[str, float | None]],
                                                      title: str) -> None:
    points = [Point(label, value, note=label) for label, value in values]
    band = [BandPoint(0.1, 0.05, 0.2)] * len(points)
    svg = rate_chart("c", title, points, band)
    root = ET.fromstring(svg)  # parses: every text escaped
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    assert [float(c.get("data-value") or "nan") for c in circles] == [v for _, v in values if v is not None]
    assert (root.find("{http://www.w3.org/2000/svg}text").text or "") == title  # type: ignore[union-attr]


def test_the_planted_regression_is_named_and_drawn_red(tmp_path: Path) -> None:
    """Seven nights, 10% failing, a three-pair night of noise, then 60% of the latest night's
    pairs failing tool_pair_integrity: exactly that night and check are flagged."""
    out = build_nights(tmp_path)
    page = tmp_path / "r.html"
    data = write_report(ReportConfig(str(out), str(page)))
    assert data.gate is not None
    assert [(r.kind, r.name, r.period) for r in data.gate.regressions] == [
        ("check", "tool_pair_integrity", REGRESSION_NIGHT)]
    flagged = [(s.name, n.night.isoformat()) for s in (*data.check_trends, *data.operator_trends)
               for n in s.nights if n.worse]
    assert flagged == [("tool_pair_integrity", REGRESSION_NIGHT)]  # the noisy night is not
    text = page.read_text(encoding="utf-8")
    assert text.count('class="pt worse"') == 1
    assert "tool_pair_integrity: failure rate 60.0% on 2025-06-08" in text
    margin = gather(ReportConfig(str(out), str(page), points=60))  # +50 points is not more than 60
    assert margin.gate is not None and margin.gate.regressions == ()
    assert not [n for s in margin.check_trends for n in s.nights if n.worse]
