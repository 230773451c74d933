"""CI outputs (`--format sarif|github|junit`) of check, mutate and audit.

SARIF is validated against the official OASIS SARIF 2.1.0 schema (tests/data), JUnit is read
with junitparser and with xml.etree, and GitHub workflow commands are decoded back.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped

from frayproof_audit.checks import CHECKS
from frayproof_audit.corpus.dataset.run_details import run_details
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.mutate.operators import OPERATOR_TABLE
from frayproof_audit.render.github import command, escape_data, escape_property
from frayproof_audit.render.positions import SnapshotLines, parse_label
from tests.corpus_support import BAD_LINES, good_lines, record, write_contract, write_jsonl, write_parquet
from tests.helpers import EXAMPLES, FIXTURES, run_cli

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)
CHECK_ARGS = ("check", "--before", FIXTURES / "clean_session.json",
              "--after", FIXTURES / "dropped_constraint.json", "--contract", EXAMPLES / "contract.yaml")
MUTATE_ARGS = ("mutate", "--input", FIXTURES / "mutation_session.json",
               "--target", EXAMPLES / "mutation_compactor.py:compact",
               "--contract", EXAMPLES / "weak_contract.yaml")
FORMATS = ("sarif", "github", "junit")


def sarif(text: str) -> dict[str, Any]:
    document = json.loads(text)
    errors = sorted(VALIDATOR.iter_errors(document), key=str)
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return document


def results(document: dict[str, Any]) -> list[dict[str, Any]]:
    (run,) = document["runs"]
    return list(run["results"])


def junit(text: str) -> JUnitXml:
    ET.fromstring(text.encode("utf-8"))  # well-formed for the standard library too
    return JUnitXml.fromstring(text.encode("utf-8"))


def outcome(case: Any) -> str:
    kinds = {type(entry) for entry in case.result}
    return ("failure" if Failure in kinds else "error" if Error in kinds
            else "skipped" if Skipped in kinds else "passed")


# ---- check ----------------------------------------------------------------------------------

def test_check_sarif_validates_and_points_at_the_message_line() -> None:
    ran = run_cli(*CHECK_ARGS, "--format", "sarif", expect=1)
    document = sarif(ran.stdout)
    driver = document["runs"][0]["tool"]["driver"]
    ids = [rule["id"] for rule in driver["rules"]]
    codes = [c.code for check in CHECKS for c in check.conditions]
    assert ids[: len(codes)] == codes and len(set(ids)) == len(ids)
    assert all(rule["help"]["text"] and rule["shortDescription"]["text"] for rule in driver["rules"])
    assert driver["name"] == "frayproof-audit" and driver["version"]
    found = results(document)
    assert [r["ruleId"] for r in found] == ["PIN-ROLE", "PIN-TEXT"]
    for result in found:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error"
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("fixtures/clean_session.json")
        lines = (FIXTURES / "clean_session.json").read_text("utf-8").splitlines()
        line = location["physicalLocation"]["region"]["startLine"]
        assert lines[line - 1].strip() == "{" and lines[line].strip() == '"role": "system",'
        assert location["logicalLocations"][0]["fullyQualifiedName"] == "before[0]"


def test_check_fingerprints_are_stable_and_distinct() -> None:
    first = results(sarif(run_cli(*CHECK_ARGS, "--format", "sarif", expect=1).stdout))
    second = results(sarif(run_cli(*CHECK_ARGS, "--format", "sarif", expect=1).stdout))
    prints = [r["partialFingerprints"] for r in first]
    assert prints == [r["partialFingerprints"] for r in second]
    assert len({p["frayproofResult/v1"] for p in prints}) == len(prints)


def test_exit_codes_do_not_depend_on_the_format() -> None:
    for output in ("text", "json", *FORMATS):
        run_cli(*CHECK_ARGS, "--format", output, expect=1)
        run_cli("check", "--before", FIXTURES / "clean_session.json",
                "--after", FIXTURES / "legitimate_compaction.json", "--contract",
                EXAMPLES / "contract.yaml", "--format", output, expect=0)
        run_cli(*MUTATE_ARGS, "--format", output, expect=1)


def test_check_junit_one_case_per_check() -> None:
    xml = junit(run_cli(*CHECK_ARGS, "--format", "junit", expect=1).stdout)
    suites = {suite.name: suite for suite in xml}
    # a check the contract never enables has no suite (issue 27: no 40 skipped cases of it)
    assert list(suites) == [check.name for check in CHECKS if check.enabled_by_default]
    cases = {name: list(suite) for name, suite in suites.items()}
    assert all(len(members) == 1 for members in cases.values())
    pinned = cases["pinned_content"][0]
    assert outcome(pinned) == "failure"
    assert pinned.classname == "frayproof_audit.pinned_content"
    assert pinned.name.endswith("dropped_constraint.json")
    assert "PIN-ROLE" in pinned.result[0].text and "PIN-TEXT" in pinned.result[0].text
    assert "tool_call_integrity" not in cases  # off unless the contract asks
    assert not [name for name, members in cases.items() if outcome(members[0]) == "skipped"]
    assert xml.tests == len(suites) and xml.failures == 1 and xml.skipped == 0


def test_check_github_annotations_with_line_and_verdict() -> None:
    ran = run_cli(*CHECK_ARGS, "--format", "github", expect=1)
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("::error file=") and ",line=2,title=PIN-ROLE::Pinned message" in lines[0]
    assert lines[-1] == "::notice title=frayproof-audit check::FAIL: 2 error(s), 0 warning(s)"


def test_input_error_in_github_format_is_an_annotation() -> None:
    ran = run_cli("check", "--before", FIXTURES / "clean_session.json", "--after",
                  FIXTURES / "malformed_content.json", "--format", "github", expect=2)
    assert ran.stdout.startswith("::error title=frayproof-audit::INPUT ERROR%3A") is False
    assert ran.stdout.startswith("::error title=frayproof-audit::INPUT ERROR: ")
    assert "INPUT ERROR" in ran.stderr


def test_tool_args_offers_only_plain_formats() -> None:
    ran = run_cli("tool-args", "--trace", EXAMPLES / "tool_args" / "trace.json", "--schema",
                  EXAMPLES / "tool_args" / "tools.json", "--format", "sarif", expect=2)
    assert "'sarif' is not one of 'text', 'json'" in ran.stderr


# ---- mutate ---------------------------------------------------------------------------------

def test_mutate_sarif_one_result_per_survivor() -> None:
    report = json.loads(run_cli(*MUTATE_ARGS, "--format", "json", expect=1).stdout)
    document = sarif(run_cli(*MUTATE_ARGS, "--format", "sarif", expect=1).stdout)
    ids = {rule["id"] for rule in document["runs"][0]["tool"]["driver"]["rules"]}
    assert {f"MUT-{op.name}" for op in OPERATOR_TABLE} <= ids
    found = results(document)
    survived = [m for m in report["mutants"] if m["status"] == "survived"]
    assert [r["ruleId"] for r in found] == [f"MUT-{m['name']}" for m in survived]
    assert [r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in found] == [
        m["sites"][0] for m in survived]
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "mutation_compactor.py") for r in found)


def test_mutate_with_a_logged_output_gets_lines(tmp_path: Path) -> None:
    after = tmp_path / "after.json"
    after.write_text((FIXTURES / "mutation_session.json").read_text("utf-8"), "utf-8")
    ran = run_cli("mutate", "--input", FIXTURES / "mutation_session.json", "--after", after,
                  "--contract", EXAMPLES / "weak_contract.yaml", "--format", "sarif", expect=1)
    found = results(sarif(ran.stdout))
    lines = after.read_text("utf-8").splitlines()
    assert found
    for result in found:
        site = result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert line == SnapshotLines.from_text(after.read_text("utf-8")).line_of(site)
        assert lines[line - 1].strip().startswith(("{", '"'))


@pytest.mark.parametrize(("after", "extra", "rules"), [
    ("dropped_constraint.json", (), ["PIN-ROLE", "PIN-TEXT"]),  # a failed baseline: its findings
    ("legitimate_compaction.json", ("--operators", "drop_tool_call"), ["MUT-NOT-MEASURED"]),
])
def test_mutate_sarif_without_survivors_says_why_it_failed(after: str, extra: tuple[str, ...],
                                                           rules: list[str]) -> None:
    ran = run_cli("mutate", "--input", FIXTURES / "clean_session.json", "--after", FIXTURES / after,
                  "--contract", EXAMPLES / "contract.yaml", *extra, "--format", "sarif", expect=1)
    found = results(sarif(ran.stdout))
    assert [r["ruleId"] for r in found] == rules and {r["level"] for r in found} == {"error"}


def test_validate_names_itself() -> None:
    ran = run_cli("validate", "--snapshot", FIXTURES / "orphaned_result.json", "--format", "sarif",
                  expect=1)
    document = sarif(ran.stdout)
    assert document["runs"][0]["automationDetails"]["id"] == "frayproof-audit/validate/"
    (found,) = results(document)
    assert found["ruleId"] == "TP-ORPHAN"
    assert found["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    xml = junit(run_cli("validate", "--snapshot", FIXTURES / "orphaned_result.json", "--format",
                        "junit", expect=1).stdout)
    skipped = {suite.name for suite in xml if suite.skipped}
    assert {check.name for check in CHECKS if check.needs_before} <= skipped


def test_mutate_junit_mutation_suite_counts() -> None:
    report = json.loads(run_cli(*MUTATE_ARGS, "--format", "json", expect=1).stdout)
    xml = junit(run_cli(*MUTATE_ARGS, "--format", "junit", expect=1).stdout)
    suite = next(s for s in xml if s.name == "mutation")
    cases = list(suite)
    assert len(cases) == len(report["mutants"]) == suite.tests
    assert Counter(outcome(c) for c in cases) == Counter(
        {"caught": "passed", "survived": "failure", "skipped": "skipped"}[m["status"]]
        for m in report["mutants"])
    assert suite.failures == report["survived"]
    assert len({(c.classname, c.name) for c in cases}) == len(cases)


# ---- audit ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ci-corpus")
    bad = [BAD_LINES["invalid_json"][0], BAD_LINES["missing_after"][0]]
    write_jsonl(folder / "logs" / "night0.jsonl", good_lines(10) + bad + good_lines(4, start=20))
    write_parquet(folder / "logs" / "night1.parquet", [record(300 + i, night=1) for i in range(4)])
    return folder / "logs", write_contract(folder)


def audit(corpus: tuple[Path, Path], out: Path, run_id: str, output: str, *extra: str,
          real: bool = False) -> Any:
    logs, contract = corpus
    return run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", run_id,
                   "-j", "1", "--format", output, "-q", *extra, expect=1, real=real)


def test_audit_sarif_points_at_lines_and_rows(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    document = sarif(audit(corpus, out, "r1", "sarif").stdout)
    found = results(document)
    findings = read_table(out, "findings").collect()
    pairs = read_table(out, "pairs").collect()
    survivors = read_table(out, "mutants").filter(pl.col("status") == "survived").collect()
    bad = pairs.filter(pl.col("status") == "input_error")
    assert len(found) == findings.height + survivors.height + bad.height
    assert Counter(r["ruleId"] for r in found if not r["ruleId"].startswith(("MUT-", "INPUT"))) == \
        Counter(findings["code"].to_list())
    levels = [r["level"] for r in found]
    assert levels == sorted(levels, key=["error", "warning", "note"].index)
    by_pair = {row["pair_id"]: row for row in pairs.iter_rows(named=True)}
    for result in found:
        location = result["locations"][0]
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        line = location["physicalLocation"]["region"]["startLine"]
        logical = location["logicalLocations"][0]["fullyQualifiedName"]
        pair = by_pair[result["properties"]["pair_id"]]
        assert uri.endswith(Path(pair["source"]).name)
        if uri.endswith(".parquet"):
            assert line == 1 and logical.startswith(f"row[{pair['source_row']}]")
        else:
            assert line == pair["source_row"]
    assert {r["ruleId"] for r in found if r["ruleId"] == "INPUT-ERROR"}
    input_lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"]
                   for r in found if r["ruleId"] == "INPUT-ERROR"]
    assert input_lines == [11, 12]
    run = document["runs"][0]
    assert run["automationDetails"]["id"] == "frayproof-audit/audit/r1"
    assert run["invocations"][0]["exitCode"] == 1


def test_audit_levels_follow_the_gates(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    def levels(*gates: str) -> dict[str, set[str]]:
        found = results(sarif(audit(corpus, tmp_path / "out", "r", "sarif", *gates).stdout))
        kinds: dict[str, set[str]] = {}
        for result in found:
            kind = "mutant" if result["ruleId"].startswith("MUT-") else result["ruleId"]
            kinds.setdefault(kind if kind in ("mutant", "INPUT-ERROR") else "finding",
                             set()).add(result["level"])
        return kinds

    assert levels() == {"finding": {"error"}, "mutant": {"warning"}, "INPUT-ERROR": {"warning"}}
    assert levels("--fail-on", "survivors", "--fail-on", "input-errors") == {
        "finding": {"error"}, "mutant": {"error"}, "INPUT-ERROR": {"error"}}


def test_audit_sarif_is_capped_with_a_summary_note(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    full = results(sarif(audit(corpus, out, "full", "sarif").stdout))
    assert len(full) > 5
    document = sarif(audit(corpus, out, "capped", "sarif", "--max-results", "5").stdout)
    found = results(document)
    assert len(found) == 5
    assert [r["partialFingerprints"] for r in found[:4]] == [r["partialFingerprints"] for r in full[:4]]
    note = found[-1]
    assert note["ruleId"] == "RESULTS-CAPPED" and note["level"] == "note"
    assert note["properties"] == {"results_total": len(full), "results_left_out": len(full) - 4}
    assert f"{len(full) - 4:,} of {len(full):,} results left out" in note["message"]["text"]
    assert "physicalLocation" in note["locations"][0]
    assert document["runs"][0]["properties"]["results_left_out"] == len(full) - 4


def test_audit_fingerprints_are_stable_across_runs(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    first = results(sarif(audit(corpus, tmp_path / "a", "monday", "sarif").stdout))
    second = results(sarif(audit(corpus, tmp_path / "b", "tuesday", "sarif").stdout))
    assert [r["partialFingerprints"] for r in first] == [r["partialFingerprints"] for r in second]
    assert len({r["partialFingerprints"]["frayproofResult/v1"] for r in first}) == len(first)


def test_audit_junit_counts(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    xml = junit(audit(corpus, out, "r1", "junit").stdout)
    pairs = read_table(out, "pairs").collect()
    judged = pairs.filter(pl.col("status").is_in(["pass", "fail"]))
    errors = read_table(out, "findings").filter(pl.col("severity") == "error").collect()
    suites = {suite.name: suite for suite in xml}
    for check in CHECKS:
        if not check.enabled_by_default:  # off in the corpus's contract: no suite at all
            assert check.name not in suites
            continue
        suite = suites[check.name]
        assert suite.tests == judged.height
        failing = errors.filter(pl.col("check") == check.name)["pair_id"].n_unique()
        assert suite.failures == failing
    assert suites["records"].errors == pairs.filter(pl.col("status") == "input_error").height
    mutants = read_table(out, "mutants").collect()
    survived_groups = mutants.filter(pl.col("status") == "survived").select(
        "pair_id", "operator").unique().height
    assert suites["mutation"].failures == survived_groups
    total = sum(suite.tests for suite in xml)
    assert xml.tests == total
    root = ET.fromstring(audit(corpus, out, "r2", "junit").stdout.encode())
    assert int(root.get("tests", "0")) == sum(int(s.get("tests", "0")) for s in root)
    assert int(root.get("failures", "0")) == len(root.findall(".//failure"))


def test_audit_junit_cap_keeps_failures(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    xml = junit(audit(corpus, tmp_path / "out", "r1", "junit", "--max-results", "10").stdout)
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 10 == xml.tests
    assert [outcome(c) for c in cases[:-1]].count("passed") == 0
    assert cases[-1].name == "cases left out" and outcome(cases[-1]) == "skipped"


def test_audit_github_capped(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    lines = audit(corpus, tmp_path / "out", "r1", "github", "--max-results", "3").stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("::error file=") for line in lines[:3])
    assert lines[-1].startswith("::notice title=frayproof-audit audit::FAIL")
    assert "left out (the output is capped)" in lines[-1]


def test_run_details_reads_only_its_run(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    audit(corpus, out, "one", "text")
    audit(corpus, out, "two", "text", "--no-mutate")
    one, two = run_details(out, "one", 1000), run_details(out, "two", 1000)
    assert one.findings_total == two.findings_total == len(one.findings)
    assert one.survivors_total > 0 and two.survivors_total == 0
    limited = run_details(out, "one", 2)
    assert len(limited.findings) == 2 and limited.findings_total == one.findings_total
    assert [f.record for f in limited.findings] == [f.record for f in one.findings[:2]]


@pytest.mark.parametrize("output", FORMATS)
def test_subprocess_run_per_format(output: str) -> None:
    ran = run_cli(*CHECK_ARGS, "--format", output, expect=1, real=True)
    if output == "sarif":
        assert [r["ruleId"] for r in results(sarif(ran.stdout))] == ["PIN-ROLE", "PIN-TEXT"]
    elif output == "junit":
        assert junit(ran.stdout).failures == 1
    else:
        assert ran.stdout.splitlines()[0].startswith("::error file=")


def test_audit_subprocess(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    assert results(sarif(audit(corpus, tmp_path / "out", "r1", "sarif", real=True).stdout))


# ---- github escaping --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "data", "prop"), [
    ("plain", "plain", "plain"),
    ("50% done", "50%25 done", "50%25 done"),
    ("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"),
    ("key: a, b", "key: a, b", "key%3A a%2C b"),
    ("%0A is not a newline", "%250A is not a newline", "%250A is not a newline"),
    ("C:\\logs\\a,b.jsonl", "C:\\logs\\a,b.jsonl", "C%3A\\logs\\a%2Cb.jsonl"),
])
def test_github_escaping(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def test_github_command_shape() -> None:
    line = command("error", "bad: 1, 2\nsecond", file="a,b:c.jsonl", line=3, title="T:1", col=None)
    assert line == "::error file=a%2Cb%3Ac.jsonl,line=3,title=T%3A1::bad: 1, 2%0Asecond"
    assert command("note", "x") == "::notice::x"


_CODES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def _unescape(text: str) -> str:
    """The runner's decoding: each escape read once, left to right."""
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda match: _CODES[match.group()], text)


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_github_escaping_round_trips(text: str) -> None:
    prop, data = escape_property(text), escape_data(text)
    assert not set(prop) & {"\n", "\r", ":", ","}
    assert not set(data) & {"\n", "\r"}
    assert _unescape(prop) == text
    assert _unescape(data) == text


# ---- positions --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["role", "content", "tool_calls"]), json_values,
                                min_size=1), max_size=6), st.integers(0, 2))
def test_line_of_each_message(messages: list[dict[str, Any]], indent: int) -> None:
    parts = [json.dumps(m, indent=indent or None) for m in messages]
    text = "[\n" + ",\n".join(parts) + "\n]\n"
    lines = SnapshotLines.from_text(text)
    start = 2
    for index, part in enumerate(parts):
        assert lines.line_of(f"after[{index}]") == start
        start += part.count("\n") + 1


def test_labels() -> None:
    assert parse_label("after[4].tool_calls[1].arguments.path") == (4, "tool_calls", 1, "arguments", "path")
    assert parse_label('after[2].input["two words"]') == (2, "input", "two words")
    assert parse_label("before[6:18]") == (6,)
    assert parse_label("after[2].content[1]..after[4]") == (2, "content", 1)
    assert parse_label("after.system[0]") == ("system", 0)
    request = SnapshotLines.from_text('{\n "system": [\n  {"type": "text"}\n ],\n "messages": []\n}')
    assert request.line_of("after.system[0]") == 3
    assert request.line_of("after[0]") is None  # an index into an object is not guessed
    assert SnapshotLines.from_text("not json [").line_of("after[0]") is None


def test_a_bom_and_a_request_object_in_check(tmp_path: Path) -> None:
    after = [{"role": "tool", "tool_call_id": "x", "content": "ok"}]
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(after, indent=1).encode())
    ran = run_cli("validate", "--snapshot", bom, "--format", "sarif", expect=1)
    (found,) = results(sarif(ran.stdout))
    assert found["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"system": "Be brief.", "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]},
        indent=1), "utf-8")
    ran = run_cli("validate", "--snapshot", request, "--input-format", "anthropic", "--format",
                  "sarif", expect=1)
    found = results(sarif(ran.stdout))
    assert found and all(r["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
                         for r in found)
    assert found[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].startswith("after")


def test_junit_survives_control_characters(tmp_path: Path) -> None:
    before = [{"role": "system", "content": "Never\x01 write"}, {"role": "user", "content": "hi"}]
    after = [{"role": "user", "content": "hi"}]
    contract = tmp_path / "c.yaml"
    contract.write_text("version: 1\npins:\n  - name: \"p\\x01\"\n    role: system\n", "utf-8")
    (tmp_path / "b.json").write_text(json.dumps(before), "utf-8")
    (tmp_path / "a.json").write_text(json.dumps(after), "utf-8")
    ran = run_cli("check", "--before", tmp_path / "b.json", "--after", tmp_path / "a.json",
                  "--contract", contract, "--format", "junit", expect=1)
    assert junit(ran.stdout).failures == 1


# ---- a command that could not run ------------------------------------------------------------

UNREADABLE = {
    "check": ("check", "--before", "/nonexistent/before.json", "--after", FIXTURES / "clean_session.json"),
    "mutate": ("mutate", "--input", "/nonexistent/session.json",
               "--target", EXAMPLES / "mutation_compactor.py:compact"),
    "audit": ("audit", "/nonexistent/logs.jsonl", "--out", "{tmp}/out"),
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_sarif_of_a_command_that_could_not_run_is_a_failed_invocation(name: str, tmp_path: Path) -> None:
    args = [str(arg).replace("{tmp}", str(tmp_path)) for arg in UNREADABLE[name]]
    done = run_cli(*args, "--format", "sarif", expect=2, real=name == "audit")
    (run,) = sarif(done.stdout)["runs"]
    assert run["results"] == [] and run["automationDetails"]["id"] == f"frayproof-audit/{name}/"
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (notice,) = invocation["toolExecutionNotifications"]
    assert notice["level"] == "error" and notice["message"]["text"].startswith("INPUT ERROR: ")
    assert "/nonexistent/" in notice["message"]["text"]
    assert "INPUT ERROR: " in done.stderr  # the one line a person reads is still there


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_junit_of_a_command_that_could_not_run_is_one_error(name: str, tmp_path: Path) -> None:
    args = [str(arg).replace("{tmp}", str(tmp_path)) for arg in UNREADABLE[name]]
    done = run_cli(*args, "--format", "junit", expect=2, real=name == "check")
    report = junit(done.stdout)
    cases = [case for suite in report for case in suite]
    assert len(cases) == 1 and outcome(cases[0]) == "error"
    assert cases[0].classname == f"frayproof_audit.{name}"
    (error,) = cases[0].result
    assert error.type == "INPUT ERROR" and "/nonexistent/" in error.message
    assert (report.tests, report.errors, report.failures) == (1, 1, 0)


def test_an_output_folder_that_cannot_be_used_says_output_error_in_sarif(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    data = write_jsonl(tmp_path / "a.jsonl", good_lines(2))
    done = run_cli("audit", data, "--out", blocked / "out", "--format", "sarif", expect=2)
    (run,) = sarif(done.stdout)["runs"]
    (notice,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notice["message"]["text"].startswith("OUTPUT ERROR: ")
    assert notice["descriptor"]["id"] == "output-error"


# ---- --sarif-category: two analyses of one commit kept apart ----------------------------------

CATEGORY_COMMANDS = {
    "validate": (("validate", "--snapshot", FIXTURES / "orphaned_result.json"), 1),
    "check": (CHECK_ARGS, 1),
    "mutate": (MUTATE_ARGS, 1),
}


@pytest.mark.parametrize("name", sorted(CATEGORY_COMMANDS))
@pytest.mark.parametrize(("given", "category"), [
    ("corpus-a", "corpus-a"), ("nightly/corpus-b/", "nightly/corpus-b"), ("x//", "x"),
])
def test_sarif_category_replaces_the_category_part_of_the_automation_id(
        name: str, given: str, category: str) -> None:
    args, code = CATEGORY_COMMANDS[name]
    default = sarif(run_cli(*args, "--format", "sarif", expect=code).stdout)
    chosen = sarif(run_cli(*args, "--format", "sarif", "--sarif-category", given, expect=code).stdout)
    assert default["runs"][0]["automationDetails"]["id"] == f"frayproof-audit/{name}/"
    assert chosen["runs"][0]["automationDetails"]["id"] == f"{category}/"
    # nothing else changes: same results, same fingerprints
    assert results(chosen) == results(default)


def test_audit_sarif_category_keeps_the_run_id_after_the_last_slash(
        corpus: tuple[Path, Path], tmp_path: Path) -> None:
    first = sarif(audit(corpus, tmp_path / "a", "night-1", "sarif", "--sarif-category",
                        "frayproof-audit/corpus-a", real=True).stdout)
    second = sarif(audit(corpus, tmp_path / "b", "night-1", "sarif", "--sarif-category",
                         "frayproof-audit/corpus-b").stdout)
    ids = [document["runs"][0]["automationDetails"]["id"] for document in (first, second)]
    assert ids == ["frayproof-audit/corpus-a/night-1", "frayproof-audit/corpus-b/night-1"]
    # code scanning's category is the id up to its last '/': distinct for the two corpora
    assert len({found.rsplit("/", 1)[0] for found in ids}) == 2


def test_sarif_category_reaches_the_document_of_a_command_that_could_not_run(tmp_path: Path) -> None:
    done = run_cli("audit", "/nonexistent/logs.jsonl", "--out", tmp_path / "out", "--format", "sarif",
                   "--sarif-category", "nightly/corpus-a", expect=2)
    (run,) = sarif(done.stdout)["runs"]
    assert run["automationDetails"]["id"] == "nightly/corpus-a/"
    assert run["invocations"][0]["executionSuccessful"] is False


@pytest.mark.parametrize(("given", "said"), [
    ("", "is empty"), ("///", "is empty"), ("  /", "is empty"), ("a\tb", "control character"),
])
def test_a_sarif_category_that_names_nothing_is_a_usage_error(given: str, said: str) -> None:
    done = run_cli(*CHECK_ARGS, "--format", "sarif", "--sarif-category", given, expect=2)
    assert "--sarif-category" in done.stderr and said in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("output", ["text", "json", "github", "junit"])
def test_sarif_category_with_another_output_is_refused_not_ignored(output: str) -> None:
    done = run_cli(*CHECK_ARGS, "--format", output, "--sarif-category", "corpus-a", expect=2)
    assert "--sarif-category applies to --format sarif only" in done.stderr
    assert done.stdout == ""


def test_library_render_takes_the_category_from_the_context() -> None:
    from frayproof_audit import check
    from frayproof_audit.render import RenderContext, render
    from frayproof_audit.render.sarif import SarifCategoryError

    report = check(FIXTURES / "clean_session.json", FIXTURES / "dropped_constraint.json",
                   EXAMPLES / "contract.yaml")
    document = sarif(render(report, "sarif", RenderContext(sarif_category="team/compactor-v2/")))
    assert document["runs"][0]["automationDetails"]["id"] == "team/compactor-v2/"
    with pytest.raises(SarifCategoryError, match="is empty"):
        render(report, "sarif", RenderContext(sarif_category="/"))
