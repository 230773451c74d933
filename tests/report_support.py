"""A small audited dataset for the HTML report tests, with hostile text in the places records
control (compactor names, pair ids) and in the contract, and a parser for the report's tables.

(No tests here: test_report_html and test_report_browser import these.)
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl

from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import CONTRACT_TEXT, line, record, write_jsonl

TITLE_PAYLOAD = "<script>document.title='PWNED'</script>"
HOSTILE_COMPACTOR = f"{TITLE_PAYLOAD}<b>bold</b>"
HOSTILE_PAIR = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">"
CONTRACT = CONTRACT_TEXT + "# </pre><script>document.title='PWNED'</script>\n"
NIGHTS = 3


def build_dataset(folder: Path) -> Path:
    """Three nights of small pairs (good and failing compactors, survivors on passing pairs),
    audited with mutation testing into `folder/out`; returns that folder."""
    corpus = folder / "corpus"
    for night in range(NIGHTS):
        records = [record(night * 100 + i, night=night) for i in range(12)]
        records.append({**record(night * 100 + 50, "keep_all", night), "compactor": HOSTILE_COMPACTOR})
        if night == NIGHTS - 1:
            records.append({**record(night * 100 + 51, "drop_result", night), "pair_id": HOSTILE_PAIR})
        write_jsonl(corpus / f"night{night}.jsonl", [line(r) for r in records])
    contract = folder / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    out = folder / "out"
    audit([str(corpus)], str(contract), str(out), jobs=1, run_id="night-run", fail_on=("none",))
    return out


class TableReader(HTMLParser):
    """Every `table.data` of a page by id: row key → column → `data-value` (or text); and every
    chart (`svg.chart`) by id with its attributes and the values of its points."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, dict[str, str]]] = {}
        self.charts: dict[str, dict[str, Any]] = {}
        self.root: dict[str, str | None] = {}
        self.title = ""
        self._table: str | None = None
        self._row: str | None = None
        self._cell: tuple[str, str | None] | None = None
        self._text: list[str] = []
        self._chart: str | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.root = a
        elif tag == "title" and not self.title and self._chart is None:
            self._in_title = True
        elif tag == "table" and "data" in (a.get("class") or "").split() and a.get("id"):
            self._table = a["id"]
            self.tables[self._table] = {}
        elif tag == "tr" and self._table and a.get("data-key") is not None:
            self._row = a["data-key"]
            self.tables[self._table][self._row] = {}
        elif tag == "td" and self._row is not None and a.get("data-col"):
            self._cell = (a["data-col"], a.get("data-value"))
            self._text = []
        elif tag == "svg" and "chart" in (a.get("class") or "").split():
            self._chart = a["id"]
            self.charts[self._chart] = {"attrs": a, "values": []}
        elif self._chart and "pt" in (a.get("class") or "").split():
            self.charts[self._chart]["values"].append(float(a["data-value"] or "nan"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "td" and self._cell and self._table and self._row is not None:
            column, value = self._cell
            self.tables[self._table][self._row][column] = value if value is not None else "".join(self._text)
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "svg":
            self._chart = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._text.append(data)


def read_page(text: str) -> TableReader:
    reader = TableReader()
    reader.feed(text)
    return reader


def expected_numbers(out: Path) -> dict[str, dict[str, dict[str, float]]]:
    """The numbers the report's main tables must show, computed here from `read_table` on
    their own (not with the report's code)."""
    pairs = read_table(out, "pairs").collect()
    findings = read_table(out, "findings").collect()
    mutants = read_table(out, "mutants").collect()
    checked = pairs.filter(pl.col("status").is_in(["pass", "fail"])).height
    errors = findings.filter(pl.col("severity") == "error")
    checks = {
        name: {"failing_pairs": float(group.select("run_id", "pair_id").unique().height),
               "findings": float(findings.filter(pl.col("check") == name).height),
               "checked": float(checked)}
        for (name,), group in errors.group_by("check")
    }
    compactors = {
        str(name): {"failed": float((group["status"] == "fail").sum()),
                    "passed": float((group["status"] == "pass").sum()),
                    "pairs": float(group.height)}
        for (name,), group in pairs.group_by("compactor") if name is not None
    }
    operators = {
        name: {"survived": float((group["status"] == "survived").sum()),
               "applicable": float(group["status"].is_in(["caught", "survived"]).sum()),
               "skipped": float((group["status"] == "skipped").sum())}
        for (name,), group in mutants.group_by("operator")
    }
    nights = {
        night.isoformat(): {"pairs": float(group.height), "failed": float((group["status"] == "fail").sum())}
        for (night,), group in pairs.group_by("log_date")
    }
    return {"t-checks": checks, "t-compactors": compactors, "t-operators": operators, "t-nights": nights}


def assert_tables_match(reader: TableReader, out: Path) -> None:
    """Every expected number is in the page's tables, exactly."""
    for table_id, rows in expected_numbers(out).items():
        shown = reader.tables[table_id]
        assert set(rows) <= set(shown), (table_id, set(rows) - set(shown))
        for key, columns in rows.items():
            for column, value in columns.items():
                assert float(shown[key][column]) == value, (table_id, key, column, shown[key][column], value)
