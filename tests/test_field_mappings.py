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
