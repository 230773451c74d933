"""docs/audit.md's promises that no other test proved, each tried through the CLI (issue 23's
"Done when": the page's promises re-read against the code).

Every test names the sentence it proves. The corpora are a few hundred bytes, so the file runs in
seconds; the subprocess cases are the ones a CliRunner cannot show (a closed pipe, a terminal on
stderr, several audits at once).
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import BAD_LINES, CONTRACT_TEXT, good_lines, write_contract, write_jsonl
from tests.helpers import REPO, run_cli


@pytest.fixture
def night(tmp_path: Path) -> tuple[Path, Path]:
    """8 good pairs (half fail the test contract) and one unreadable line; the contract."""
    write_jsonl(tmp_path / "logs" / "a.jsonl", [*good_lines(8), BAD_LINES["invalid_json"][0]])
    return tmp_path / "logs", write_contract(tmp_path)


def _audit_args(night: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    return ["audit", str(night[0]), "--contract", str(night[1]), "--out", str(out), "-j", "1", *extra]


# --- "`141` stdout was closed (a pipe into `head`)", for every command -------------------------

def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write is EPIPE
    try:
        return subprocess.run([sys.executable, "-m", "frayproof_audit", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=120, check=False)
    finally:
        os.close(write_end)


def test_a_closed_stdout_ends_audit_stats_and_runs_with_141_quietly(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    for args in (_audit_args(night, out, "--no-mutate", "--fail-on", "none"),
                 ["stats", str(out)], ["runs", str(out), "--format", "json"]):
        done = _with_closed_stdout(*args)
        assert (done.returncode, done.stderr) == (141, ""), (args, done.stderr)
    # the audit still committed its run: the pipe closed only after the work
    assert read_table(out, "pairs").collect().height == 9


# --- "`--progress` ... drawn on stderr when stderr is a terminal; never otherwise, or with -q" ----

def _stderr_on_a_terminal(*args: str) -> tuple[int, str]:
    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "frayproof_audit", *args], stdout=subprocess.DEVNULL,
                              stderr=slave, cwd=REPO, timeout=120, check=False)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return done.returncode, b"".join(chunks).decode()


def test_the_progress_line_is_drawn_on_a_terminal_only_and_never_with_quiet(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    code, shown = _stderr_on_a_terminal(*_audit_args(night, tmp_path / "o1", "--no-mutate"))
    assert code == 1  # half the pairs fail the contract
    assert "100.0% · 1/1 shards · 9 records" in shown and "rec/s" in shown
    code, quiet = _stderr_on_a_terminal(*_audit_args(night, tmp_path / "o2", "--no-mutate", "-q"))
    assert (code, quiet) == (1, "")
    piped = run_cli(*_audit_args(night, tmp_path / "o3", "--no-mutate"), expect=1, real=True)
    assert piped.stderr == ""


# --- "The `--out` tables are the same whatever the format" --------------------------------------

def _tables(out: Path) -> dict[str, pl.DataFrame]:
    return {name: read_table(out, name).collect().drop("log_date")
            for name in ("pairs", "findings", "mutants")}


def test_the_out_tables_are_the_same_whatever_the_format(night: tuple[Path, Path], tmp_path: Path) -> None:
    seen = {}
    for output in ("text", "json", "sarif", "github", "junit"):
        out = tmp_path / output
        run_cli(*_audit_args(night, out, "--run-id", "r", "--format", output), expect=1)
        seen[output] = _tables(out)
    assert seen["text"]["mutants"].height > 0 and seen["text"]["findings"].height > 0
    for output, tables in seen.items():
        for name, frame in tables.items():
            assert frame.equals(seen["text"][name]), (output, name)


# --- "Two audits into one OUT at the same time are safe" ----------------------------------------

def test_audits_into_one_out_at_the_same_time_all_commit_and_leave_nothing_behind(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    sizes = {}
    for n in range(4):
        sizes[n] = 3 + n
        write_jsonl(tmp_path / f"in{n}.jsonl", good_lines(3 + n, start=100 * n))
    out = tmp_path / "out"
    run_ids = ["r0", "r1", "same", "same"]
    processes = [
        subprocess.Popen([sys.executable, "-m", "frayproof_audit", "audit", str(tmp_path / f"in{n}.jsonl"),
                          "--contract", str(contract), "--out", str(out), "--run-id", run_id, "-j", "1",
                          "-q", "--no-mutate", "--fail-on", "none"],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n, run_id in enumerate(run_ids)
    ]
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stdout + stderr
    counts = dict(read_table(out, "pairs").group_by("run_id").len().collect().iter_rows())
    assert counts["r0"] == sizes[0] and counts["r1"] == sizes[1]
    assert counts["same"] in (sizes[2], sizes[3])  # one of the two, whole: never a mix
    sources = set(read_table(out, "pairs").filter(pl.col("run_id") == "same").collect()["source"])
    assert len(sources) == 1
    listed = {path for files in read_table(out, "runs").collect()["files"] for path in files}
    on_disk = {str(path.relative_to(out)) for path in out.rglob("*.parquet")}
    assert on_disk == listed | {f"runs/part-{run_id}.parquet" for run_id in counts}  # nothing unlisted
    assert not list((out / "_staging").iterdir())


# --- `stats --contract`: "any unique prefix of 4 or more"; `--run` naming two contracts -------------

def _other_contract(folder: Path) -> Path:
    """The test contract with the trailing-pending allowance off: another fingerprint."""
    other = folder / "other.yaml"
    other.write_text(CONTRACT_TEXT.replace("pending_call: true", "pending_call: false"), encoding="utf-8")
    return other


def _runs_of_two_contracts(folder: Path) -> Path:
    """A dataset of two runs of the same four pairs: `a` by the test contract, `b` by another."""
    source = write_jsonl(folder / "a.jsonl", good_lines(4))
    out = folder / "out"
    for run_id, contract in (("a", write_contract(folder)), ("b", _other_contract(folder))):
        audit([str(source)], str(contract), str(out), jobs=1, run_id=run_id, mutate=False, fail_on=())
    return out


def test_contract_prefixes_and_runs_of_two_contracts_named_with_run(tmp_path: Path) -> None:
    out = _runs_of_two_contracts(tmp_path)
    fingerprints = {row["run_id"]: row["contract"] for row in json.loads(
        run_cli("runs", out, "--format", "json").stdout)["runs"]}
    chosen = json.loads(run_cli("stats", out, "--contract", fingerprints["a"][:4], "--format", "json").stdout)
    assert chosen["runs"] == 1 and chosen["contract"] == fingerprints["a"]
    short = run_cli("stats", out, "--contract", fingerprints["a"][:3], expect=2)
    assert short.stderr.startswith(f"INPUT ERROR: --contract '{fingerprints['a'][:3]}'")
    mixed = run_cli("stats", out, "--run", "a", "--run", "b", expect=2, real=True)
    assert mixed.stderr.startswith("INPUT ERROR: the selected runs were judged by 2 different contracts")
    assert f"contract {fingerprints['a'][:12]}: runs a" in mixed.stderr
    assert f"contract {fingerprints['b'][:12]}: runs b" in mixed.stderr
    both = json.loads(run_cli("stats", out, "--run", "a", "--run", "b", "--contract", "all",
                              "--format", "json").stdout)
    assert both["runs"] == 2


# --- "`runs OUT` ...; `--format json`, `csv` and `parquet` hold every column" ---------------------

def test_runs_in_every_machine_format_hold_every_column(night: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_cli(*_audit_args(night, out, "--run-id", "r", "--no-mutate"), expect=1)
    text_columns = run_cli("runs", out).stdout.splitlines()[2].split()
    rows = {
        "json": json.loads(run_cli("runs", out, "--format", "json").stdout)["runs"],
        "csv": list(csv.DictReader(io.StringIO(run_cli("runs", out, "--format", "csv").stdout))),
    }
    run_cli("runs", out, "--format", "parquet", "--output", tmp_path / "runs.parquet")
    rows["parquet"] = pq.read_table(tmp_path / "runs.parquet").to_pylist()
    assert "--output" in run_cli("runs", out, "--format", "parquet", expect=2).stderr
    for name, found in rows.items():
        (row,) = found
        for column in [c for c in text_columns if c != "(UTC)"] + ["passed", "failed", "engine_errors"]:
            assert column in row, (name, column)
        assert (str(row["pairs"]), str(row["passed"]), str(row["failed"])) == ("9", "4", "4"), name


# --- --dry-run: "the same errors for a path that names nothing"; json: the records read per file ----

def test_a_dry_run_refuses_a_path_that_names_nothing_as_the_audit_does(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    for given in ("missing/", "logs/*.nothing"):
        args = ["audit", given, "--contract", str(night[1]), "--out", "o"]
        real = run_cli(*args, expect=2, cwd=tmp_path)
        dry = run_cli(*args, "--dry-run", expect=2, cwd=tmp_path)
        assert dry.stderr == real.stderr and dry.stderr.startswith("INPUT ERROR: ")
    assert not (tmp_path / "o").exists()
    write_jsonl(night[0] / "b.jsonl", good_lines(3, start=50))
    dry = run_cli(*_audit_args(night, tmp_path / "o", "--dry-run", "--format", "json"))
    document = json.loads(dry.stdout)
    per_file = {Path(entry["file"]).name: entry["records"] for entry in document["per_file"]}
    assert per_file == {"a.jsonl": 9, "b.jsonl": 3}
    assert document["records"] == 12 and not (tmp_path / "o").exists()


# --- scaling.md's table of URIs "that cannot be used" (the rows tests/test_uri_edges.py lacks) ----

@pytest.mark.parametrize(("args", "said"), [
    (("audit", "cached://x/y.jsonl", "--out", "o"),
     "INPUT ERROR: cannot use cached:// URIs: the filesystem wraps another one, which a URI alone does"
     " not name"),
    (("audit", "s3://b*/logs", "--out", "o"), "INPUT ERROR: cannot list input 's3://b*/logs': "),
    *[(("audit", "x.jsonl", "--out", f"{scheme}://ds"),
       f"OUTPUT ERROR: --out '{scheme}://ds': {scheme}:// cannot be written, and a dataset is written")
      for scheme in ("tar", "github", "git", "data", "reference", "libarchive")],
])
def test_every_unusable_uri_of_the_table_is_one_line_and_exit_2(
    args: tuple[str, ...], said: str, tmp_path: Path
) -> None:
    (tmp_path / "x.jsonl").write_bytes(good_lines(1)[0])
    done = run_cli(*args, expect=2, cwd=tmp_path)
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(said), done.stderr
    assert sorted(os.listdir(tmp_path)) == ["x.jsonl"]


# --- "The output is never an input: ... and the summary says so once" -----------------------------

def test_the_summary_names_the_output_it_skipped_once(night: tuple[Path, Path]) -> None:
    out = night[0] / "audit-out"
    run_cli(*_audit_args(night, out, "--no-mutate", "--fail-on", "none"))
    again = run_cli(*_audit_args(night, out, "--no-mutate", "--fail-on", "none", "--run-id", "second"))
    assert again.stdout.count(f"skipped frayproof-audit output (not logs): {out}") == 1
    document = json.loads(run_cli(*_audit_args(night, out, "--no-mutate", "--fail-on", "none",
                                               "--format", "json")).stdout)
    assert document["notes"] == [f"skipped frayproof-audit output (not logs): {out}"]
    assert document["pairs"] == 9


# --- the defaults the page states, as a CLI run with no options records them (`runs.options`) -----

DEFAULTS = {
    "fail_on": ["failures"],  # "Gates (`--fail-on` is repeatable; default `failures`)"
    "max_input_error_rate": 0.5,  # "`--max-input-error-rate R` (default 0.5)"
    "max_failure_rate": None,
    "max_mutants_per_pair": 2000,  # "`--max-mutants-per-pair N` (default **2,000**)"
    "max_record_bytes": 64 * 1024 * 1024,  # "`--max-record-bytes` (default 64 MiB)"
    "shard_bytes": 16 * 1024 * 1024,  # "about `--shard-bytes` (default 16 MiB)"
    "n_jobs": -1,  # "`--jobs` defaults to `-1`"
    "mutate": True,
    "source": "auto",  # "`auto`, the default"
    "backend": "loky",
    "incremental": False,
    "allow_engine_errors": False,
}


def test_a_run_without_options_records_the_documented_defaults(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run_cli("audit", night[0], "--contract", night[1], "--out", out, "-q", expect=1, real=True)
    (row,) = read_table(out, "runs").collect().to_dicts()
    options = json.loads(row["options"])
    assert {name: options[name] for name in DEFAULTS} == DEFAULTS
    assert row["n_jobs"] == 1  # "a small input runs in the process itself"
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", row["run_id"]), row["run_id"]


# --- "`--format json` prints the same as one JSON document ...": every key the page names ---------

SUMMARY_KEYS = {
    "": ("schema_version", "pairs", "passed", "failed", "input_errors", "failure_rate", "mutation",
         "checks", "compactors", "operators", "input_error_samples", "not_audited", "incremental",
         "gates", "gate_failures", "exit_code"),
    "mutation": ("caught", "survived", "skipped", "score", "budget_pairs", "budget_sites_not_judged"),
    "checks": ("check", "findings", "pairs_affected", "failing_pairs"),
    "compactors": ("compactor", "pairs", "failed", "input_errors"),
    "operators": ("operator", "applicable", "caught", "survived", "skipped", "survival_rate"),
}


def test_the_json_summary_holds_every_key_the_page_names(night: tuple[Path, Path], tmp_path: Path) -> None:
    document = json.loads(run_cli(*_audit_args(night, tmp_path / "out", "--format", "json"), expect=1).stdout)
    assert document["schema_version"] == 2 and document["incremental"] is None
    for part, keys in SUMMARY_KEYS.items():
        value = document[part] if part else document
        entry = value[0] if isinstance(value, list) else value
        assert set(keys) <= set(entry), (part, set(keys) - set(entry))


# --- "audits only what no *other* committed `--incremental` run with the same contract fingerprint
# audited" -------------------------------------------------------------------------------------------

def test_only_incremental_runs_of_the_same_contract_count_as_audited(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    other = _other_contract(tmp_path)
    logs = write_jsonl(tmp_path / "logs" / "a.jsonl", good_lines(5))
    out = tmp_path / "out"

    def run(run_id: str, judged_by: Path, incremental: bool = True) -> int:
        return audit([str(logs)], str(judged_by), str(out), jobs=1, mutate=False, run_id=run_id,
                     incremental=incremental, fail_on=("none",)).pairs

    assert run("plain", contract, incremental=False) == 5
    assert run("inc-1", contract) == 5  # a run without --incremental recorded no ranges
    assert run("other-contract", other) == 5  # another fingerprint: its own history
    assert run("inc-2", contract) == 0
    assert run("other-again", other) == 0


# --- "Logs kept in `/srv/audit/summaries/` beside the tables are never taken for part of the
# dataset" -----------------------------------------------------------------------------------------

def test_the_nightly_scripts_outputs_beside_the_tables_are_not_part_of_the_dataset(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "srv-audit"
    summaries = out / "summaries"
    summaries.mkdir(parents=True)
    first = run_cli(*_audit_args(night, out, "--run-id", "n1", "--incremental", "--format", "json", "-q",
                                 "--fail-on", "none"))
    (summaries / "n1.json").write_text(first.stdout, encoding="utf-8")
    run_cli("stats", out, "--by", "log_date", "--format", "csv", "--output", summaries / "by-night.csv")
    run_cli("stats", out, "--format", "parquet", "--output", summaries / "by-night.parquet")
    run_cli("trend", out, "--png", summaries / "trend.png", "--badge", summaries / "badge.json")
    before = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert before["runs"] == 1 and before["pairs"][0]["pairs"] == 9
    for args in (("runs", out), ("trend", out), ("report", out, "-o", summaries / "r.html")):
        run_cli(*args)
    assert json.loads(run_cli("stats", out, "--format", "json").stdout) == before
    again = run_cli(*_audit_args(night, out, "--run-id", "n2", "--incremental", "--format", "json",
                                 "--fail-on", "none"))
    assert json.loads(again.stdout)["incremental"]["skipped_records"] == 9  # it read n1's runs row


# --- "Runs written before fingerprints existed ... join the newer runs of the same contract; a text
# that no longer parses forms its own group, named `sha256:<hash of the text>`" ------------------------

def test_runs_without_a_fingerprint_join_by_their_text_or_form_a_group_of_their_own(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(4))
    out = tmp_path / "out"
    for run_id in ("old", "new"):
        audit([str(source)], str(contract), str(out), jobs=1, mutate=False, run_id=run_id, fail_on=())
    path = out / "runs" / "part-old.parquet"

    def rewrite(column: str, value: object) -> None:
        table = pq.read_table(path)
        index = table.schema.get_field_index(column)
        pq.write_table(table.set_column(index, table.schema.field(index),
                                        pa.array([value], table.schema.field(index).type)),
                       path)

    rewrite("contract_fingerprint", None)
    joined = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert joined["runs"] == 2 and joined["left_out"] == []
    rewrite("contract_text", "version: 99\n")  # no longer parses
    sha = pq.read_table(path)["contract_sha256"][0].as_py()
    alone = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert alone["runs"] == 1
    assert alone["left_out"] == [{"run_id": "old", "contract": f"sha256:{sha}", "reason": "contract"}]


# --- "Names starting with `.` or `_` (`_SUCCESS`, `.crc`) are skipped, as Spark and Hive do", and
# scaling.md: inputs on object storage "are expanded as local ones are" ------------------------------

HIDDEN_TREE = ("a.jsonl", "_c.jsonl", ".e.jsonl", "_tmp/d.jsonl", "sub/b.jsonl", "sub/_f.jsonl")
HIDDEN_CASES = [
    # (input, relative to the logs folder; the files it names, relative too)
    ("", ["a.jsonl", "sub/b.jsonl"]),  # a walk
    ("*.jsonl", ["a.jsonl"]),  # a wildcard meets `_c.jsonl` and `.e.jsonl`: left out
    ("*", ["a.jsonl", "sub/b.jsonl"]),  # ... and `_tmp/`
    ("*/*.jsonl", ["sub/b.jsonl"]),
    ("**/*.jsonl", ["a.jsonl", "sub/b.jsonl"]),
    ("_c.jsonl", ["_c.jsonl"]),  # a file named in full is read
    ("_tmp/*.jsonl", ["_tmp/d.jsonl"]),  # a folder named in full is entered
    ("_*.jsonl", ["_c.jsonl"]),  # a pattern part that itself starts with `_` asks for those names
]


@pytest.mark.parametrize(("given", "expected"), HIDDEN_CASES,
                         ids=[given or "walk" for given, _ in HIDDEN_CASES])
@pytest.mark.parametrize("where", ["local", "memory"])
def test_hidden_names_are_skipped_where_a_walk_or_a_wildcard_meets_them_locally_and_remotely(
    where: str, given: str, expected: list[str], tmp_path: Path
) -> None:
    import fsspec

    from frayproof_audit.corpus.inputs.expansion import expand_inputs

    if where == "local":
        root = str(tmp_path / "logs")
        for name in HIDDEN_TREE:
            write_jsonl(Path(root) / name, good_lines(1))
    else:
        root = f"memory://hidden-{tmp_path.name}/logs"
        memory = fsspec.filesystem("memory")
        for name in HIDDEN_TREE:
            memory.pipe(f"{root.removeprefix('memory://')}/{name}", good_lines(1)[0])
    found = expand_inputs([f"{root}/{given}" if given else root]).files
    assert sorted(file.path.removeprefix(root + "/") for file in found) == expected


def test_a_glob_through_the_cli_leaves_out_the_hidden_names_it_meets(night: tuple[Path, Path]) -> None:
    write_jsonl(night[0] / "_SUCCESS.jsonl", [BAD_LINES["invalid_json"][0]])
    done = json.loads(run_cli("audit", f"{night[0]}/*.jsonl", "--contract", night[1], "--out",
                              night[0].parent / "out", "-j", "1", "--format", "json", expect=1).stdout)
    assert (done["pairs"], done["input_errors"]) == (9, 1)


# --- Python: "It raises `InputError` (a bad contract, option or path) before doing anything" --------

BAD_CALLS = {
    "missing input": ({"inputs": ["nothere"]}, "input 'nothere' does not exist"),
    "bad contract": ({"contract": "bad.yaml"}, "Invalid contract 'bad.yaml'"),
    "jobs": ({"jobs": 0}, "jobs must be"),
    "failure rate": ({"max_failure_rate": 2.0}, "--max-failure-rate must be between 0 and 1"),
    "operator": ({"operators": ("zz",)}, "unknown operator(s) zz"),
    "field": ({"fields": {"colour": "x"}}, "unknown field 'colour'"),
    "run id": ({"run_id": "../x"}, "run id '../x' must be"),
    "backend": ({"backend": "spark"}, "unknown backend 'spark'"),
    "repair-out URI": ({"repair_out": "s3://b/r"}, "--repair-out 's3://b/r' is a URI"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_the_library_raises_input_error_before_doing_anything(
    case: str, night: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frayproof_audit.errors import InputError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("version: 1\nchecks: {nope: 1}\n", encoding="utf-8")
    changes, said = BAD_CALLS[case]
    given = {"inputs": [str(night[0])], "contract": str(night[1]), "jobs": 1, **changes}
    with pytest.raises(InputError, match=re.escape(said)):
        audit(given.pop("inputs"), given.pop("contract"), str(tmp_path / "out"), **given)
    assert not (tmp_path / "out").exists()


# --- Parquet: "in nested columns a null field is read as absent (a message written without
# `tool_calls` reads back without it)" ------------------------------------------------------------

def test_nested_parquet_reads_null_struct_fields_as_absent_as_jsonl_has_them(tmp_path: Path) -> None:
    from tests.corpus_support import record, write_parquet

    records = [record(i) for i in range(8)]  # user messages beside calls: Arrow gives them tool_calls
    for rec in records:  # JSONL without the nulls a struct column cannot leave out
        for side in ("before", "after"):
            rec[side] = [{k: v for k, v in message.items() if v is not None} for message in rec[side]]
    contract = write_contract(tmp_path)
    frames = {}
    for kind in ("jsonl", "parquet"):
        source = (write_jsonl(tmp_path / "a.jsonl", [json.dumps(r).encode() + b"\n" for r in records])
                  if kind == "jsonl" else write_parquet(tmp_path / "a.parquet", records, nested=True))
        audit([str(source)], str(contract), str(tmp_path / kind), jobs=1, run_id="r", fail_on=())
        frames[kind] = read_table(tmp_path / kind, "pairs").collect().sort("pair_id").select(
            "pair_id", "status", "errors", "messages_before", "bytes_before", "bytes_after",
            "mutants_caught", "mutants_survived")
    assert pq.read_schema(tmp_path / "a.parquet").field("before").type.value_type.get_field_index(
        "tool_calls") >= 0  # every message of the column has a tool_calls field, null in most
    assert frames["parquet"].equals(frames["jsonl"])  # the same bytes: no null field read back


# --- stats: the left-out line "on stderr for `csv` and `parquet`; in `left_out` for `json`" --------

def test_the_left_out_line_goes_to_stderr_for_csv_and_parquet_and_into_json(tmp_path: Path) -> None:
    out = _runs_of_two_contracts(tmp_path)
    said = "left out 1 run(s) of 1 other contract(s)"
    text = run_cli("stats", out)
    assert said in text.stdout and text.stderr == ""
    table = run_cli("stats", out, "--format", "csv")
    assert said in table.stderr and said not in table.stdout
    assert table.stdout.splitlines()[0].split(",")[-1] == "code"  # "the last column, `code`"
    written = run_cli("stats", out, "--format", "parquet", "--output", tmp_path / "s.parquet")
    assert said in written.stderr and written.stdout == ""
    document = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert [entry["run_id"] for entry in document["left_out"]] == ["a"]


# --- Managing runs: "lists the committed runs, oldest first"; "A run id that is not committed is exit
# 2, and nothing is created or touched" -------------------------------------------------------------

def _tree(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((str(path.relative_to(folder)), path.stat().st_mtime_ns, path.stat().st_size)
                  for path in folder.rglob("*"))


def test_runs_are_listed_oldest_first_and_deleting_a_missing_one_touches_nothing(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(3))
    out = tmp_path / "out"
    for run_id in ("z-first", "m-second", "a-third"):
        audit([str(source)], str(contract), str(out), jobs=1, run_id=run_id, mutate=False, fail_on=())
    listed = json.loads(run_cli("runs", out, "--format", "json").stdout)["runs"]
    assert [row["run_id"] for row in listed] == ["z-first", "m-second", "a-third"]
    before = _tree(out)
    done = run_cli("runs", out, "--delete", "nope", expect=2, real=True)
    assert done.stderr == f"INPUT ERROR: no committed run 'nope' in '{out}'\n"
    assert _tree(out) == before  # not even the lock file's time


# --- "`pairs_affected` and `failing_pairs` mean the same in the run summary's `checks`; the text
# summary's "pairs with an error" column is `failing_pairs`" -------------------------------------------

def test_the_run_summarys_check_metrics_are_the_stats_of_that_run(
    night: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = json.loads(run_cli(*_audit_args(night, out, "--format", "json", "--run-id", "r"),
                                 expect=1).stdout)
    stats = json.loads(run_cli("stats", out, "--run", "r", "--format", "json").stdout)
    metrics = ("findings", "pairs_affected", "failing_pairs")
    mine = {row["check"]: tuple(row[m] for m in metrics) for row in summary["checks"]}
    theirs = {row["check"]: tuple(row[m] for m in metrics) for row in stats["checks"]}
    assert mine and {check: theirs[check] for check in mine} == mine
    assert all(values == (0, 0, 0) for check, values in theirs.items() if check not in mine)
    text = run_cli(*_audit_args(night, tmp_path / "again"), expect=1).stdout
    block = text.split("Top failing checks (pairs with an error · findings):\n", 1)[1].splitlines()
    shown = [line.split() for line in block[:len(mine)]]
    assert {check: (int(failing), int(findings)) for check, failing, _, findings in shown} == {
        check: (values[2], values[0]) for check, values in mine.items()}


# --- the inputs table: ids may be integers; "An unknown name is an input error, and the row keeps the
# name for you to find" -------------------------------------------------------------------------------

RECORD_FIELDS = [
    # (changes to a good record, (pair_id, session_id, format, status), a fragment of input_error)
    ({"pair_id": 7, "session_id": 9}, ("7", "9", "openai", "pass"), None),
    ({"format": "palm"}, ("p0001", "s1", "palm", "input_error"), "format must be one of openai, "),
    ({"pair_id": 1.5}, ("{source}:3", "s2", "openai", "input_error"),
     "pair_id must be a string or an integer, got a number"),
    ({"pair_id": True}, ("{source}:4", "s3", "openai", "input_error"),
     "pair_id must be a string or an integer"),
    ({"session_id": [1]}, ("p0004", None, "openai", "input_error"),
     "session_id must be a string or an integer"),
]


def test_record_fields_of_the_inputs_table(tmp_path: Path) -> None:
    from tests.corpus_support import line, record

    source = write_jsonl(tmp_path / "a.jsonl", [line({**record(n, "keep_all"), **changes})
                                                for n, (changes, _, _) in enumerate(RECORD_FIELDS)])
    audit([str(source)], str(write_contract(tmp_path)), str(tmp_path / "out"), jobs=1, mutate=False,
          fail_on=())
    rows = read_table(tmp_path / "out", "pairs").collect().sort("source_row")
    for row, (changes, expected, reason) in zip(rows.iter_rows(named=True), RECORD_FIELDS, strict=True):
        wanted = tuple(value.format(source=source) if isinstance(value, str) else value for value in expected)
        assert (row["pair_id"], row["session_id"], row["format"], row["status"]) == wanted, changes
        assert (row["input_error"] is None) if reason is None else (reason in row["input_error"]), changes


# --- "a JSONL line that long is hashed and skipped in pieces, never held in memory whole" -------------

def _peak_mib(*args: str) -> int:
    """The peak resident size of `frayproof-audit ARGS` (no pool: `-j 1`), in MiB."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True,"
             " stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "frayproof_audit", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=True)
    return int(done.stdout.split()[-1]) // 1024


def test_a_line_over_the_record_limit_is_never_held_whole(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    small = write_jsonl(tmp_path / "small.jsonl", good_lines(2))
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as handle:
        handle.write(b'{"before": [], "after": [], "pad": "')
        chunk = b"x" * (1 << 20)
        for _ in range(64):
            handle.write(chunk)
        handle.write(b'"}\n')
        handle.write(b"".join(good_lines(2)))
    common = ("--contract", str(contract), "-j", "1", "-q", "--no-mutate", "--fail-on", "none",
              "--max-record-bytes", str(1 << 20))
    baseline = _peak_mib("audit", str(small), "--out", str(tmp_path / "o1"), *common)
    peak = _peak_mib("audit", str(big), "--out", str(tmp_path / "o2"), *common)
    assert peak < baseline + 32, (baseline, peak)  # a 64 MiB line held whole would add 64 MiB or more
    (row,) = read_table(tmp_path / "o2", "pairs").filter(pl.col("source_row") == 1).collect().to_dicts()
    assert row["status"] == "input_error" and "over --max-record-bytes" in row["input_error"]


# --- tables.md: `runs.backend` is the `--backend` ------------------------------------------------------

def test_the_runs_row_records_the_backend_given(night: tuple[Path, Path], tmp_path: Path) -> None:
    run_cli(*_audit_args(night, tmp_path / "out", "--backend", "threading", "--no-mutate", "-q"), expect=1)
    (row,) = read_table(tmp_path / "out", "runs").collect().to_dicts()
    assert row["backend"] == "threading"


# --- "`stats`, `trend` and `report` leave failed runs out (and say so in one line) unless `--run`
# names one" -------------------------------------------------------------------------------------------

def test_trend_and_report_leave_a_failed_run_out_unless_run_names_it(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(4))
    out = tmp_path / "out"
    audit([str(source)], str(contract), str(out), jobs=1, run_id="good", mutate=False, fail_on=())
    failed = audit([str(source)], str(contract), str(out), jobs=1, run_id="bad", mutate=False, fail_on=(),
                   fields={"before": "nope"})
    assert failed.exit_code == 2
    said = "Left out 1 failed run(s), where no record could be checked: bad"
    assert run_cli("runs", out).stdout.splitlines()[0] == (
        f"2 committed run(s) in '{out}', 1 contract(s), 1 failed (left out of stats, trend and report)")
    trend = run_cli("trend", out)
    assert trend.stdout.count(said) == 1
    assert json.loads(run_cli("trend", out, "--format", "json").stdout)["runs"] == ["good"]
    assert json.loads(run_cli("trend", out, "--run", "bad", "--format", "json").stdout)["runs"] == ["bad"]
    report = run_cli("report", out, "-o", tmp_path / "r.html")
    assert report.stderr.count(said) == 1 and "1 run(s), 4 pairs" in report.stdout
    named = run_cli("report", out, "--run", "bad", "-o", tmp_path / "bad.html")
    assert "1 run(s), 4 pairs" in named.stdout and said not in named.stderr


# --- "a part file must hold exactly the columns and types of its run's schema version"; locally, one
# with no rows is not read (docs/audit.md says so): the numbers stay right ------------------------------

def test_a_damaged_part_file_without_rows_changes_no_number(tmp_path: Path) -> None:
    from frayproof_audit.corpus.dataset.checked_files import committed_files

    contract = write_contract(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(6))
    out = tmp_path / "out"
    for run_id in ("r1", "r2"):  # r2, incremental, finds nothing new: its part files are empty
        audit([str(source)], str(contract), str(out), jobs=1, run_id=run_id, incremental=True, fail_on=())
    healthy = {table: read_table(out, table).collect() for table in ("pairs", "findings", "mutants")}
    stats = run_cli("stats", out, "--format", "json").stdout
    for table in healthy:
        (empty,) = [path for path in committed_files(out, table) if "part-r2-" in path]
        assert pq.ParquetFile(empty).metadata.num_rows == 0
        pq.write_table(pa.table({"unrelated": pa.array([], pa.int64())}), empty)
    for table, frame in healthy.items():
        assert read_table(out, table).collect().equals(frame)
    assert run_cli("stats", out, "--format", "json").stdout == stats
    (full,) = [path for path in committed_files(out, "pairs") if "part-r1-" in path]
    table = pq.ParquetFile(full).read()
    pq.write_table(table.append_column("extra", pa.array([1] * table.num_rows)), full)
    damaged = run_cli("stats", out, expect=2)  # a file with rows is checked: named, exit 2
    assert damaged.stderr.startswith(f"INPUT ERROR: damaged dataset: cannot read '{full}' (run 'r1')")
    assert "unknown column 'extra'" in damaged.stderr


# --- Hive: "a `key=value` folder fills that field for records that lack it (values are URL-decoded)" --

def test_hive_folders_fill_only_the_fields_a_record_lacks_url_decoded(tmp_path: Path) -> None:
    from tests.corpus_support import line, record

    lacking = {k: v for k, v in record(1, "keep_all").items() if k not in ("compactor", "session_id")}
    own = {**record(2, "keep_all"), "compactor": "own", "session_id": "mine"}
    folder = tmp_path / "logs" / "year=2025" / "compactor=trim%2Fv2" / "session_id=s%20x"
    source = write_jsonl(folder / "a.jsonl", [line(lacking), line(own)])
    audit([str(tmp_path / "logs")], str(write_contract(tmp_path)), str(tmp_path / "out"), jobs=1,
          mutate=False, fail_on=())
    rows = read_table(tmp_path / "out", "pairs").collect().sort("source_row")
    assert rows.select("compactor", "session_id", "status").rows() == [
        ("trim/v2", "s x", "pass"), ("own", "mine", "pass")]
    assert set(rows["source"]) == {str(source)}


# --- --dry-run "parses them as strictly as the audit does" ---------------------------------------------

def test_a_dry_run_finds_unreadable_the_lines_the_audit_cannot_parse(tmp_path: Path) -> None:
    unparsable = ("invalid_json", "truncated", "duplicate_keys", "nan", "undecodable", "not_an_object",
                  "deep")
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(3) + [BAD_LINES[kind][0] for kind in unparsable])
    args = ("audit", source, "--contract", write_contract(tmp_path), "--out", tmp_path / "o", "-j", "1",
            "--format", "json")
    dry = json.loads(run_cli(*args, "--dry-run", expect=None).stdout)
    assert (dry["records"], dry["unreadable"]) == (10, len(unparsable))
    assert dry["first_problem"].startswith(f"{source} line 4: invalid JSON")
    audited = json.loads(run_cli(*args, expect=None).stdout)
    assert (audited["pairs"], audited["input_errors"]) == (10, len(unparsable))


# --- runs --delete: "a lazy frame read before and collected after raises `DatasetChanged`" -------------

def test_a_frame_read_before_a_delete_and_collected_after_raises_dataset_changed(tmp_path: Path) -> None:
    from frayproof_audit.corpus.dataset.checked_files import DatasetChanged

    contract = write_contract(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", good_lines(3))
    out = tmp_path / "out"
    for run_id in ("keep", "gone"):
        audit([str(source)], str(contract), str(out), jobs=1, run_id=run_id, mutate=False, fail_on=())
    frames = {table: read_table(out, table) for table in ("pairs", "runs")}
    run_cli("runs", out, "--delete", "gone")
    for frame in frames.values():
        with pytest.raises(DatasetChanged, match="run 'gone' was replaced or deleted"):
            frame.collect()
    assert set(read_table(out, "pairs").collect()["run_id"]) == {"keep"}


# --- exit `130` / `143`, "interrupted by Ctrl-C / SIGTERM": "same" for every command -----------------
# (audit is interrupted for real by tests/test_hardening_run.py; here the signal arrives inside the
# library call each other command makes, as `Interrupted` is what the SIGTERM handler raises)

INTERRUPTIBLE = {
    "stats": (("stats", "{out}"), "frayproof_audit.corpus.dataset.stats.compute_stats"),
    "runs": (("runs", "{out}"), "frayproof_audit.corpus.dataset.run_list.list_runs"),
    "validate": (("validate", "--snapshot", "{snapshot}"), "frayproof_audit.cli.single.validate"),
}


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", list(INTERRUPTIBLE))
def test_every_command_exits_130_or_143_when_interrupted(
    command: str, signum: str, night: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    from frayproof_audit.cli.entry import Interrupted

    out = tmp_path / "out"
    run_cli(*_audit_args(night, out, "--no-mutate", "-q"), expect=1)
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    args, target = INTERRUPTIBLE[command]

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt if signum == "SIGINT" else Interrupted(signal.SIGTERM)

    monkeypatch.setattr(target, interrupted)
    done = run_cli(*(arg.format(out=out, snapshot=snapshot) for arg in args), expect=None)
    name = "Ctrl-C" if signum == "SIGINT" else "SIGTERM"
    assert (done.exit_code, done.stderr.splitlines()[0]) == (
        130 if signum == "SIGINT" else 143, f"INTERRUPTED: stopped by {name}"), done.stderr


# --- "Every file is read once even when two inputs name it" (spelled as a path, a file:// and a
# local:// URI, through a symlinked folder and a glob) ------------------------------------------------

def test_a_file_named_five_ways_is_read_once(night: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(night[0])
    path = night[0] / "a.jsonl"
    names = [str(path), path.as_uri(), f"local://{path}", str(tmp_path / "link"), f"{night[0]}/*.jsonl"]
    done = json.loads(run_cli("audit", *names, "--contract", night[1], "--out", tmp_path / "out", "-j", "1",
                              "--format", "json", "--no-mutate", expect=1).stdout)
    assert done["pairs"] == 9
    assert set(read_table(tmp_path / "out", "pairs").collect()["source"]) == {str(path)}


# --- Incremental identity of inputs that cannot be appended to: "a compressed or Parquet file ...: the
# same size and hash"; a rename is recognised (scaling.md: "anything else (... a compressed or Parquet
# file that changed ...): audited in full") ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["a.parquet", "a.jsonl.gz"])
def test_a_parquet_or_compressed_input_is_skipped_unchanged_audited_in_full_changed_and_followed_renamed(
    name: str, tmp_path: Path
) -> None:
    from tests.corpus_support import record, write_parquet

    contract = str(write_contract(tmp_path))
    logs = tmp_path / "logs"

    def write(count: int) -> None:
        if name.endswith(".parquet"):
            write_parquet(logs / name, [record(i) for i in range(count)])
        else:
            write_jsonl(logs / name, good_lines(count))

    def night(run_id: str) -> tuple[int, dict[str, object]]:
        done = audit([str(logs)], contract, str(tmp_path / "out"), jobs=1, run_id=run_id, incremental=True,
                     mutate=False, fail_on=("none",))
        assert done.skipped is not None
        return done.pairs, done.skipped.to_dict()

    write(5)
    assert night("n1")[0] == 5
    pairs, skipped = night("n2")
    assert (pairs, skipped["unchanged_inputs"], skipped["skipped_records"]) == (0, 1, 5)
    write(7)  # rewritten with two more records: not an append, the whole file again
    pairs, skipped = night("n3")
    assert (pairs, skipped["changed_inputs"]) == (7, 1)
    (logs / name).rename(logs / f"renamed-{name}")
    pairs, skipped = night("n4")
    assert (pairs, skipped["moved_inputs"], skipped["moved_records_skipped"]) == (0, 1, 7)


# --- Parquet: "`before` and `after` may be JSON strings (parsed as strictly as JSONL)" ------------------

PARQUET_STRINGS = [
    # (the `after` string, a fragment of its row's input_error; None: it passes)
    ('[{"role": "user", "content": "a", "content": "b"}]', "duplicate key 'content'"),
    ('[{"role": "user", "content": NaN}]', "non-finite number NaN"),
    ("[" * 600 + "]" * 600, "nested deeper than 512 levels"),
    ('[{"role": "user", "content": "\\ud800"}]', "lone surrogate"),
    ('[{"role": "user", "content": "x"}] trailing', "Extra data"),
    ('[{"role": "user", "content": 1' + "0" * 4400 + "}]", "more than 4300 digits"),
    (None, None),
]


def test_json_strings_in_parquet_are_parsed_as_strictly_as_jsonl(tmp_path: Path) -> None:
    from tests.corpus_support import record

    good = record(1, "keep_all")
    rows = [{"before": json.dumps(good["before"]),
             "after": after if after is not None else json.dumps(good["after"])}
            for after, _ in PARQUET_STRINGS]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "a.parquet")
    audit([str(tmp_path / "a.parquet")], str(write_contract(tmp_path)), str(tmp_path / "out"), jobs=1,
          mutate=False, fail_on=())
    found = read_table(tmp_path / "out", "pairs").collect().sort("source_row")
    for row, (after, reason) in zip(found.iter_rows(named=True), PARQUET_STRINGS, strict=True):
        if reason is None:
            assert row["status"] == "pass"
        else:
            where = f"{tmp_path / 'a.parquet'} row {row['source_row']}"
            assert row["input_error"].startswith(f"{where}: after is not valid JSON"), row
            assert reason in row["input_error"], (after[:40], row["input_error"])
