"""`inspect`, `repair` and `compact` on the command line: exit codes, stdout that pipes, many
inputs in (files, folders, JSONL) and JSONL out, `--profile`, `auto` on every format, and
real subprocess runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    assert (account["changed"], account["skipped"]) == (1, 0)
    assert account["inputs"][0]["valid"] and len(json.loads(out.read_text())) == 8
    twice = write(tmp_path / "twice.json", [user(), call("a"), result("a"), call("a"), result("a")])
    refused = run_cli("repair", twice, "-o", tmp_path / "never.json", expect=1)
    assert "cannot repair" in refused.stderr and not (tmp_path / "never.json").exists()
    run_cli("repair", tmp_path / "missing.json", expect=2)


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_repair_jsonl_writes_one_line_per_transcript_in_input_order(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"pair_id": "p", "after": [user(), call("a")]}) + "\n"
                   + json.dumps([user(), call("a"), result("a"), call("a"), result("a")]) + "\n"
                   + "{oops\n" + json.dumps([user(), call("b"), result("b")]) + "\n",
                   encoding="utf-8")
    done = run_cli("repair", log, expect=1)  # refused wins over skipped, as FATAL does in inspect
    found = lines(done.stdout)
    assert [(line["source"], line["line"], line["status"]) for line in found] == [
        (str(log), 1, "changed"), (str(log), 2, "refused"), (str(log), 3, "skipped"),
        (str(log), 4, "unchanged")]
    assert found[0]["pair_id"] == "p" and found[0]["format"] == "openai"
    assert found[0]["after"][2]["content"] == INTERRUPTED and found[0]["reason"] is None
    assert found[1]["after"] is None and found[1]["reason"].startswith("cannot repair")
    assert found[2]["after"] is None and "not valid JSON" in found[2]["reason"]
    assert found[3]["after"] == [user(), call("b"), result("b")]
    assert f"{log}:2: cannot repair" in done.stderr and f"skip  {log}:3: not valid JSON" in done.stderr
    assert "1 changed, 1 unchanged, 1 refused, 1 skipped" in done.stderr


def test_repair_several_paths_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    write(folder / "b.json", [user(), call("b")])
    write(folder / "a.json", [user(), call("a"), result("a")])
    alone = write(tmp_path / "alone.json", [user(), call("c"), result("c"), result("c")])
    done = run_cli("repair", folder, alone, tmp_path / "missing.json", expect=2)
    found = lines(done.stdout)
    assert [(Path(line["source"]).name, line["status"]) for line in found] == [
        ("a.json", "unchanged"), ("b.json", "changed"), ("alone.json", "changed"),
        ("missing.json", "skipped")]
    assert found[2]["after"] == [user(), call("c"), result("c")]
    assert run_cli("repair", folder, alone, "--format", "json", expect=0).stderr.count('"input"') == 3
    # A folder is JSONL out even when it holds one transcript: the arguments decide the shape.
    (folder / "b.json").unlink()
    assert lines(run_cli("repair", folder, expect=0).stdout)[0]["status"] == "unchanged"


def test_a_run_where_every_input_was_skipped_never_passes(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    for command, extra in (("repair", []), ("compact", ["--max-tokens", "50"])):
        done = run_cli(command, tmp_path / "bad.json", tmp_path / "empty", *extra, expect=2)
        assert [line["status"] for line in lines(done.stdout)] == ["skipped", "skipped"]
        assert run_cli(command, tmp_path / "bad.json", *extra, expect=2).stdout == ""


def test_output_lines_read_back_as_records(tmp_path: Path) -> None:
    repaired = tmp_path / "repaired.jsonl"
    account = run_cli("repair", BROKEN, "-o", repaired, expect=0).stdout
    assert "4 changed, 0 unchanged, 0 refused, 0 skipped" in account
    assert "4 checked, 0 invalid" in run_cli("inspect", repaired, expect=0).stdout
    done = run_cli("compact", repaired, "--max-tokens", "60", "--keep", "1", expect=0)
    assert [(line["line"], line["format"], line["status"]) for line in lines(done.stdout)] == [
        (1, "anthropic", "changed"), (2, "openai-responses", "changed"), (3, "openai", "changed"),
        (4, "otel-genai", "changed")]


def test_compact_several_transcripts_refuses_one(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps([user(), call("a")]) + "\n"
                   + json.dumps([user("x" * 400), call("a"), result("a"), user("short")]) + "\n",
                   encoding="utf-8")
    done = run_cli("compact", log, "--max-tokens", "40", "--keep", "1", expect=1)
    first, second = lines(done.stdout)
    assert first["status"] == "refused" and "repair it first" in first["reason"]
    assert second["status"] == "changed" and second["after"] == [user("short")]
    assert f"{log}:1: refused: the transcript is already invalid" in done.stderr


def test_profile_judges_by_another_providers_rules(tmp_path: Path) -> None:
    chat = BROKEN / "openai.json"
    default = run_cli("inspect", chat, expect=1).stdout
    anthropic = run_cli("inspect", chat, "--profile", "anthropic", expect=1).stdout
    assert "PV-CHAT-CALL-UNANSWERED" in default and "PV-ANTH" not in default
    assert "PV-ANTH-USE-UNANSWERED" in anthropic and "PV-CHAT" not in anthropic
    # Chat keeps its orphan rule under Gemini's profile too; repair judges by the profile named.
    account = json.loads(run_cli("repair", chat, "--profile", "gemini", "--format", "json",
                                 expect=0).stderr)
    codes = {code for defect in account["inputs"][0]["before"]["defects"] for code in defect["codes"]}
    assert codes and all(code.startswith("PV-GEM") for code in codes), codes
    run_cli("inspect", chat, "--profile", "nope", expect=2)


def test_auto_reads_every_format(tmp_path: Path) -> None:
    """The default input format, `auto`, tells all four formats apart on the fixtures, and what
    repair and compact write back is detected as the same format again."""
    for fmt in ("openai", "anthropic", "openai-responses", "otel-genai"):
        path = BROKEN / f"{fmt}.json"
        inspected = run_cli("inspect", path, "--input-format", "auto", expect=1).stdout
        assert f" messages, {fmt})" in inspected and "dangling_call" in inspected
        fixed = tmp_path / f"{fmt}.json"
        account = run_cli("repair", path, "-o", fixed, expect=0).stdout
        assert f"3 change(s), {fmt}: valid" in account
        assert f" messages, {fmt})" in run_cli("inspect", fixed, expect=0).stdout
        compacted = json.loads(run_cli("compact", fixed, "--max-tokens", "60", "--keep", "1",
                                       "--format", "json", expect=0).stderr)
        assert compacted["inputs"][0]["format"] == fmt


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


def test_many_inputs_run_as_real_processes(tmp_path: Path) -> None:
    out = tmp_path / "fixed.jsonl"
    repaired = run_cli("repair", BROKEN, tmp_path / "missing.json", "-o", out, real=True, expect=2)
    assert "skip  " in repaired.stderr and "4 changed, 0 unchanged, 0 refused, 1 skipped" in repaired.stdout
    assert [line["status"] for line in lines(out.read_text(encoding="utf-8"))] == [
        "changed", "changed", "changed", "changed", "skipped"]
    compacted = run_cli("compact", out, "--max-tokens", "60", "--keep", "1", real=True, expect=2)
    assert [line["status"] for line in lines(compacted.stdout)] == [
        "changed", "changed", "changed", "changed", "skipped"]
