"""A new output is one module and one entry in `OUTPUTS` (or `TABLE_OUTPUTS`): nothing else.

`tsv` is written into a temporary folder at test time: a CI output (it has a cap) that writes
one line per result of a result's `Outcome`, and its own line for a command that could not run.
Registered with one line, it is offered by `validate`, `check`, `mutate` and `audit` (and only
by them), shows the lines and rows the command read for it, is capped by its own default and by
`--max-results`, and is what a failing command prints. A plain output (`shout`) reaches every
command that prints a result, and a table output (`rows`) `stats` and `trend`. Rendering reads
no file: what it shows comes in `RenderContext.shown`.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from frayproof_audit.render import OUTPUTS, RenderContext, Shown, render
from frayproof_audit.render.positions import SnapshotLines
from frayproof_audit.render.tables import TABLE_OUTPUTS
from frayproof_audit.shown import read_shown
from tests.corpus_support import BAD_LINES, good_lines, write_jsonl
from tests.helpers import EXAMPLES, FIXTURES, REPO, run_cli

UNREADABLE = [bad for bad, _ in list(BAD_LINES.values())[:3]]

TSV = '''
"""`tsv`: a result's Outcome, one tab-separated line per result (an output for one test)."""

from frayproof_audit.render import Output, Said
from frayproof_audit.render.outcomes import outcome_of
from frayproof_audit.render.tables import TableOutput


def render(result, context):
    outcome = outcome_of(result, context)
    shown = outcome.items[:TSV.limit(context.max_results)]
    rows = ["\\t".join([item.rule, item.place.uri or "", str(item.place.line or ""),
                       item.place.logical or ""]) for item in shown]
    return "\\n".join([f"total\\t{outcome.items_total}", *rows])


def failure(failure):
    return Said(f"failed\\t{failure.command}\\t{failure.message}", failure.line)


TSV = Output("tsv", render, failure, cap=2)
SHOUT = Output("shout", lambda result, context: result.to_text().upper(),
               lambda failure: Said(stderr=failure.line.upper()))
ROWS = TableOutput("rows", lambda table: f"{table.tidy().height} rows")
'''

CHECK = ("check", "--before", FIXTURES / "clean_session.json", "--after",
         FIXTURES / "dropped_constraint.json", "--contract", EXAMPLES / "contract.yaml")


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    folder = tmp_path / "outputs_here"
    folder.mkdir()
    (folder / "tsv_output.py").write_text(textwrap.dedent(TSV), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("tsv_output")
    monkeypatch.setitem(OUTPUTS, "tsv", module.TSV)  # the one line
    monkeypatch.setitem(OUTPUTS, "shout", module.SHOUT)
    monkeypatch.setitem(TABLE_OUTPUTS, "rows", module.ROWS)
    yield module
    sys.modules.pop("tsv_output", None)


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines()]


@pytest.mark.usefixtures("outputs")
def test_check_shows_it_with_the_lines_it_read() -> None:
    done = run_cli(*CHECK, "--format", "tsv", "--max-results", "10", expect=1)
    total, *found = rows(done.stdout)
    assert total == ["total", str(len(found))] and found
    before = str(FIXTURES / "clean_session.json")
    lines = SnapshotLines.from_text(Path(before).read_text("utf-8"))
    for rule, uri, line, logical in found:
        assert rule.startswith("PIN-") or rule.startswith("RET-"), rule
        assert uri == before and line == str(lines.line_of(logical)) and line != "None"
    capped = rows(run_cli(*CHECK, "--format", "tsv", expect=1).stdout)
    assert len(capped) == 1 + 2  # its own cap
    shown = " ".join(run_cli("check", "--help").stdout.split())
    assert "[text|json|sarif|github|junit|codeclimate|tsv|shout]" in shown
    assert "(default: 25000 sarif, 50 github, 20000 junit, 10000 codeclimate, 2 tsv)" in shown


@pytest.mark.usefixtures("outputs")
def test_mutate_shows_its_survivors() -> None:
    done = run_cli("mutate", "--input", FIXTURES / "clean_session.json", "--after",
                   FIXTURES / "legitimate_compaction.json", "--contract", EXAMPLES / "contract.yaml",
                   "--format", "tsv", expect=1)
    assert rows(done.stdout) == [["total", "1"], ["MUT-drop_latest_user",
                                                  str(FIXTURES / "legitimate_compaction.json"),
                                                  "10", "after[2]"]]


@pytest.mark.usefixtures("outputs")
def test_audit_reads_as_many_rows_as_it_shows(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "logs.jsonl", good_lines(6) + UNREADABLE)
    args = ("audit", path, "--out", tmp_path / "out", "--jobs", "1", "--no-mutate",
            "--fail-on", "none", "--run-id", "r1", "--format", "tsv")
    total, *found = rows(run_cli(*args).stdout)
    assert int(total[1]) > 2 and len(found) == 2
    assert all(uri == str(path) and line.isdigit() for _, uri, line, _ in found)
    more = rows(run_cli(*args, "--max-results", "3").stdout)
    assert more[0] == total and len(more) == 1 + 3


@pytest.mark.usefixtures("outputs")
def test_a_command_that_could_not_run_prints_its_failure() -> None:
    for command in (("check", "--before", "nope.json", "--after", FIXTURES / "clean_session.json"),
                    ("audit", "missing.jsonl", "--out", "never-made")):
        done = run_cli(*command, "--format", "tsv", expect=2)
        name, message = command[0], done.stderr.removeprefix("INPUT ERROR: ").strip()
        assert done.stdout == f"failed\t{name}\t{message}\n" and message
    shouted = run_cli("tool-args", "--trace", "nope.json", "--schema", "nope.json",
                      "--format", "shout", expect=2)
    assert shouted.stderr.startswith("INPUT ERROR: ") and shouted.stderr.isupper()


@pytest.mark.usefixtures("outputs")
def test_only_results_with_an_outcome_offer_a_ci_output() -> None:
    refused = run_cli("tool-args", "--trace", "t.json", "--schema", "s.json", "--format", "tsv",
                      expect=2)
    assert "'tsv' is not one of 'text', 'json', 'shout'" in refused.stderr
    for command in (("tool-args", "--trace", EXAMPLES / "tool_args" / "trace.json", "--schema",
                     EXAMPLES / "tool_args" / "tools.json"),
                    ("inspect", FIXTURES / "transcripts" / "openai.json")):
        done = run_cli(*command, "--format", "shout", expect=None)
        plain = run_cli(*command, expect=None)
        assert done.exit_code == plain.exit_code and done.stdout == plain.stdout.upper()


@pytest.mark.usefixtures("outputs")
def test_a_table_output_is_shown_by_stats_and_trend(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "logs.jsonl", good_lines(4))
    run_cli("audit", path, "--out", tmp_path / "out", "--jobs", "1", "--no-mutate", "--fail-on",
            "none")
    for command in ("stats", "trend"):
        done = run_cli(command, tmp_path / "out", "--format", "rows")
        height = len(run_cli(command, tmp_path / "out", "--format", "csv").stdout.splitlines()) - 1
        assert done.stdout == f"{height} rows\n"
        assert run_cli(command, tmp_path / "nowhere", "--format", "rows", expect=2).stdout == ""


def test_a_real_process_registers_it_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "tsv_output.py").write_text(textwrap.dedent(TSV), encoding="utf-8")
    script = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "import tsv_output\n"
        "from frayproof_audit.render import OUTPUTS\n"
        "OUTPUTS['tsv'] = tsv_output.TSV\n"
        "from frayproof_audit.cli import main\n"
        f"main({[str(arg) for arg in CHECK]!r} + ['--format', 'tsv'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert rows(done.stdout)[0][0] == "total" and len(rows(done.stdout)) == 3


def test_table_is_the_old_spelling_of_text(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "logs.jsonl", good_lines(4))
    run_cli("audit", path, "--out", tmp_path / "out", "--jobs", "1", "--no-mutate", "--fail-on",
            "none")
    for command in ("stats", "trend"):
        text = run_cli(command, tmp_path / "out").stdout
        assert run_cli(command, tmp_path / "out", "--format", "table", real=True).stdout == text
        assert run_cli(command, tmp_path / "out", "--format", "text").stdout == text
        assert "[default: text]" in " ".join(run_cli(command, "--help").stdout.split())


def test_the_ci_caps_are_the_outputs_own_defaults() -> None:
    from frayproof_audit.render import codeclimate, github, junit, sarif

    assert {name: output.cap for name, output in OUTPUTS.items() if output.ci} == {
        "sarif": sarif.DEFAULT_MAX_RESULTS, "github": github.DEFAULT_MAX_ANNOTATIONS,
        "junit": junit.DEFAULT_MAX_CASES, "codeclimate": codeclimate.DEFAULT_MAX_ISSUES}


def test_render_shows_what_it_is_given_and_reads_no_file(tmp_path: Path) -> None:
    from frayproof_audit import check

    report = check(FIXTURES / "clean_session.json", FIXTURES / "dropped_constraint.json",
                   EXAMPLES / "contract.yaml")
    nowhere = str(tmp_path / "never-written.json")  # no such file: only `shown` holds its lines
    lines = SnapshotLines.from_text(json.dumps([{"a": 1}] * 3, indent=1))
    context = RenderContext({"before": nowhere, "after": nowhere}, nowhere,
                            shown=Shown({nowhere: lines}, frozenset()))
    document = json.loads(render(report, "sarif", context))
    regions = {r["locations"][0]["physicalLocation"]["region"]["startLine"]
               for r in document["runs"][0]["results"]}
    assert regions == {lines.line_of("before[0]")}
    junit = render(report, "junit", context)
    # no check is on (`enabled` said so): only the checks with findings have a suite
    assert "<testsuite name=\"tool_pair_integrity\"" not in junit
    assert "<testsuite name=\"pinned_content\"" in junit


def test_an_audit_is_rendered_from_the_rows_read_before(tmp_path: Path) -> None:
    from frayproof_audit.corpus import audit
    from frayproof_audit.render.audit_outcome import RowsNotRead

    path = write_jsonl(tmp_path / "logs.jsonl", good_lines(3) + UNREADABLE)
    summary = audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False,
                    fail_on=("none",))
    with pytest.raises(RowsNotRead, match="read them first"):
        render(summary, "github", RenderContext())
    context = read_shown(summary, "github", RenderContext(max_results=50))
    expected = render(summary, "github", context)
    shutil.rmtree(tmp_path / "out")  # the tables are gone: rendering never reads them
    assert render(summary, "github", context) == expected and "::error" in expected
    assert read_shown(summary, "text", RenderContext()) == RenderContext()  # nothing to read
