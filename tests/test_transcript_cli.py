"""`inspect`, `repair` and `compact` on the command line: exit codes, stdout that pipes, and
one real subprocess run of each."""

from __future__ import annotations

import json
from pathlib import Path

from frayproof_audit.transcript import INTERRUPTED
from tests.helpers import FIXTURES, call, result, run_cli, user

BROKEN = FIXTURES / "transcripts"


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_inspect_exit_codes(tmp_path: Path) -> None:
    valid = write(tmp_path / "valid.json", [user(), call("a"), result("a")])
    wasteful = write(tmp_path / "wasteful.json", [user(), call("a"), result("a"), result("a")])
    broken = write(tmp_path / "broken.json", [user(), call("a")])
    assert run_cli("inspect", valid, expect=0).stdout.startswith("ok")
    assert "warn" in run_cli("inspect", wasteful, expect=0).stdout
    out = run_cli("inspect", valid, broken, expect=1).stdout
    assert "FAIL" in out and "dangling_call" in out and "2 checked, 1 invalid, 0 skipped" in out
    skipped = run_cli("inspect", valid, tmp_path / "nope.json", expect=2)
    assert "skip  " in skipped.stderr and "nope.json" not in skipped.stdout.splitlines()[0]


def test_inspect_reads_folders_and_jsonl_records(tmp_path: Path) -> None:
    lines = [json.dumps({"pair_id": "p1", "after": [user(), call("a")]}),
             json.dumps([user(), call("b"), result("b")]),
             json.dumps({"pair_id": "p2", "format": "anthropic", "after": [user("hi")]})]
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = json.loads(run_cli("inspect", tmp_path, "--format", "json", expect=1).stdout)
    assert [(i["input"].rsplit("/", 1)[1], i["valid"], i["format"]) for i in found["inputs"]] == [
        ("log.jsonl:1", False, "openai"), ("log.jsonl:2", True, "openai"),
        ("log.jsonl:3", True, "anthropic")]


def test_inspect_every_fixture_format() -> None:
    for fmt in ("openai", "anthropic", "openai-responses", "otel-genai"):
        out = run_cli("inspect", BROKEN / f"{fmt}.json", "--input-format", fmt, expect=1).stdout
        assert "orphaned_result" in out and "dangling_call" in out and "duplicate_result" in out


def test_repair_writes_stdout_that_parses_and_the_account_to_stderr() -> None:
    done = run_cli("repair", BROKEN / "anthropic.json", expect=0)
    repaired = json.loads(done.stdout)
    assert repaired["system"] and "synthesize" in done.stderr and "valid" in done.stderr
    answer = repaired["messages"][4]["content"]
    assert {"type": "tool_result", "tool_use_id": "call_2", "content": INTERRUPTED,
            "is_error": True} in answer


def test_repair_to_a_file_and_irreparable(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = run_cli("repair", BROKEN / "openai.json", "-o", out, "--format", "json", expect=0)
    account = json.loads(done.stdout)
    assert account["transcripts"][0]["valid"] and len(json.loads(out.read_text())) == 8
    twice = write(tmp_path / "twice.json", [user(), call("a"), result("a"), call("a"), result("a")])
    refused = run_cli("repair", twice, "-o", tmp_path / "never.json", expect=1)
    assert "cannot repair" in refused.stderr and not (tmp_path / "never.json").exists()
    run_cli("repair", tmp_path / "missing.json", expect=2)


def test_repair_jsonl_keeps_records(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"pair_id": "p", "after": [user(), call("a")]}) + "\n"
                   + json.dumps([user(), call("a"), result("a"), call("a"), result("a")]) + "\n",
                   encoding="utf-8")
    done = run_cli("repair", log, expect=1)
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["pair_id"] == "p" and first["after"][2]["content"] == INTERRUPTED
    assert len(second) == 5  # irreparable: passed through unchanged


def test_compact_fits_or_refuses(tmp_path: Path) -> None:
    repaired = tmp_path / "repaired.json"
    run_cli("repair", BROKEN / "openai.json", "-o", repaired, expect=0)
    done = run_cli("compact", repaired, "--max-tokens", "60", "--keep", "1", expect=0)
    assert json.loads(done.stdout)[-1] == user("Is it done?") and "dropped" in done.stderr
    refused = run_cli("compact", repaired, "--max-tokens", "5", expect=1)
    assert refused.stdout == "" and "refused" in refused.stderr
    assert "already invalid" in run_cli("compact", BROKEN / "openai.json", "--max-tokens", "5",
                                        expect=1).stderr


def test_each_command_runs_as_a_real_process(tmp_path: Path) -> None:
    out = tmp_path / "fixed.json"
    inspected = run_cli("inspect", BROKEN / "otel-genai.json", "--input-format", "otel-genai",
                        real=True, expect=1)
    assert "dangling_call" in inspected.stdout
    run_cli("repair", BROKEN / "otel-genai.json", "--input-format", "otel-genai", "-o", out,
            real=True, expect=0)
    compacted = run_cli("compact", out, "--input-format", "otel-genai", "--max-tokens", "90", "--keep", "1",
                        real=True, expect=0)
    assert json.loads(compacted.stdout)[0]["role"] == "system"
