"""Inputs a nightly job meets: its own output, odd paths, odd times, odd values, odd files.

Each behaviour is pinned through the real CLI in a subprocess (`python -m frayproof_audit`),
with the smallest input that showed the problem, and in process where a boundary needs many
cases. The invariant behind all of them: every input record ends as exactly one `pairs` row,
and nothing prints a traceback.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frayproof_audit.corpus import read_table
from frayproof_audit.corpus.inputs.expansion import InputFileError, display_path, expand_inputs
from frayproof_audit.corpus.inputs.field_map import ConfigError, FieldMap, load_fields_file
from frayproof_audit.corpus.inputs.record_fields import RecordProblem, parse_logged_at
from frayproof_audit.corpus.store.arrow_tables import PAIRS_SCHEMA, TableBuilder
from tests.helpers import REPO, CliResult, run_cli

GOOD = b'{"before":[],"after":[]}'


def cli(cwd: Path, *args: str, expect: int | None = 0) -> CliResult:
    """The real CLI in a subprocess, run in `cwd`; never a traceback, whatever the exit."""
    result = run_cli(*args, expect=expect, real=True, cwd=cwd)
    assert "Traceback" not in result.stderr + result.stdout
    return result


def summary(result: CliResult) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def pairs(out: Path) -> pl.DataFrame:
    return read_table(out, "pairs").collect().sort("source", "source_row")


def audit_json(cwd: Path, *args: str, expect: int = 0) -> dict[str, Any]:
    """The JSON summary of a run without mutation. Input errors are what these tests make, so
    the input-error-rate gate is opened; the other gates stay as the caller sets them."""
    return summary(cli(cwd, "audit", *args, "--format", "json", "-q", "--no-mutate",
                       "--max-input-error-rate", "1", expect=expect))


# --- 2. the output is never an input -----------------------------------------------------

def test_a_second_run_does_not_read_its_own_output(tmp_path: Path) -> None:
    (tmp_path / "selfin").mkdir()
    (tmp_path / "selfin" / "a.jsonl").write_bytes(GOOD + b"\n" + GOOD + b"\n")
    for _ in range(3):
        done = audit_json(tmp_path, "selfin", "--out", "selfin/audit-out")
        assert (done["pairs"], done["input_errors"]) == (2, 0)


def test_expansion_names_the_dataset_folders_it_skipped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "day").mkdir(parents=True)
    (logs / "day" / "a.jsonl").write_bytes(GOOD + b"\n")
    old = logs / "old-audit"  # a dataset of another run: its lock file says so
    (old / "pairs" / "log_date=2025-06-02").mkdir(parents=True)
    (old / ".frayproof-audit.lock").touch()
    (old / "pairs" / "log_date=2025-06-02" / "part-r1-00000.parquet").write_bytes(b"PAR1")
    other = logs / "copied"  # a dataset copied without its lock: runs/ holds our part files
    (other / "runs").mkdir(parents=True)
    (other / "runs" / "part-r1.parquet").write_bytes(b"PAR1")
    (other / "stray.jsonl").write_bytes(GOOD + b"\n")
    out = logs / "audit-out"  # --out, not a dataset yet, is never read either
    out.mkdir()
    (out / "leftover.jsonl").write_bytes(GOOD + b"\n")

    expanded = expand_inputs([str(logs)], out=str(out))
    assert [s.path for s in expanded.files] == [str(logs / "day" / "a.jsonl")]
    assert set(expanded.skipped_datasets) == {str(old), str(other), str(out)}
    note = expanded.note()
    assert note is not None and str(old) in note and "not logs" in note

    # a glob or a file inside a dataset is skipped as well, and an input of nothing else says so
    globbed = expand_inputs([str(logs / "**" / "*.parquet"), str(logs / "day")])
    assert [s.path for s in globbed.files] == [str(logs / "day" / "a.jsonl")]
    assert set(globbed.skipped_datasets) == {str(old), str(other)}
    with pytest.raises(InputFileError, match="skipped frayproof-audit output"):
        expand_inputs([str(other / "stray.jsonl")])


def test_hidden_staging_folders_that_are_not_ours_stay_ordinary(tmp_path: Path) -> None:
    (tmp_path / "_staging").mkdir()
    (tmp_path / "_staging" / "notes.txt").touch()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.jsonl").write_bytes(GOOD + b"\n")
    expanded = expand_inputs([str(tmp_path)])
    assert [s.path for s in expanded.files] == [str(tmp_path / "runs" / "a.jsonl")]
    assert expanded.skipped_datasets == () and expanded.note() is None


# --- 3. paths are paths ------------------------------------------------------------------

def test_relative_paths_with_colons_are_local_files(tmp_path: Path) -> None:
    folder = tmp_path / "in:1"
    folder.mkdir()
    table = pa.table({"before": ["[]"], "after": ["[]"]})
    with open(folder / "strings.parquet", "wb") as handle:
        pq.write_table(table, handle)
    with gzip.open(folder / "b.jsonl.gz", "wb") as handle:
        handle.write(GOOD + b"\n")
    with pa.output_stream(pa.OSFile(str(folder / "c.jsonl.zst"), "w"), compression="zstd") as out:
        out.write(GOOD + b"\n")
    (tmp_path / "audit:2025-06-02").mkdir()
    (tmp_path / "audit:2025-06-02" / "d.jsonl").write_bytes(GOOD + b"\n")
    done = audit_json(tmp_path, "in:1/strings.parquet", "in:1", "audit:2025-06-02", "--out", "o")
    assert (done["pairs"], done["passed"], done["input_errors"]) == (4, 4, 0)
    assert pairs(tmp_path / "o")["source"].to_list() == [
        "audit:2025-06-02/d.jsonl", "in:1/b.jsonl.gz", "in:1/c.jsonl.zst", "in:1/strings.parquet",
    ]


@pytest.mark.parametrize(("uri", "says"), [
    ("gs://bucket/logs/", "cannot use gs:// URIs"),  # gcsfs is not installed in development
    ("nope://namenode/logs/x.jsonl", "cannot use nope:// URIs"),
    ("file:///nonexistent-frayproof/x.jsonl", "does not exist"),
])
def test_unusable_uris_are_refused_before_anything_is_created(tmp_path: Path, uri: str, says: str) -> None:
    result = cli(tmp_path, "audit", uri, "--out", "o", expect=2)
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# --- 7. timestamps as logs write them ----------------------------------------------------

TIMES: list[tuple[Any, str | None]] = [
    # (logged_at, the UTC time it means; None: an input error)
    (1748858400, "2025-06-02T10:00:00"),
    (1748858400.25, "2025-06-02T10:00:00.250000"),
    (1748858400123, "2025-06-02T10:00:00.123000"),
    (99_999_999_999, "5138-11-16T09:46:39"),  # the largest number read as seconds
    (100_000_000_000, "1973-03-03T09:46:40"),  # the smallest read as milliseconds
    (-1, "1969-12-31T23:59:59"),
    ("2025-06-02T10:00:00Z", "2025-06-02T10:00:00"),
    ("2025-06-02T12:00:00+02:00", "2025-06-02T10:00:00"),
    ("2025-06-02t10:00:00.5z", "2025-06-02T10:00:00.500000"),
    ("2025-06-02T10:00:00.123456789-00:30", "2025-06-02T10:30:00.123456"),
    ("2025-06-02 10:00:00", "2025-06-02T10:00:00"),
    (True, None),
    (1e300, None),
    (-10**20, None),
    (1_700_000_000_000_000_000, None),  # nanoseconds: far past the year 9999 as milliseconds
    ("9999-12-31T23:00:00-02:00", None),
    ("yesterday", None),
]


@pytest.mark.parametrize(("value", "expected"), TIMES, ids=[repr(v) for v, _ in TIMES])
def test_logged_at_forms(value: Any, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(RecordProblem, match="logged_at"):
            parse_logged_at(value)
    else:
        moment = parse_logged_at(value)
        assert moment.tzinfo is not None
        assert moment.astimezone(UTC).replace(tzinfo=None).isoformat() == expected


def test_epoch_and_rfc3339_times_file_pairs_by_date(tmp_path: Path) -> None:
    lines = [
        b'{"before":[],"after":[],"logged_at":1748858400}',
        b'{"before":[],"after":[],"logged_at":1748858400123}',
        b'{"before":[],"after":[],"logged_at":"2025-06-03T01:00:00+02:00"}',
        b'{"before":[],"after":[],"logged_at":true}',
        b'{"before":[],"after":[],"logged_at":1e300}',
        b'{"before":[],"after":[],"logged_at":null}',
        b'{"before":[],"after":[]}',
    ]
    (tmp_path / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    done = audit_json(tmp_path, "t.jsonl", "--out", "o")
    assert (done["pairs"], done["input_errors"]) == (7, 2)
    rows = pairs(tmp_path / "o")
    today = datetime.now(UTC).date()
    assert rows["log_date"].to_list()[:3] == [datetime(2025, 6, 2).date()] * 3
    assert rows["logged_at_missing"].to_list() == [False, False, False, True, True, True, True]
    assert set(rows["log_date"].to_list()[3:]) <= {today, today.fromordinal(today.toordinal() - 1)}
    reasons = rows["input_error"].to_list()
    assert "got a boolean" in reasons[3] and "out of range" in reasons[4]


# --- 8. one odd value never costs more than its record -----------------------------------

def test_a_lone_surrogate_is_an_input_error_of_its_record(tmp_path: Path) -> None:
    # printf '{"compactor":"\\ud800","before":[],"after":[]}\n{"before":[],"after":[]}\n'
    (tmp_path / "s.jsonl").write_bytes(
        b'{"compactor":"\\ud800","before":[],"after":[]}\n{"before":[],"after":[]}\n'
    )
    done = audit_json(tmp_path, "s.jsonl", "--out", "o")
    assert (done["pairs"], done["passed"], done["input_errors"], done["not_audited"]) == (2, 1, 1, [])
    rows = pairs(tmp_path / "o")
    assert "lone surrogate \\ud800" in rows["input_error"][0]


@pytest.mark.parametrize(
    "record",
    [
        b'{"pair_id":"a\\udfff","before":[],"after":[]}',
        b'{"session_id":"\\ud83d","before":[],"after":[]}',
        b'{"before":[{"role":"assistant","content":null,"tool_calls":[{"id":"\\udc00","type":'
        b'"function","function":{"name":"r","arguments":"{}"}}]}],"after":[]}',
    ],
    ids=["pair_id", "session_id", "tool-call-id"],
)
def test_lone_surrogates_anywhere_in_a_record(tmp_path: Path, record: bytes) -> None:
    from frayproof_audit.corpus import audit

    (tmp_path / "s.jsonl").write_bytes(record + b"\n" + GOOD + b"\n")
    done = audit([str(tmp_path / "s.jsonl")], None, str(tmp_path / "o"), jobs=1, mutate=False)
    assert (done.pairs, done.input_errors, len(done.not_audited)) == (2, 1, 0)


def test_paired_surrogate_escapes_are_one_character(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(b'{"compactor":"\\ud83d\\ude00","before":[],"after":[]}\n')
    done = audit_json(tmp_path, "s.jsonl", "--out", "o")
    assert done["passed"] == 1
    assert pairs(tmp_path / "o")["compactor"].to_list() == ["\U0001f600"]


def test_a_string_no_utf8_cell_can_hold_is_replaced_not_fatal() -> None:
    builder = TableBuilder(PAIRS_SCHEMA)
    row: dict[str, Any] = dict.fromkeys(PAIRS_SCHEMA.names)
    row.update(run_id="r", pair_id="p\ud800", source="s", source_row=1, status="pass",
               record_sha256="0" * 64, compactor="\udce9")
    builder.append("2025-06-02", row)
    (table,) = builder.by_log_date().values()
    assert table.column("pair_id").to_pylist() == ["p\ufffd"]
    assert table.column("compactor").to_pylist() == ["\ufffd"]


def test_an_integer_over_4300_digits_is_an_input_error_of_its_record(tmp_path: Path) -> None:
    big = b"9" * 4301
    (tmp_path / "n.jsonl").write_bytes(b'{"before":[],"after":[],"n":' + big + b"}\n" + GOOD + b"\n")
    done = audit_json(tmp_path, "n.jsonl", "--out", "o")
    assert (done["pairs"], done["passed"], done["input_errors"], done["not_audited"]) == (2, 1, 1, [])
    assert "more than 4300 digits" in pairs(tmp_path / "o")["input_error"][0]
    config = tmp_path / "big.yaml"
    config.write_bytes(b"fields:\n  before: " + big + b"\n")
    refused = cli(tmp_path, "audit", "n.jsonl", "--out", "o2", "--config", "big.yaml", expect=2)
    assert "more than 4300 digits" in refused.stderr and not (tmp_path / "o2").exists()


def test_a_file_name_that_is_not_utf8_is_audited_and_shown_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ok.jsonl").write_bytes((GOOD + b"\n") * 200)
    bad = os.fsdecode(b"caf\xe9.jsonl")
    (logs / bad).write_bytes(GOOD + b"\n")
    done = audit_json(tmp_path, "logs", "--out", "o")
    assert (done["pairs"], done["passed"], done["not_audited"]) == (201, 201, [])
    rows = pairs(tmp_path / "o")
    assert rows["source"].unique().sort().to_list() == ["logs/caf\\xe9.jsonl", "logs/ok.jsonl"]
    assert "logs/caf\\xe9.jsonl:1" in rows["pair_id"].to_list()
    # named on the command line, the runs row keeps it too (U+FFFD: the runs table is text)
    done = audit_json(tmp_path, f"logs/{bad}", "--out", "o3")
    assert done["pairs"] == 1
    (run,) = read_table(tmp_path / "o3", "runs").collect().to_dicts()
    assert run["inputs"] == ["logs/caf\ufffd.jsonl"]
    assert display_path(str(logs / bad)).endswith("caf\\xe9.jsonl")


def test_undecodable_field_and_config_arguments_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(GOOD + b"\n")
    field = cli(tmp_path, "audit", "a.jsonl", "--out", "o", "--field", os.fsdecode(b"before=x\xff"),
                expect=2)
    assert "--field 'before=x\\xff': not valid UTF-8 text" in field.stderr
    missing = cli(tmp_path, "audit", "a.jsonl", "--out", "o", "--config", os.fsdecode(b"c\xff.yaml"),
                  expect=2)
    assert "Cannot read config 'c\\xff.yaml'" in missing.stderr
    (tmp_path / os.fsdecode(b"c\xff.yaml")).write_text("fields:\n  before: b\n")
    # the mapping is read (and points nowhere): the run goes on, and exits 2 for nothing audited
    cli(tmp_path, "audit", "a.jsonl", "--out", "o", "--config", os.fsdecode(b"c\xff.yaml"),
        "--fail-on", "none", "-q", expect=2)
    assert not (tmp_path / "o" / "_staging").exists() or not any((tmp_path / "o" / "_staging").iterdir())


def test_parquet_times_out_of_range_cost_only_their_rows(tmp_path: Path) -> None:
    micros = pa.array([1748858400 * 10**6, 300_000_000_000 * 10**6, -70_000_000_000 * 10**6])
    days = pa.array([20241, 3_000_000, -800_000], pa.int32())
    for name, times in (("ts", micros.cast(pa.timestamp("us", tz="UTC"))), ("d", days.cast(pa.date32()))):
        table = pa.table({"before": ["[]"] * 3, "after": ["[]"] * 3, "logged_at": times})
        pq.write_table(table, str(tmp_path / f"{name}.parquet"))
    done = audit_json(tmp_path, "ts.parquet", "d.parquet", "--out", "o")
    assert (done["pairs"], done["passed"], done["input_errors"], done["not_audited"]) == (6, 2, 4, [])
    rows = pairs(tmp_path / "o")
    errors = rows.filter(pl.col("status") == "input_error")
    assert errors["source_row"].to_list() == [1, 2, 1, 2]
    assert all("column 'logged_at' holds" in reason for reason in errors["input_error"])
    assert errors["record_sha256"].n_unique() == 4


def test_vertical_tab_and_form_feed_lines_are_records_not_blanks(tmp_path: Path) -> None:
    (tmp_path / "v.jsonl").write_bytes(b"\x0b\n" + GOOD + b"\n\x0c\r\n \t\r\n\n" + GOOD)
    done = audit_json(tmp_path, "v.jsonl", "--out", "o")
    assert (done["pairs"], done["passed"], done["input_errors"]) == (4, 2, 2)
    rows = pairs(tmp_path / "o")
    assert rows["source_row"].to_list() == [1, 2, 3, 6]
    assert "whitespace JSON does not allow (\\x0b)" in rows["input_error"][0]
    assert "(\\x0c)" in rows["input_error"][2]


LIMIT = 64


def record_of(size: int) -> bytes:
    """A JSON record of exactly `size` bytes."""
    head = b'{"before":[],"after":[],"p":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_record_size_and_hash_at_the_limit(tmp_path: Path, compressed: bool) -> None:
    cases = [(size, ending) for size in (LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2, 5 * LIMIT)
             for ending in (b"\n", b"\r\n")]
    records = [record_of(size) for size, _ in cases]
    data = b"".join(record + ending for record, (_, ending) in zip(records, cases, strict=True))
    data += record_of(LIMIT + 1) + b"\r"  # the last line: no newline, a CR that is content
    name = "r.jsonl.gz" if compressed else "r.jsonl"
    (tmp_path / name).write_bytes(gzip.compress(data) if compressed else data)
    done = audit_json(tmp_path, name, "--out", "o", "--max-record-bytes", str(LIMIT))
    assert done["pairs"] == len(cases) + 1
    rows = pairs(tmp_path / "o").to_dicts()
    for row, record, (size, _) in zip(rows[:-1], records, cases, strict=True):
        assert row["record_sha256"] == hashlib.sha256(record).hexdigest(), (size, row)
        if size <= LIMIT:
            assert row["status"] == "pass", row
        else:
            assert row["input_error"].endswith(f"record is {size} bytes, over --max-record-bytes {LIMIT}")
    last = record_of(LIMIT + 1) + b"\r"
    assert rows[-1]["record_sha256"] == hashlib.sha256(last).hexdigest()
    assert f"record is {LIMIT + 2} bytes" in rows[-1]["input_error"]


# --- 9. nothing hangs, nothing grows without bound, nothing is skipped silently ---------

def test_fifos_and_devices_are_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f.jsonl")
    (tmp_path / "z.jsonl").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "c.yaml")
    (tmp_path / "a.jsonl").write_bytes(GOOD + b"\n")
    for args, reason in (
        (("f.jsonl",), "input 'f.jsonl' is a FIFO, not a regular file"),
        (("z.jsonl",), "input 'z.jsonl' is a character device, not a regular file"),
        (("a.jsonl", "--config", "c.yaml"), "Cannot read config 'c.yaml': not a regular file"),
        (("-",), "standard input is not read"),
    ):
        result = cli(tmp_path, "audit", *args, "--out", "o", expect=2)
        assert reason in result.stderr
    assert not (tmp_path / "o").exists()


def test_symlink_loops_end_and_every_file_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "logs" / "a").mkdir(parents=True)
    (tmp_path / "logs" / "a" / "up1").symlink_to("..")
    (tmp_path / "logs" / "a" / "up2").symlink_to("..")
    (tmp_path / "logs" / "a" / "x.jsonl").write_bytes(GOOD + b"\n")
    for given in ("logs", "logs/**/*.jsonl"):
        done = audit_json(tmp_path, given, "--out", f"o-{given[:4]}")
        assert done["pairs"] == 1


UNLISTABLE = """
import os, sys
real = os.scandir
def scandir(path="."):
    if os.path.basename(os.fspath(path)) == "locked":
        raise PermissionError(13, "Permission denied", os.fspath(path))
    return real(path)
os.scandir = scandir
from frayproof_audit.cli import main
sys.argv = ["frayproof-audit", *sys.argv[1:]]
main()
"""


def test_a_folder_that_cannot_be_listed_stops_the_run_naming_it(tmp_path: Path) -> None:
    (tmp_path / "logs" / "locked").mkdir(parents=True)
    (tmp_path / "logs" / "a.jsonl").write_bytes(GOOD + b"\n")
    done = subprocess.run(
        [sys.executable, "-c", UNLISTABLE, "audit", "logs", "--out", "o"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2, done.stderr
    assert "cannot list input folder 'logs/locked': Permission denied" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder: the simulated test covers it")
def test_a_folder_without_permissions_stops_the_run(tmp_path: Path) -> None:
    (tmp_path / "logs" / "locked").mkdir(parents=True)
    (tmp_path / "logs" / "a.jsonl").write_bytes(GOOD + b"\n")
    (tmp_path / "logs" / "locked").chmod(0)
    try:
        result = cli(tmp_path, "audit", "logs", "--out", "o", expect=2)
    finally:
        (tmp_path / "logs" / "locked").chmod(stat.S_IRWXU)
    assert "cannot list input folder 'logs/locked'" in result.stderr


def test_planning_reads_no_more_than_the_size_found_at_expansion(tmp_path: Path) -> None:
    from frayproof_audit.corpus.inputs.shard_plan import plan

    path = tmp_path / "grow.jsonl"
    path.write_bytes(GOOD + b"\n")
    (source,) = expand_inputs([str(path)]).files
    with open(path, "ab") as handle:  # the log is still being written
        handle.write((GOOD + b"\n") * 10)
    (shard,) = plan((source,), 1 << 20)
    assert (shard.stop, shard.records) == (len(GOOD) + 1, 1)


# --- 10. --config as strict as the contract ----------------------------------------------

@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("fields:\n  before: a\n  before: b\n", "fields: duplicate key 'before' (line 3)"),
        ("base: &b {before: a}\nfields:\n  <<: *b\n", "merge keys (<<) are not allowed"),
        ("fields:\n  1: a\n", "mapping keys must be strings"),
        ("fields: " + "[" * 50 + "]" * 50 + "\n", "nested deeper than 16 levels"),
        ("fields: " + "[" * 100_000 + "\n", "nested deeper than 16 levels"),
        ("fields:\n  before: a\n" + "#" * (1 << 20) + "\n", "over 1048576"),
        ("fields:\n  before: \"\\ud800\"\n", "not valid UTF-8 text"),
    ],
    ids=["duplicate", "merge", "non-string", "deep", "very-deep", "too-big", "surrogate"],
)
def test_config_files_are_read_strictly(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        FieldMap().with_specs(load_fields_file(path))
    assert reason in str(caught.value)


def test_a_strict_config_error_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(GOOD + b"\n")
    (tmp_path / "c.yaml").write_text("fields:\n  before: a\n  before: b\n")
    result = cli(tmp_path, "audit", "a.jsonl", "--out", "o", "--config", "c.yaml", expect=2)
    assert "Invalid config 'c.yaml': fields: duplicate key 'before' (line 3)" in result.stderr
    assert not (tmp_path / "o").exists()


def test_records_are_read_whole_when_the_json_is_odd_but_fine(tmp_path: Path) -> None:
    # a BOM, a paired escape, an integer just under the limit, CRLF and no final newline
    body = orjson.dumps({"before": [], "after": [], "n": 1})[:-1] + b',"m":' + b"7" * 4300 + b"}"
    (tmp_path / "f.jsonl").write_bytes(b"\xef\xbb\xbf" + GOOD + b"\r\n" + body)
    done = audit_json(tmp_path, "f.jsonl", "--out", "o")
    assert (done["pairs"], done["passed"]) == (2, 2)


def test_logs_kept_beside_the_tables_are_still_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `audit logs --out .`: the dataset is the current folder, but logs/ is not one of its tables
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(GOOD + b"\n")
    for _ in range(2):
        done = audit_json(tmp_path, "logs", "--out", ".")
        assert (done["pairs"], done["input_errors"]) == (1, 0)
    monkeypatch.chdir(tmp_path)
    assert expand_inputs(["logs"], out=".").skipped_datasets == ()
    with pytest.raises(InputFileError, match=r"skipped frayproof-audit output: \."):
        expand_inputs(["."], out=".")
    part = next((tmp_path / "pairs").glob("*/*.parquet"))
    with pytest.raises(InputFileError, match=r"skipped frayproof-audit output: \."):
        expand_inputs([str(part.relative_to(tmp_path))])
