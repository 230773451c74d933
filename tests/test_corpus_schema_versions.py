"""Tables schema 2 against schema 1: the same verdicts, findings and mutants as the code that
wrote schema 1, and datasets that hold runs of both versions read as one.

The schema-1 datasets under tests/data/v1/ were written by the last schema-1 commit
(tests/data/v1/build.py says how): an audit of examples/corpus/ and of a generated corpus of
every input format and every kind of bad record.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from frayproof_audit.checks import CONDITIONS
from frayproof_audit.corpus import audit, compute_stats, read_table
from frayproof_audit.corpus.dataset.checked_files import committed_files
from frayproof_audit.corpus.dataset.selection import MixedContracts, Selection
from frayproof_audit.corpus.inputs.record_fields import PROVENANCE
from frayproof_audit.corpus.store.arrow_tables import ADDED_IN, SCHEMAS, TABLES, TABLES_SCHEMA_VERSION
from tests.helpers import REPO

V1 = REPO / "tests" / "data" / "v1"
GENERATED = "tests/data/v1/generated-corpus"
DATA_TABLES = ("pairs", "findings", "mutants")
V1_AUDITS = {
    # fixture: (run id, inputs, contract, options) exactly as tests/data/v1/build.py ran them
    # (the example corpus has grown since: the four nights it held then)
    "example-dataset": ("v1-example", tuple(f"examples/corpus/2025-06-0{n}" for n in (2, 3, 4, 5)),
                        "examples/audit_contract.yaml", {}),
    "generated-dataset": ("v1-generated", (GENERATED,), f"{GENERATED}/contract.yaml",
                          {"max_record_bytes": 5000, "shard_bytes": 12000}),
}
RENAMED_REASONS = {
    # deliberate: the record says anthropic but holds Chat Completions messages, which the
    # anthropic format refuses rather than reading tool_calls as metadata
    "format 'anthropic' is not supported yet (only openai)":
        "before: messages[2].tool_calls is a Chat Completions field, not Anthropic: "
        "read this snapshot as openai",
}
RUN_COUNTS = ("pairs", "passed", "failed", "input_errors", "shards", "mutants_caught",
              "mutants_survived", "mutants_skipped", "not_audited_records")


def _audit_like_v1(fixture: str, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id, inputs, contract, options = V1_AUDITS[fixture]
    monkeypatch.chdir(REPO)  # relative inputs: the `source` columns match the fixture's
    audit(list(inputs), contract, str(out), jobs=1, run_id=run_id, fail_on=("none",), **options)


def _file_versions(out: Path, table: str) -> set[str]:
    return {
        (pq.read_schema(path).metadata or {})[b"frayproof_audit.schema_version"].decode()
        for path in committed_files(out, table)
    }


@pytest.mark.parametrize("fixture", sorted(V1_AUDITS))
def test_verdicts_findings_and_mutants_are_identical_to_schema_1(
    fixture: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _audit_like_v1(fixture, out, monkeypatch)
    old = V1 / fixture
    assert _file_versions(old, "findings") == {"1"}
    assert _file_versions(out, "findings") == {str(TABLES_SCHEMA_VERSION)}
    for table in DATA_TABLES:
        before = read_table(old, table).collect()
        after = read_table(out, table).collect()
        assert after.height == before.height > 0, table
        # log_date of a record without logged_at is the run's date, which differs; the rest,
        # row order included, must not
        dated = pl.col("logged_at").is_not_null()
        assert_frame_equal(after.filter(dated).select("log_date"), before.filter(dated).select("log_date"))
        if table == "findings":
            assert before["code"].null_count() == before.height  # schema 1: no codes
            assert after["code"].null_count() == 0  # every finding has its condition code
            assert set(after["code"]) <= set(CONDITIONS)
            # new in schema 4, read as null from schema-1 files
            assert before["repairable"].null_count() == before.height
            assert after["repairable"].null_count() == 0
            # new in schema 6, read as null from schema-1 files
            assert before["origin"].null_count() == before.height
            assert set(after["origin"]) <= {"introduced", "inherited"}
            before, after = (before.drop("code", "repairable", "origin"),
                             after.drop("code", "repairable", "origin"))
        if table == "pairs":
            reasons = pl.col("input_error")
            for old_reason, new_reason in RENAMED_REASONS.items():
                reasons = reasons.str.replace(old_reason, new_reason, literal=True)
            before = before.with_columns(reasons)
            # new in schema 2, read as null from schema-1 files
            assert before["logged_at_missing"].null_count() == before.height
            assert after["logged_at_missing"].to_list() == after["logged_at"].is_null().to_list()
            before, after = before.drop("logged_at_missing"), after.drop("logged_at_missing")
            # new in schema 5, read as null from schema-1 files: these records are pair records
            # (source `pairs`), and what a source says of a compaction they do not say
            derived = list(PROVENANCE)
            assert {ADDED_IN["pairs"][name] for name in derived} == {5}
            assert before.select(derived).null_count().row(0) == (before.height,) * len(derived)
            assert after["source_kind"].to_list() == ["pairs"] * after.height
            said = [name for name in derived if name != "source_kind"]
            assert after.select(said).null_count().row(0) == (after.height,) * len(said)
            before, after = before.drop(derived), after.drop(derived)
            # new in schema 6, read as null from schema-1 files; null exactly where no pair was checked
            assert before["introduced_errors"].null_count() == before.height
            checked = pl.col("status").is_in(["pass", "fail"])
            assert after.filter(checked)["introduced_errors"].null_count() == 0
            assert after.filter(~checked)["introduced_errors"].null_count() == after.filter(~checked).height
            assert (after["introduced_errors"] <= after["errors"]).all()
            before, after = before.drop("introduced_errors"), after.drop("introduced_errors")
            # deliberate: schema 1 hashed a line over --max-record-bytes with its line ending
            changed = after["record_sha256"] != before["record_sha256"]
            assert before.filter(changed)["input_error"].str.contains("over --max-record-bytes").all()
            before = before.with_columns(after["record_sha256"])
        assert_frame_equal(after.drop("log_date"), before.drop("log_date"))
    (old_run,) = read_table(old, "runs").collect().to_dicts()
    (new_run,) = read_table(out, "runs").collect().to_dicts()
    assert {k: new_run[k] for k in RUN_COUNTS} == {k: old_run[k] for k in RUN_COUNTS}
    assert (old_run["schema_version"], new_run["schema_version"]) == (1, TABLES_SCHEMA_VERSION)


@pytest.fixture(scope="module")
def v2_alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated corpus audited by this code alone, run id `v2`."""
    out = tmp_path_factory.mktemp("v2") / "out"
    audit([str(REPO / GENERATED)], str(REPO / GENERATED / "contract.yaml"), str(out), jobs=1,
          run_id="v2", max_record_bytes=5000, mutate=False, fail_on=("none",))
    return out


def _mixed(tmp_path: Path, v2_name: str) -> Path:
    """The schema-1 example dataset with a schema-2 run committed next to it."""
    out = tmp_path / "mixed"
    shutil.copytree(V1 / "example-dataset", out)
    audit([str(REPO / GENERATED)], str(REPO / GENERATED / "contract.yaml"), str(out), jobs=1,
          run_id=v2_name, max_record_bytes=5000, mutate=False, fail_on=("none",))
    return out


# "a-new" sorts before the schema-1 run's files, "z-new" after: both orders of versions
@pytest.mark.parametrize("v2_name", ["a-new", "z-new"])
def test_a_dataset_with_schema_1_and_schema_2_runs_reads_as_today(
    tmp_path: Path, v2_alone: Path, v2_name: str
) -> None:
    out = _mixed(tmp_path, v2_name)
    assert sorted(read_table(out, "runs").collect()["run_id"]) == sorted([v2_name, "v1-example"])
    for table in TABLES:
        frame = read_table(out, table).collect()
        expected = {f.name for f in SCHEMAS[table]} | ({"log_date"} if table != "runs" else set())
        assert set(frame.columns) == expected
        if table == "runs":
            continue
        assert frame["log_date"].is_sorted()  # files in path order, one scan per version stretch
        # each run's rows are exactly what it reads as alone (the schema-2 run: as run id "v2")
        for run_id, alone in ((v2_name, v2_alone), ("v1-example", V1 / "example-dataset")):
            keep = [c for c in frame.columns if c not in ("run_id", "log_date")]
            mine = frame.filter(pl.col("run_id") == run_id).select(keep)
            assert_frame_equal(mine, read_table(alone, table).collect().select(keep))
    findings = read_table(out, "findings").collect()
    codes = findings.group_by(pl.col("run_id")).agg(pl.col("code").null_count().alias("nulls"), pl.len())
    by_run = {row["run_id"]: (row["nulls"], row["len"]) for row in codes.to_dicts()}
    assert by_run["v1-example"][0] == by_run["v1-example"][1] == 200  # schema 1: code is null
    assert by_run[v2_name][0] == 0 and by_run[v2_name][1] > 0  # schema 2: every finding has one


def test_stats_over_schema_1_and_schema_2_runs(tmp_path: Path) -> None:
    out = _mixed(tmp_path, "z-new")
    stats = compute_stats(out, by="run_id", selection=Selection(contract="all"))
    assert stats.runs == 2
    codes = stats.codes
    assert set(codes.filter(pl.col("run_id") == "v1-example")["code"].to_list()) == {None}
    new = codes.filter(pl.col("run_id") == "z-new")
    assert new.height > 0 and new["code"].null_count() == 0
    # the two runs were judged by different contracts: grouped by run, each keeps its own
    assert stats.contract is None and set(stats.checks["run_id"]) == {"v1-example", "z-new"}
    # per check, the codes add up to the check's row; pairs checked and rates follow the check's
    per_check = (codes.group_by("run_id", "check").agg(pl.col("findings", "errors", "warnings").sum())
                 .filter(pl.col("findings") > 0))
    totals = (stats.checks.filter(pl.col("findings") > 0)
              .select("run_id", "check", "findings", "errors", "warnings"))
    assert_frame_equal(per_check, totals, check_row_order=False)
    findings = read_table(out, "findings").collect()
    assert codes["findings"].sum() == findings.height
    assert "Condition codes" in stats.to_text() and stats.to_dict()["codes"][0]["run_id"] == "v1-example"
    tidy = stats.tidy()
    assert tidy.columns[-1] == "code"
    assert set(tidy["table"]) == {"pairs", "checks", "codes", "operators"}
    with pytest.raises(MixedContracts, match="runs v1-example"):
        compute_stats(out, selection=Selection(runs=("v1-example", "z-new")))
    assert compute_stats(out).runs == 1  # the newest contract's run, the other named


def test_duckdb_reads_mixed_findings_by_name(tmp_path: Path) -> None:
    out = _mixed(tmp_path, "z-new")
    rows = duckdb.connect().sql(
        f"SELECT run_id, count(*), count(code) FROM read_parquet('{out}/findings/**/*.parquet',"
        " hive_partitioning = true, union_by_name = true) GROUP BY ALL ORDER BY run_id"
    ).fetchall()
    new = read_table(out, "findings").filter(pl.col("run_id") == "z-new").collect().height
    assert rows == [("v1-example", 200, 0), ("z-new", new, new)]
