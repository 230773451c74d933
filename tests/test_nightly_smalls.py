"""The smaller items of issue 27 (item 7 / problem 8), through the real CLI: `inspect`,
`repair` and `compact` read a user's own log layout (`--field`, `--config`), `--repair-out`
says what it wrote, JUnit lists no suite for a check never enabled, GitLab Code Quality output
beside JUnit, the Makefile's and README's install paths."""

from __future__ import annotations

import json
from pathlib import Path

from tests.corpus_support import line, record, write_jsonl
from tests.helpers import REPO, run_cli


def _own_layout(folder: Path) -> Path:
    """Records that keep the compacted transcript at `response.messages`, the id at `trace.id`:
    two broken by dropping a tool result, one fine."""
    records = []
    for index, compactor in enumerate(("drop_result", "keep_all", "drop_result")):
        rec = record(index, compactor)
        records.append({"trace": {"id": rec["pair_id"]}, "response": {"messages": rec["after"]}})
    return write_jsonl(folder / "own.jsonl", [line(rec) for rec in records])


def test_inspect_repair_and_compact_read_a_mapped_layout(tmp_path: Path) -> None:
    logs = _own_layout(tmp_path)
    unmapped = run_cli("inspect", logs, expect=2)
    assert "Cannot tell the input format" in unmapped.stdout + unmapped.stderr
    mapped = ("--field", "after=response.messages", "--field", "pair_id=trace.id")
    inspected = run_cli("inspect", logs, *mapped, "--format", "json", expect=1, real=True)
    report = json.loads(inspected.stdout)
    assert (report["checked"], report["invalid"], report["skipped"]) == (3, 2, 0)
    config = tmp_path / "map.yaml"
    config.write_text("fields:\n  after: response.messages\n  pair_id: trace.id\n", encoding="utf-8")
    repaired = run_cli("repair", logs, "--config", config, "-o", tmp_path / "fixed.jsonl")
    lines = [json.loads(text) for text in (tmp_path / "fixed.jsonl").read_text().splitlines()]
    assert [(row["pair_id"], row["status"]) for row in lines] == [
        ("p0000", "changed"), ("p0001", "unchanged"), ("p0002", "changed")]
    assert "changed" in repaired.stdout
    again = run_cli("inspect", tmp_path / "fixed.jsonl", expect=0)  # the output reads back as is
    assert json.loads(run_cli("inspect", tmp_path / "fixed.jsonl", "--format", "json").stdout)[
        "invalid"] == 0 and again.exit_code == 0
    compacted = run_cli("compact", logs, *mapped, "--max-tokens", "100000", expect=1, real=True)
    rows = [json.loads(text) for text in compacted.stdout.splitlines()]
    assert [(row["pair_id"], row["status"]) for row in rows] == [
        ("p0000", "refused"), ("p0001", "unchanged"), ("p0002", "refused")]
    assert "already invalid (dangling_call): repair it first" in rows[0]["reason"]


def test_a_mapped_after_no_record_has_is_named_per_record(tmp_path: Path) -> None:
    logs = _own_layout(tmp_path)
    done = run_cli("inspect", logs, "--field", "after=response.mesages", expect=2)
    assert ("no transcript at `response.mesages` (--field after=response.mesages); the record has"
            " top-level keys: response, trace") in done.stdout + done.stderr
    bad = run_cli("repair", logs, "--field", "nope=x", expect=2)
    assert "unknown field 'nope'" in bad.stderr


def test_repair_out_says_how_many_files_and_records_it_wrote(tmp_path: Path) -> None:
    from tests.corpus_support import good_lines, write_contract

    contract = write_contract(tmp_path)
    write_jsonl(tmp_path / "logs" / "a.jsonl", good_lines(8))
    write_jsonl(tmp_path / "logs" / "b.jsonl", good_lines(4, start=10))
    args = ("audit", tmp_path / "logs", "--contract", contract, "--out", tmp_path / "out",
            "--no-mutate", "--jobs", "1", "--repair-out", tmp_path / "fixed")
    done = run_cli(*args, expect=1, real=True)
    written = sorted((tmp_path / "fixed").glob("repaired-*.jsonl"))
    records = sum(len(path.read_text().splitlines()) for path in written)
    assert (len(written), records) == (2, 3)  # p0002, p0006; p0010
    assert (f"  --repair-out: 3 repaired after snapshot(s) in 2 file(s) written to"
            f" {tmp_path / 'fixed'}") in done.stdout
    summary = json.loads(run_cli(*args, "--format", "json", expect=1).stdout)
    assert summary["repair_out"] == {"folder": str(tmp_path / "fixed"), "files": 2, "records": 3}
    write_jsonl(tmp_path / "logs" / "a.jsonl", [line(record(0, "keep_all"))])
    (tmp_path / "logs" / "b.jsonl").unlink()
    clean = run_cli(*args, expect=0)
    assert (f"  --repair-out: no failing pair a repair fixes completely; nothing written to"
            f" {tmp_path / 'fixed'}") in clean.stdout


def test_junit_lists_no_suite_for_a_check_never_enabled(tmp_path: Path) -> None:
    from tests.corpus_support import good_lines, write_contract

    write_jsonl(tmp_path / "logs.jsonl", good_lines(8))
    done = run_cli("audit", tmp_path / "logs.jsonl", "--contract", write_contract(tmp_path), "--out",
                   tmp_path / "out", "--no-mutate", "--jobs", "1", "--format", "junit", expect=1,
                   real=True)
    assert '<testsuite name="tool_pair_integrity" tests="8" failures="2"' in done.stdout
    assert '<testsuite name="provider_validity"' not in done.stdout
    assert 'name="tool_call_integrity"' not in done.stdout and "off in the contract" not in done.stdout


def test_codeclimate_output_is_a_gitlab_code_quality_report(tmp_path: Path) -> None:
    from tests.corpus_support import good_lines, write_contract

    write_jsonl(tmp_path / "logs.jsonl", good_lines(8))
    args = ("audit", tmp_path / "logs.jsonl", "--contract", write_contract(tmp_path), "--out",
            tmp_path / "out", "--no-mutate", "--jobs", "1", "--format", "codeclimate")
    issues = json.loads(run_cli(*args, expect=1, real=True).stdout)
    assert len(issues) >= 4 and {issue["severity"] for issue in issues} == {"major"}
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["location"]["path"] == str(tmp_path / "logs.jsonl")
        assert type(issue["location"]["lines"]["begin"]) is int
    assert len({issue["fingerprint"] for issue in issues}) == len(issues)
    lines = {issue["location"]["lines"]["begin"] for issue in issues}
    assert lines == {3, 4, 7, 8}  # the failing records' lines (p0002, p0003, p0006, p0007)
    again = json.loads(run_cli(*args, "--run-id", "again", expect=1).stdout)
    assert [issue["fingerprint"] for issue in again] == [issue["fingerprint"] for issue in issues]
    capped = json.loads(run_cli(*args, "--max-results", "2", expect=1).stdout)
    assert len(capped) == 2 and capped[-1]["severity"] == "info"
    assert "left out (the output is capped)" in capped[-1]["description"]
    failed = run_cli("check", "--before", tmp_path / "nope.json", "--after", tmp_path / "nope.json",
                     "--format", "codeclimate", expect=2)
    [issue] = json.loads(failed.stdout)
    assert issue["severity"] == "critical" and issue["description"].startswith("INPUT ERROR")


def _make(folder: Path, target: str) -> list[str]:
    """The commands `make -n TARGET` would run in a copy of the Makefile."""
    import shutil
    import subprocess

    done = subprocess.run(["make", "-n", target], cwd=folder, capture_output=True, text=True,
                          timeout=60, check=True)
    assert shutil.which("make")
    return done.stdout.splitlines()


def test_make_demo_installs_only_the_demo_extra_and_make_test_the_rest(tmp_path: Path) -> None:
    import shutil
    import tomllib

    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    demo = _make(tmp_path, "demo")
    installs = [command for command in demo if "pip install" in command and "-e" in command]
    assert installs == [".venv/bin/python -m pip install --quiet --no-compile -e '.[demo]'"]
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {name.split(">")[0] for name in extras["demo"]} == {"matplotlib", "duckdb"}
    # after the demo's install (its stamp newer than pyproject.toml), `make test` installs dev
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(shutil.which("true") or "/bin/true")
    (tmp_path / ".venv" / ".installed-demo").touch()
    test = _make(tmp_path, "test")
    assert ".venv/bin/python -m pip install --quiet --no-compile -e '.[dev,plot]'" in test
    assert any(command.startswith(".venv/bin/pytest") for command in test)
    (tmp_path / ".venv" / ".installed").touch()  # after the full install: the demo installs nothing
    assert not [command for command in _make(tmp_path, "demo") if "pip install" in command]
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_the_readme_installs_from_a_checkout_or_a_wheel() -> None:
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"pip install '?frayproof-audit(\[|'|\s|$)", readme)
    assert "python -m pip install -e '.[plot]'" in readme
    assert "python -m pip wheel --no-deps -w dist ." in readme
    assert "not published on PyPI" in readme
