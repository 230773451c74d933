"""The nightly job over a history that changes: a contract tightened mid-history, a history
rejudged with the new contract, runs listed and deleted, a failed run, a dry run (issue 27,
items 1 and 4). Every command is driven through the real CLI (CliRunner, and a real process
for each new command).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from polars.testing import assert_frame_equal

from frayproof_audit.contract import load_contract
from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import BAD_LINES, CONTRACT_TEXT, line, record, write_contract, write_jsonl
from tests.helpers import run_cli
from tests.test_scale import s3  # noqa: F401 - the moto S3 server fixture
from tests.trend_support import night_compactors

TIGHTER = CONTRACT_TEXT + "  recent_exchanges: 1\n"
"""What the mutation report advises: keep the last exchange too (catches `drop_result` twice)."""
DATA_TABLES = ("pairs", "findings", "mutants")


def _night_file(folder: Path, night: int, extra: list[bytes] = ()) -> Path:  # type: ignore[assignment]
    names = night_compactors(night)
    lines = [line(record(night * 100 + i, name, night=night)) for i, name in enumerate(names)]
    return write_jsonl(folder / "logs" / f"night{night}.jsonl", lines + list(extra))


def _history(folder: Path, nights: int, tighter_from: int | None = None) -> Path:
    """`nights` nights audited one run each (`night-N`); from night `tighter_from` on with the
    tighter contract. Returns OUT."""
    old = write_contract(folder)
    new = folder / "tighter.yaml"
    new.write_text(TIGHTER, encoding="utf-8")
    out = folder / "out"
    for night in range(nights):
        contract = new if tighter_from is not None and night >= tighter_from else old
        source = _night_file(folder, night)
        audit([str(source)], str(contract), str(out), jobs=1, run_id=f"night-{night}", fail_on=())
    return out


def _fingerprint(path: Path) -> str:
    return load_contract(str(path)).fingerprint


def rejudged_id(original: str, fingerprint: str) -> str:
    """The documented run id of a rejudged run: the original's, a dot, 12 fingerprint digits."""
    return f"{original}.{fingerprint[:12]}"


# --- 1. contract history, not contract refusal ------------------------------------------------

def test_a_contract_change_mid_history_keeps_trend_working_and_marks_the_change(tmp_path: Path) -> None:
    out = _history(tmp_path, 7, tighter_from=5)
    old, new = _fingerprint(tmp_path / "contract.yaml")[:12], _fingerprint(tmp_path / "tighter.yaml")[:12]
    # the cron job's gate: no exit 2 for a contract change, and the line that says what counts
    done = run_cli("trend", out, "--fail-on-regression", "10", expect=None, real=True)
    assert done.exit_code in (0, 1), done.stderr
    assert f"contract {new}" in done.stdout
    assert (f"left out 5 run(s) of 1 other contract(s) (contract {old}: night-0, night-1, night-2,"
            " night-3, night-4)") in done.stdout
    # every night, the change marked and the baselines starting again on the new contract's night
    every = run_cli("trend", out, "--contract", "all", "--format", "json", expect=None)
    assert every.exit_code in (0, 1), every.stderr
    data = json.loads(every.stdout)
    assert data["periods"][0] == "2025-06-02" and data["periods"][-1] == "2025-06-08"
    assert data["contract_changes"] == [{"period": "2025-06-07", "contracts": [_fingerprint(
        tmp_path / "tighter.yaml")]}]
    changed = [row for row in data["checks"] if row["log_date"] == "2025-06-07"]
    assert changed and all(row["baseline"] is None for row in changed)
    text = run_cli("trend", out, "--contract", "all", expect=None).stdout
    assert "Contract changed on 2025-06-07 (06-07* below)" in text and " 06-07* " in text
    # an older contract by its fingerprint, as the tools print it
    older = json.loads(run_cli("trend", out, "--contract", old, "--format", "json").stdout)
    assert older["runs"] == [f"night-{n}" for n in range(5)] and older["contract_changes"] == []
    # stats and report choose the same runs and say so
    stats = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert stats["runs"] == 2 and [item["run_id"] for item in stats["left_out"]] == [
        f"night-{n}" for n in range(5)]
    assert "left out 5 run(s)" in run_cli("stats", out).stdout
    report = run_cli("report", out, "-o", tmp_path / "r.html")
    assert "2 run(s)" in report.stdout and "left out 5 run(s) of 1 other contract(s)" in report.stderr
    assert run_cli("stats", out, "--contract", "nope", expect=2).stderr.startswith("INPUT ERROR: --contract")


def test_the_cron_job_of_the_docs_pages_only_for_a_real_regression(tmp_path: Path) -> None:
    """docs/audit.md's cron pages when `trend` exits non-zero: a contract change must not."""
    out = _history(tmp_path, 5)
    source = _night_file(tmp_path, 5)  # the quiet night: nothing to page about
    tighter = tmp_path / "tighter.yaml"
    audit([str(source)], str(tighter), str(out), jobs=1, run_id="night-5", fail_on=())
    done = run_cli("trend", out, "--fail-on-regression", "10", real=True)
    assert "Gate passed: 2025-06-07 is the first period judged by its contract" in done.stdout


# --- rejudge -----------------------------------------------------------------------------------

def _rows(out: Path, table: str, runs: list[str]) -> pl.DataFrame:
    frame = read_table(out, table).filter(pl.col("run_id").is_in(runs)).collect()
    return frame.sort(frame.columns, nulls_last=True)


def test_rejudge_equals_a_fresh_audit_of_its_inputs_table_for_table(tmp_path: Path) -> None:
    undated = line({k: v for k, v in record(990, "keep_all").items() if k != "logged_at"})
    bad = BAD_LINES["invalid_json"][0]
    old = write_contract(tmp_path)
    tighter = tmp_path / "tighter.yaml"
    tighter.write_text(TIGHTER, encoding="utf-8")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    sources = [_night_file(tmp_path, night, [undated, bad] if night == 1 else []) for night in range(3)]
    for night, source in enumerate(sources):
        audit([str(source)], str(old), str(out), jobs=1, run_id=f"night-{night}", fail_on=())
    done = run_cli("rejudge", out, "--contract", tighter, "--format", "json", real=True)
    result = json.loads(done.stdout)
    fingerprint = _fingerprint(tighter)
    copies = [rejudged_id(f"night-{night}", fingerprint) for night in range(3)]
    assert [item["run_id"] for item in result["rejudged"]] == copies
    assert [item["rejudge_of"] for item in result["rejudged"]] == [f"night-{n}" for n in range(3)]
    for night, source in enumerate(sources):
        audit([str(source)], str(tighter), str(fresh), jobs=1, run_id=copies[night], fail_on=())
    for table in DATA_TABLES:
        assert_frame_equal(_rows(out, table, copies), _rows(fresh, table, copies))
    runs = read_table(out, "runs").collect()
    rejudged = runs.filter(pl.col("run_id").is_in(copies)).sort("run_id")
    assert rejudged["rejudge_of"].to_list() == [f"night-{n}" for n in range(3)]
    assert set(rejudged["contract_fingerprint"]) == {fingerprint}
    # the trend reads the rejudged history under the new contract, the originals named once
    trend = json.loads(run_cli("trend", out, "--format", "json").stdout)
    assert trend["runs"] == copies and trend["contract"] == fingerprint
    assert {item["reason"] for item in trend["left_out"]} == {"rejudged"}
    # again with the same contract: nothing to do, nothing replaced
    again = run_cli("rejudge", out, "--contract", tighter, "--format", "json")
    assert json.loads(again.stdout)["rejudged"] == []
    assert read_table(out, "runs").collect().height == 6


def test_rejudged_undated_records_keep_the_original_runs_date(tmp_path: Path) -> None:
    undated = line({k: v for k, v in record(990, "keep_all").items() if k != "logged_at"})
    source = write_jsonl(tmp_path / "logs" / "a.jsonl", [line(record(1, "keep_all")), undated])
    out = tmp_path / "out"
    audit([str(source)], str(write_contract(tmp_path)), str(out), jobs=1, run_id="old", fail_on=())
    today = f"log_date={datetime.now(UTC).date().isoformat()}"
    earlier = "log_date=2025-01-03"
    for table in DATA_TABLES:  # as if the run had started on an earlier day: its undated rows there
        (out / table / today).rename(out / table / earlier)
    path = out / "runs" / "part-old.parquet"
    runs = pq.read_table(path)
    moved = pa.array([datetime(2025, 1, 3, 1, 30, tzinfo=UTC)], runs.schema.field("started_at").type)
    files = pa.array([[name.replace(today, earlier) for name in runs["files"][0].as_py()]],
                     runs.schema.field("files").type)
    for name, value in (("started_at", moved), ("files", files)):
        index = runs.schema.get_field_index(name)
        runs = runs.set_column(index, runs.schema.field(name), value)
    pq.write_table(runs, path)
    assert sorted(read_table(out, "pairs").collect()["log_date"].cast(pl.String)) == [
        "2025-01-03", "2025-06-02"]
    tighter = tmp_path / "tighter.yaml"
    tighter.write_text(TIGHTER, encoding="utf-8")
    run_cli("rejudge", out, "--contract", tighter)
    copy = rejudged_id("old", _fingerprint(tighter))
    pairs = read_table(out, "pairs").filter(pl.col("run_id") == copy).collect()
    assert sorted(map(str, pairs["log_date"])) == ["2025-01-03", "2025-06-02"]


def test_rejudge_names_inputs_that_are_gone_or_changed_and_commits_nothing_of_them(tmp_path: Path) -> None:
    out = _history(tmp_path, 3)
    (tmp_path / "logs" / "night0.jsonl").unlink()
    changed = tmp_path / "logs" / "night1.jsonl"
    changed.write_bytes(changed.read_bytes() + line(record(199, "keep_all", night=1)))
    tighter = tmp_path / "tighter.yaml"
    done = run_cli("rejudge", out, "--contract", tighter, expect=2)
    assert "night-0: " in done.stdout and "night0.jsonl" in done.stdout
    assert "night-1: the records of 1 input file(s) changed since run night-1 read them" in done.stdout
    assert "night-2 -> night-2." in done.stdout
    runs = set(read_table(out, "runs").collect()["run_id"])
    fingerprint = _fingerprint(tighter)
    assert rejudged_id("night-2", fingerprint) in runs
    assert not {rejudged_id("night-0", fingerprint), rejudged_id("night-1", fingerprint)} & runs
    assert not list((out / "_staging").glob("*/pairs"))  # nothing half-staged is left either


def test_rejudge_of_incremental_runs_reads_their_ranges_and_the_next_night_skips_them(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    log = write_jsonl(tmp_path / "logs" / "live.jsonl", [line(record(i, "keep_all")) for i in range(4)])
    out = tmp_path / "out"
    audit([str(log)], str(contract), str(out), jobs=1, run_id="n1", incremental=True, fail_on=())
    log.write_bytes(log.read_bytes() + b"".join(line(record(10 + i, "window", night=1)) for i in range(3)))
    audit([str(log)], str(contract), str(out), jobs=1, run_id="n2", incremental=True, fail_on=())
    tighter = tmp_path / "tighter.yaml"
    tighter.write_text(TIGHTER, encoding="utf-8")
    run_cli("rejudge", out, "--contract", tighter)
    fingerprint = _fingerprint(tighter)
    pairs = read_table(out, "pairs").collect()
    for original, count in (("n1", 4), ("n2", 3)):
        copy = pairs.filter(pl.col("run_id") == rejudged_id(original, fingerprint))
        assert copy.height == count
        rows = pairs.filter(pl.col("run_id") == original)["source_row"].to_list()
        assert copy["source_row"].to_list() == rows
    # the next --incremental night under the new contract audits only what is new
    log.write_bytes(log.read_bytes() + line(record(20, "keep_all", night=2)))
    summary = audit([str(log)], str(tighter), str(out), jobs=1, run_id="n3", incremental=True, fail_on=())
    assert summary.pairs == 1


# --- 4. runs you can manage --------------------------------------------------------------------

def test_runs_lists_and_deletes_a_run_atomically(tmp_path: Path) -> None:
    out = _history(tmp_path, 3)
    listed = run_cli("runs", out, real=True)
    assert listed.stdout.startswith(f"3 committed run(s) in '{out}', 1 contract(s)")
    assert "night-2" in listed.stdout and " ok " in listed.stdout
    rows = json.loads(run_cli("runs", out, "--format", "json").stdout)["runs"]
    assert [row["run_id"] for row in rows] == ["night-0", "night-1", "night-2"]
    assert rows[0]["pairs"] == 20 and rows[0]["input_error_share"] == 0.0 and rows[0]["status"] == "ok"
    files = read_table(out, "runs").filter(pl.col("run_id") == "night-1").collect()["files"][0]
    done = run_cli("runs", out, "--delete", "night-1", real=True)
    assert done.stdout == f"Deleted run night-1 from '{out}': its runs row and {len(files)} part file(s).\n"
    assert not [path for path in files if (out / path).exists()]
    assert set(read_table(out, "pairs").collect()["run_id"]) == {"night-0", "night-2"}
    assert run_cli("runs", out, "--delete", "night-1", expect=2).stderr == (
        f"INPUT ERROR: no committed run 'night-1' in '{out}'\n")
    assert "must be 1-128 characters" in run_cli("runs", out, "--delete", "../runs", expect=2).stderr
    assert not (tmp_path / "nothing").exists()
    run_cli("runs", tmp_path / "nothing", "--delete", "x", expect=2)
    assert not (tmp_path / "nothing").exists()  # nothing is created for a dataset that is not there


def test_runs_delete_on_an_object_store(tmp_path: Path, s3: dict[str, str]) -> None:  # noqa: F811
    from tests.test_scale import _s3_cli

    contract = write_contract(tmp_path)
    for night in range(2):
        source = _night_file(tmp_path, night)
        audit([str(source)], str(contract), "s3://audit/managed", jobs=1, run_id=f"night-{night}",
              fail_on=(), mutate=False)
    listed = _s3_cli(s3, "runs", "s3://audit/managed", "--format", "json")
    assert [row["run_id"] for row in json.loads(listed.stdout)["runs"]] == ["night-0", "night-1"]
    done = _s3_cli(s3, "runs", "s3://audit/managed", "--delete", "night-0")
    assert done.stdout.startswith("Deleted run night-0 from 's3://audit/managed': its runs row and")
    assert set(read_table("s3://audit/managed", "pairs").collect()["run_id"]) == {"night-1"}
    from tests.test_scale import _objects

    left = _objects("s3://audit/managed")
    assert not [path for path in left if "night-0" in path]  # no part file, no lock, no staging
    assert _s3_cli(s3, "runs", "s3://audit/managed", "--delete", "night-0", expect=2).stderr.startswith(
        "INPUT ERROR: no committed run 'night-0'")


def test_a_run_of_only_input_errors_is_committed_failed_and_left_out_by_default(tmp_path: Path) -> None:
    out = _history(tmp_path, 3)
    wrong = run_cli("audit", tmp_path / "logs" / "night2.jsonl", "--contract", tmp_path / "contract.yaml",
                    "--out", out, "--run-id", "wrong-map", "--field", "before=request.messages", "-q",
                    expect=2, real=True)
    assert "The run is committed as failed" in wrong.stdout
    runs = json.loads(run_cli("runs", out, "--format", "json").stdout)["runs"]
    assert {row["run_id"]: row["status"] for row in runs}["wrong-map"] == "failed"
    stats = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert stats["runs"] == 3 and stats["pairs"][0]["pairs"] == 60 and stats["pairs"][0]["input_errors"] == 0
    assert stats["left_out"] == [{"run_id": "wrong-map", "contract": stats["contract"], "reason": "failed"}]
    assert "Left out 1 failed run(s)" in run_cli("stats", out).stdout
    trend = json.loads(run_cli("trend", out, "--format", "json").stdout)
    assert trend["runs"] == ["night-0", "night-1", "night-2"] and trend["undated"] == 0
    report = run_cli("report", out, "-o", tmp_path / "r.html")
    assert "3 run(s), 60 pairs" in report.stdout and "failed run(s)" in report.stderr
    named = json.loads(run_cli("stats", out, "--run", "wrong-map", "--format", "json").stdout)
    assert named["pairs"][0]["input_errors"] == 20  # named, it is shown
    run_cli("runs", out, "--delete", "wrong-map")
    assert json.loads(run_cli("stats", out, "--format", "json").stdout)["left_out"] == []


def test_a_dry_run_reads_and_maps_a_sample_and_writes_nothing(tmp_path: Path) -> None:
    _night_file(tmp_path, 0)
    write_jsonl(tmp_path / "logs" / "nested.jsonl", [
        line({"request": {"messages": rec["before"]}, "after": rec["after"], "ts": rec["logged_at"]})
        for rec in (record(i) for i in range(150))])
    out = tmp_path / "out"
    args = ("audit", tmp_path / "logs", "--contract", write_contract(tmp_path), "--out", out, "--dry-run")
    done = run_cli(*args, "--field", "logged_at=timestamp", expect=2, real=True)
    assert done.stdout.startswith("Dry run: read the first 100 record(s) of each of 2 input file(s),"
                                  " 120 record(s) in all; checked nothing, wrote nothing.")
    assert "  before      before      20 / 120 (17%)" in done.stdout
    assert "  logged_at   timestamp   0 / 120 (0%)  <- mapped, but in no record read" in done.stdout
    assert "Top-level keys of the records read: after (120), request (100), ts (100)," in done.stdout
    assert not out.exists()
    mapped = json.loads(run_cli(*args, "--field", "before=request.messages", "--format", "json",
                                expect=None).stdout)
    fields = {row["field"]: row["found"] for row in mapped["fields"]}
    assert fields["before"] == 100 and fields["after"] == 120 and mapped["records"] == 120
    assert mapped["missing_required"] == [] and mapped["exit_code"] == 0
    assert not out.exists()
    refused = run_cli(*args, "--format", "sarif", expect=2)
    assert "--dry-run prints text or json" in refused.stdout + refused.stderr


def test_older_runs_without_a_status_are_judged_by_their_counts(tmp_path: Path) -> None:
    out = _history(tmp_path, 1)
    audit([str(tmp_path / "logs" / "night0.jsonl")], str(tmp_path / "contract.yaml"), str(out), jobs=1,
          run_id="wrong", fields={"before": "nope"}, fail_on=())
    path = out / "runs" / "part-wrong.parquet"
    table = pq.read_table(path)
    blank = pa.nulls(1, pa.string())
    pq.write_table(table.set_column(table.schema.get_field_index("status"), table.schema.field("status"),
                                    blank), path)
    rows = {row["run_id"]: row["status"] for row in json.loads(
        run_cli("runs", out, "--format", "json").stdout)["runs"]}
    assert rows == {"night-0": "ok", "wrong": "failed"}

