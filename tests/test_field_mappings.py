"""Mappings that cannot fail silently (issue 27, items 5 and 6): a mapped field most records
lack is a warning (`--strict-fields`: an input error), extra fields carried into `pairs`
(`--carry`), repeated pair ids flagged and counted once. Through the real CLI (CliRunner, and a
real process for each new option)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frayproof_audit.corpus import read_table
from tests.corpus_support import line, record, write_contract, write_jsonl
from tests.helpers import run_cli
from tests.test_scale import s3  # noqa: F401 - the moto S3 server fixture


def _nested(index: int, **extra: Any) -> dict[str, Any]:
    """A record whose compactor lives at `strategy.name` and whose time at `ts`."""
    rec = record(index)
    strategy = {"name": rec.pop("compactor"), "version": f"v{index % 2 + 1}"}
    ts = rec.pop("logged_at")
    return {**rec, "strategy": strategy, "ts": ts, "model": "m-large", **extra}


def _logs(folder: Path, count: int = 8) -> Path:
    return write_jsonl(folder / "logs" / "night.jsonl", [line(_nested(i)) for i in range(count)])


def _audit(folder: Path, *args: str, expect: int | None = None, real: bool = False) -> Any:
    return run_cli("audit", folder / "logs", "--contract", write_contract(folder), "--out",
                   folder / "out", "--jobs", "1", "--no-mutate", "--fail-on", "none", *args,
                   expect=expect, real=real)


# --- 5. mapping typos are loud ----------------------------------------------------------------

def test_a_mapped_field_most_records_lack_is_a_warning_with_the_keys_they_have(tmp_path: Path) -> None:
    _logs(tmp_path)
    done = _audit(tmp_path, "--field", "compactor=strategy.nmae", "--field", "logged_at=timestamp",
                  expect=0)
    assert "MAPPING WARNINGS: mapped fields most records lack:" in done.stdout
    assert ("  --field compactor=strategy.nmae: found in 0 of 8 record(s) (0%); `strategy` has"
            " keys: name, version") in done.stdout
    assert ("  --field logged_at=timestamp: found in 0 of 8 record(s) (0%); the first record"
            " lacking it has top-level keys: after, before, model, pair_id, session_id, strategy,"
            " ts") in done.stdout
    assert done.stdout.rstrip().endswith("PASS")
    summary = json.loads(_audit(tmp_path, "--field", "compactor=strategy.nmae", "--format", "json",
                                expect=0).stdout)
    assert summary["field_warnings"] == [{
        "field": "compactor", "option": "--field compactor=strategy.nmae",
        "path": "strategy.nmae", "found": 0, "records": 8, "matched": "strategy",
        "keys": ["name", "version"]}]
    assert summary["gates"]["strict_fields"] is False and summary["status"] == "ok"


def test_a_field_found_in_half_the_records_or_more_is_no_warning(tmp_path: Path) -> None:
    lines = [line(_nested(i) if i % 2 else record(i)) for i in range(8)]  # half nested, half flat
    write_jsonl(tmp_path / "logs" / "night.jsonl", lines)
    summary = json.loads(_audit(tmp_path, "--field", "compactor=strategy.name", "--format", "json",
                                expect=0).stdout)
    assert summary["field_warnings"] == []
    lines.append(line(record(99)))  # now 4 of 9: fewer than half
    write_jsonl(tmp_path / "logs" / "night.jsonl", lines)
    summary = json.loads(_audit(tmp_path, "--field", "compactor=strategy.name", "--format", "json",
                                expect=0).stdout)
    [warning] = summary["field_warnings"]
    assert (warning["found"], warning["records"], warning["matched"]) == (4, 9, "")


def test_a_right_mapping_files_pairs_under_their_compactor_and_warns_nothing(tmp_path: Path) -> None:
    _logs(tmp_path)
    done = _audit(tmp_path, "--field", "compactor=strategy.name", "--field", "logged_at=ts", expect=0)
    assert "MAPPING" not in done.stdout
    pairs = read_table(str(tmp_path / "out"), "pairs").collect()
    assert set(pairs["compactor"].to_list()) == {"keep_all", "window", "drop_result", "drop_system"}


def test_strict_fields_makes_a_missing_mapping_an_input_error(tmp_path: Path) -> None:
    _logs(tmp_path)
    done = _audit(tmp_path, "--field", "compactor=strategy.nmae", "--strict-fields", expect=2,
                  real=True)
    assert "MAPPING WARNINGS: mapped fields most records lack (--strict-fields: an input error):" \
        in done.stdout
    assert done.stdout.rstrip().endswith(
        "MAPPING ERROR (--strict-fields): compactor found in fewer than half the records")
    runs = run_cli("runs", tmp_path / "out", "--format", "json").stdout
    assert [run["status"] for run in json.loads(runs)["runs"]] == ["failed"]
    summary = json.loads(_audit(tmp_path, "--field", "compactor=strategy.name", "--strict-fields",
                                "--format", "json", expect=0).stdout)
    assert summary["field_warnings"] == [] and summary["status"] == "ok"


def test_a_mapping_of_a_hive_folder_counts_as_found(tmp_path: Path) -> None:
    rows = [line(record(i)) for i in range(4)]
    write_jsonl(tmp_path / "logs" / "team=red" / "night.jsonl", rows)
    summary = json.loads(_audit(tmp_path, "--field", "compactor=team", "--format", "json",
                                expect=0).stdout)
    assert summary["field_warnings"] == []


# --- 6. extra fields carried into the tables --------------------------------------------------

def test_carried_fields_are_pairs_columns_and_stats_groups_on_them(tmp_path: Path) -> None:
    _logs(tmp_path)
    config = tmp_path / "audit.yaml"
    config.write_text("fields:\n  compactor: strategy.name\n  logged_at: ts\n"
                      "carry:\n  version: strategy.version\n", encoding="utf-8")
    _audit(tmp_path, "--config", str(config), "--carry", "model=model", "--carry", "team=owner.team",
           expect=0, real=True)
    pairs = read_table(str(tmp_path / "out"), "pairs").sort("pair_id").collect()
    assert pairs["carried"].to_list()[:2] == [
        [{"name": "version", "value": "v1"}, {"name": "model", "value": "m-large"}],
        [{"name": "version", "value": "v2"}, {"name": "model", "value": "m-large"}]]
    stats = json.loads(run_cli("stats", tmp_path / "out", "--by", "version", "--format", "json").stdout)
    assert [(row["version"], row["pairs"]) for row in stats["pairs"]] == [("v1", 4), ("v2", 4)]
    by_check = {(row["version"], row["check"]): row["failing_pairs"] for row in stats["checks"]}
    assert by_check[("v1", "tool_pair_integrity")] + by_check[("v2", "tool_pair_integrity")] == 2
    both = json.loads(run_cli("stats", tmp_path / "out", "--by", "compactor", "--by", "model",
                              "--format", "json").stdout)
    assert {(row["compactor"], row["model"]) for row in both["pairs"]} == {
        (name, "m-large") for name in ("keep_all", "window", "drop_result", "drop_system")}
    unknown = run_cli("stats", tmp_path / "out", "--by", "modle", expect=2)
    assert ("unknown --by 'modle' (choose compactor, log_date, run_id or a field the selected runs"
            " carry: model, version)") in unknown.stdout + unknown.stderr
    summary = json.loads(_audit(tmp_path, "--carry", "team=owner.team", "--format", "json").stdout)
    assert [warning["option"] for warning in summary["field_warnings"]] == ["--carry team=owner.team"]


def test_carried_values_are_text_and_a_bad_carry_is_refused(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "logs" / "night.jsonl", [
        line({**record(0), "n": 3, "flag": True, "obj": {"a": [1, 2]}}),
        line({**record(1), "n": None})])
    _audit(tmp_path, "--carry", "n=n", "--carry", "flag=flag", "--carry", "obj=obj", expect=0)
    pairs = read_table(str(tmp_path / "out"), "pairs").sort("pair_id").collect()
    assert pairs["carried"].to_list() == [
        [{"name": "n", "value": "3"}, {"name": "flag", "value": "true"},
         {"name": "obj", "value": '{"a":[1,2]}'}], []]
    for spec, said in (("compactor=x", "a field or pairs column already has that name"),
                       ("9lives=x", "the name must be 1-64 letters"),
                       ("model", "expected NAME=PATH, e.g. model=request.model"),
                       ("model=a..b", "has an empty segment")):
        refused = _audit(tmp_path, "--carry", spec, expect=2)
        assert said in refused.stdout + refused.stderr, spec


def test_runs_without_carried_fields_read_as_null_carried(tmp_path: Path) -> None:
    _logs(tmp_path)
    _audit(tmp_path, "--field", "compactor=strategy.name", expect=0)
    pairs = read_table(str(tmp_path / "out"), "pairs").collect()
    assert pairs["carried"].null_count() == pairs.height
    refused = run_cli("stats", tmp_path / "out", "--by", "model", expect=2)
    assert "the selected runs carry no field (audit --carry NAME=PATH)" in refused.stdout + refused.stderr


def test_carried_fields_are_read_from_parquet_structs(tmp_path: Path) -> None:
    from tests.corpus_support import write_parquet

    write_parquet(tmp_path / "logs" / "night.parquet", [_nested(i) for i in range(4)])
    summary = json.loads(_audit(tmp_path, "--field", "compactor=strategy.name", "--carry",
                                "version=strategy.version", "--format", "json", expect=0).stdout)
    assert summary["field_warnings"] == []
    pairs = read_table(str(tmp_path / "out"), "pairs").sort("pair_id").collect()
    assert [entry[0]["value"] for entry in pairs["carried"].to_list()] == ["v1", "v2", "v1", "v2"]


# --- 6. a repeated pair id is flagged and counted once ----------------------------------------

def _repeated(folder: Path) -> Path:
    """Night logs where `p0002` (drop_result: fails) is delivered twice in one file and again in
    a second file, and `p0004` (keep_all: passes) once more in the second file: 12 records, 9
    pair ids, 4 of them failing (p0002, p0003, p0006, p0007)."""
    first = [line(record(i)) for i in range(8)] + [line(record(2))]
    write_jsonl(folder / "logs" / "a.jsonl", first)
    return write_jsonl(folder / "logs" / "b.jsonl", [line(record(2)), line(record(4)),
                                                      line(record(20))])


def test_a_repeated_pair_id_is_flagged_and_counted_once(tmp_path: Path) -> None:
    _repeated(tmp_path)
    done = _audit(tmp_path, "--mutate", "--format", "json", expect=0, real=True)
    summary = json.loads(done.stdout)
    assert summary["pairs"] == 12 and summary["duplicates"] == 3
    assert summary["failed"] == 6 and summary["failure_rate"] == 4 / 9
    pairs = read_table(str(tmp_path / "out"), "pairs").sort("source", "source_row").collect()
    assert pairs.height == 12  # every record is one row
    flagged = pairs.filter(pairs["duplicate"]).select("source", "source_row", "pair_id").rows()
    assert [(Path(source).name, row, pair_id) for source, row, pair_id in flagged] == [
        ("a.jsonl", 9, "p0002"), ("b.jsonl", 1, "p0002"), ("b.jsonl", 2, "p0004")]
    findings = read_table(str(tmp_path / "out"), "findings").collect()
    twice = findings.filter(findings["pair_id"] == "p0002")["duplicate"].to_list()
    once = findings.filter(findings["pair_id"] == "p0006").height
    assert twice.count(False) == once and twice.count(True) == 2 * once
    mutants = read_table(str(tmp_path / "out"), "mutants").collect()
    assert mutants.filter(mutants["pair_id"] == "p0004")["duplicate"].sum() == \
        mutants.filter(mutants["pair_id"] == "p0000").height > 0
    once = mutants.filter(~mutants["duplicate"])
    assert summary["mutation"]["caught"] == once.filter(once["status"] == "caught").height
    assert summary["mutation"]["survived"] == once.filter(once["status"] == "survived").height
    counted = {check["check"]: check["failing_pairs"] for check in summary["checks"]}
    assert counted["tool_pair_integrity"] == 2  # p0002 and p0006, each once
    stats = json.loads(run_cli("stats", tmp_path / "out", "--format", "json").stdout)
    [row] = stats["pairs"]
    assert (row["pairs"], row["passed"], row["failed"]) == (9, 5, 4)
    checks = {check["check"]: check for check in stats["checks"]}
    assert checks["tool_pair_integrity"]["failing_pairs"] == 2
    assert checks["tool_pair_integrity"]["findings"] == findings.filter(
        (findings["check"] == "tool_pair_integrity") & ~findings["duplicate"]).height
    text = _audit(tmp_path, "--run-id", "again", expect=0).stdout
    assert ("  3 duplicate pair id(s): record(s) repeating the pair_id of an earlier one, kept"
            " with duplicate = true and counted once in rates") in text


def test_a_repeated_pair_id_counts_once_in_the_failure_rate_gate(tmp_path: Path) -> None:
    lines = [line(record(i, "keep_all")) for i in range(3)] + [line(record(9, "drop_result"))] * 4
    write_jsonl(tmp_path / "logs" / "a.jsonl", lines)
    # 4 of 7 records fail, but 1 of 4 pairs: under a 30% gate
    args = ("audit", tmp_path / "logs", "--contract", write_contract(tmp_path), "--out",
            tmp_path / "out", "--jobs", "1", "--no-mutate", "--max-failure-rate", "0.3")
    done = run_cli(*args, expect=0)
    assert "failure rate 25.0%" in done.stdout and "3 duplicate pair id(s)" in done.stdout
    assert run_cli("trend", tmp_path / "out", "--format", "json").exit_code == 0
    stats = json.loads(run_cli("stats", tmp_path / "out", "--format", "json").stdout)
    assert stats["pairs"][0]["failure_rate"] == 0.25


def test_repeated_pair_ids_are_flagged_in_a_dataset_on_an_object_store(
        tmp_path: Path, s3: dict[str, str]) -> None:  # noqa: F811
    from frayproof_audit.corpus import audit

    source = _repeated(tmp_path)
    summary = audit([str(source.parent)], str(write_contract(tmp_path)), "s3://audit/dups", jobs=1,
                    mutate=False, fail_on=("none",))
    assert summary.duplicates == 3
    pairs = read_table("s3://audit/dups", "pairs").collect()
    assert sorted(pairs.filter(pairs["duplicate"])["pair_id"].to_list()) == ["p0002", "p0002", "p0004"]


def test_a_dry_run_counts_carried_fields_and_marks_what_the_run_would_warn_about(tmp_path: Path) -> None:
    lines = [line(_nested(i) if i % 4 else record(i)) for i in range(8)]  # 6 of 8 nested
    write_jsonl(tmp_path / "logs" / "night.jsonl", lines)
    done = _audit(tmp_path, "--dry-run", "--field", "compactor=strategy.name", "--carry",
                  "model=model", "--carry", "team=owner.team", "--field", "logged_at=stamp",
                  expect=0, real=True)
    assert "  compactor    strategy.name  6 / 8 (75%)\n" in done.stdout
    assert "  carry model  model          6 / 8 (75%)\n" in done.stdout
    assert "  carry team   owner.team     0 / 8 (0%)  <- mapped, but in no record read" in done.stdout
    assert not (tmp_path / "out").exists()
    write_jsonl(tmp_path / "logs" / "night.jsonl", [line(_nested(i) if i % 4 == 0 else record(i))
                                                   for i in range(8)])  # 2 of 8 nested
    few = _audit(tmp_path, "--dry-run", "--field", "compactor=strategy.name", expect=0)
    assert ("  compactor   strategy.name  2 / 8 (25%)  <- mapped, in fewer than half: the run warns"
            " (--strict-fields: exit 2)") in few.stdout
