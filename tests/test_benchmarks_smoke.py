"""Smoke tests for the benchmark suite: the realistic generator (`sessiongen.realistic`) is
deterministic for a seed (that is its contract, hence the explicit `random.Random` seeds), its
compactors fail the benchmark contract exactly as intended, its bad lines are rejected at the
intended stage, `sessiongen.tooled` records carry tools their calls mostly obey, and bench_check
and bench_toolargs run end to end. Fast (a few seconds); no speed is asserted."""

from __future__ import annotations

import gzip
import importlib
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchmarks import bench_check, bench_report, bench_toolargs, corpus, peer
from benchmarks.__main__ import BENCHMARKS
from frayproof_audit import InputError, check, jsonio, load_contract, snapshot
from frayproof_audit.toolargs.compiled import tool_set
from frayproof_audit.toolargs.policy import DEFAULT_POLICY
from frayproof_audit.toolargs.rules import judge
from frayproof_audit.toolargs.schemas import tool_schemas
from sessiongen import realistic, tooled
from sessiongen.prose import TOOLS

CONTRACT = realistic.bench_contract()


def test_sessions_are_deterministic_for_a_seed() -> None:
    first = realistic.generate_session(random.Random(7), 120)
    assert first == realistic.generate_session(random.Random(7), 120)
    assert first != realistic.generate_session(random.Random(8), 120)


def test_pairs_and_lines_are_deterministic_for_a_seed() -> None:
    pair = realistic.generate_pair(random.Random(3), n_messages=60)
    assert pair == realistic.generate_pair(random.Random(3), n_messages=60)
    first = list(realistic.iter_lines(n_pairs=2, seed=5, bad_records=1))
    assert first == list(realistic.iter_lines(n_pairs=2, seed=5, bad_records=1))


@pytest.mark.parametrize("n_messages", [4, 5, 10, 11, 57, 400])
def test_sessions_have_the_requested_length_and_shape(n_messages: int) -> None:
    for seed in range(3):
        session = realistic.generate_session(random.Random(seed), n_messages)
        assert len(session) == n_messages
        assert session[0]["role"] == "system"
        ids = [call["id"] for m in session for call in m.get("tool_calls") or ()]
        assert len(ids) == len(set(ids))
        assert all(call_id.startswith("call_") for call_id in ids)


def test_sessions_show_the_realistic_features() -> None:
    sessions = [realistic.generate_session(random.Random(seed), 120) for seed in range(15)]
    messages = [m for session in sessions for m in session]
    assert any("refusal" in m and m["refusal"] is None for m in messages)
    assert any("tool_calls" in m and m["tool_calls"] is None for m in messages)
    assert any(m["role"] == "developer" for m in messages)
    assert any(type(m.get("content")) is list and m["role"] == "user" for m in messages)
    assert any(len(m.get("tool_calls") or ()) >= 3 for m in messages)
    sizes = [len(m["content"]) for m in messages if m["role"] == "tool" and type(m["content"]) is str]
    assert min(sizes) >= 50 and max(sizes) <= 20_000 and max(sizes) > 10_000


@pytest.mark.parametrize("name", sorted(realistic.COMPACTORS))
def test_compactors_fail_the_contract_exactly_as_intended(name: str) -> None:
    for seed in range(4):
        record = realistic.generate_pair(random.Random(seed), compactor=name, n_messages=90)
        assert record["compactor"] == name
        report = check(record["before"], record["after"], CONTRACT)
        failed = {violation.check for violation in report.violations if violation.severity == "error"}
        assert failed == realistic.EXPECTED_CHECKS[name], (seed, report.to_text())


def test_good_compactions_are_smaller_than_their_sessions() -> None:
    for name in realistic.GOOD_COMPACTORS:
        record = realistic.generate_pair(random.Random(1), compactor=name, n_messages=300)
        assert len(record["after"]) < len(record["before"])


def test_records_carry_the_input_record_fields() -> None:
    record = orjson.loads(next(realistic.iter_lines(n_pairs=1, seed=2, nights=3)))
    assert set(record) == {"pair_id", "session_id", "compactor", "logged_at", "before", "after"}
    assert record["logged_at"].startswith("2025-06-02T") and record["logged_at"].endswith("Z")


def stage_of_failure(line: bytes) -> str | None:
    """Where our reading path rejects a line: json, record, load, or None when it passes."""
    try:
        record = jsonio.loads_strict(line)
    except jsonio.JSONProblem:
        return "json"
    if type(record) is not dict or type(record.get("after")) is not list:
        return "record"
    try:
        snapshot.load_wire(record["before"])
        snapshot.load_wire(record["after"])
    except InputError:
        return "load"
    return None


def test_write_jsonl_mixes_in_bad_lines_rejected_where_intended(tmp_path: Path) -> None:
    path = tmp_path / "realistic.jsonl"
    bad = len(realistic.BAD_KINDS) + 2
    assert realistic.write_jsonl(path, n_pairs=6, seed=4, nights=2, bad_records=bad) == 6 + bad
    lines = path.read_bytes().splitlines()
    assert len(lines) == 6 + bad
    kinds = []
    for line in lines:
        marker = line.find(b"-bad-")
        if marker < 0:
            assert stage_of_failure(line) is None
            continue
        kind = line[marker + 5:].split(b'"', 1)[0].decode()
        kinds.append(kind)
        assert stage_of_failure(line) == realistic.BAD_KIND_STAGE[kind], kind
    assert sorted(set(kinds)) == sorted(realistic.BAD_KINDS)
    assert len(kinds) == bad


def test_write_jsonl_by_size_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "realistic.jsonl.gz"
    lines = realistic.write_jsonl(path, target_bytes=200_000, seed=1, bad_records=1)
    assert len(gzip.decompress(path.read_bytes()).splitlines()) == lines >= 2


def test_corpus_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, contract = tmp_path / "c.jsonl", tmp_path / "contract.yaml"
    assert corpus.main([str(out), "--pairs", "3", "--bad", "1", "--contract", str(contract)]) == 0
    assert len(out.read_bytes().splitlines()) == 4
    assert "wrote 4 lines" in capsys.readouterr().out
    assert load_contract(str(contract)) == realistic.bench_contract()


def test_bench_check_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.jsonl"
    realistic.write_jsonl(path, n_pairs=6, seed=3, bad_records=2)
    assert bench_check.main(["--quick", "--corpus", str(path), "--no-peer", "--stages"]) == 0
    out = capsys.readouterr().out
    assert "orjson.loads" in out and "frayproof: skipped" in out and "effective jobs: 1" in out
    assert "target strict parse + load + check / bare orjson.loads" in out
    assert "2 input errors" in out and "check retention" in out


def test_bench_check_generates_and_caches_its_corpus(tmp_path: Path) -> None:
    args = ["--quick", "--pairs", "3", "--data-dir", str(tmp_path), "--no-peer"]
    assert bench_check.main(args) == 0
    cached = list(tmp_path.glob("*.jsonl"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    assert bench_check.main(args) == 0
    assert cached[0].stat().st_mtime_ns == stamp


def test_peer_is_skipped_cleanly_without_an_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(peer.PEER_ENV, "/nonexistent/python")
    assert peer.peer_python() is None
    with pytest.raises(peer.PeerError):
        peer.run_peer("print(1)")
    result = bench_check.measure_peer(Path("unused.jsonl"), 1, 0.1, 1)
    assert isinstance(result, str) and peer.PEER_ENV in result


def test_run_peer_returns_the_last_json_line(peer_python_path: Path) -> None:
    script = ("import json, sys, frayproof\n"
              "print('noise')\n"
              "print(json.dumps(sys.argv[1:] + [sys.stdin.read()]))")
    found = peer.run_peer(script, ["a"], input_data=b"b")
    assert found == ["a", "b"]


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_takes_the_arguments_the_runner_passes(
        name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`make bench` passes `--results DIR` to each (found when bench_scale exited 2 at once)."""
    import argparse
    import importlib

    def parsed_only(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        _, unknown = self.parse_known_args(args, namespace)
        assert not unknown, f"{name} refuses {unknown}"
        raise SystemExit(0)  # stop before the benchmark itself runs

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parsed_only)
    with pytest.raises(SystemExit) as stopped:
        importlib.import_module(f"benchmarks.{name}").main(["--results", str(tmp_path)])
    assert stopped.value.code == 0


def test_runner_skips_missing_benchmarks_and_rejects_unknown_names() -> None:
    runner = importlib.import_module("benchmarks.__main__")
    assert runner.run("bench_that_does_not_exist", quick=True) == "skipped: not present"
    with pytest.raises(SystemExit):
        runner.main(["no_such_benchmark"])


def test_tooled_records_are_deterministic_and_carry_their_tools() -> None:
    first = list(tooled.iter_lines(n_pairs=3, seed=4))
    assert first == list(tooled.iter_lines(n_pairs=3, seed=4))
    record = orjson.loads(first[0])
    assert record["tools"] in tooled.TOOL_LISTS.values()
    assert {"pair_id", "session_id", "compactor", "logged_at", "before", "after"} < set(record)


def test_tooled_arguments_conform_unless_broken_on_purpose() -> None:
    """Conforming arguments pass every list's schemas; each violation kind is a finding."""
    tool_sets = [tool_set(tool_schemas(definitions)) for definitions in tooled.TOOL_LISTS.values()]
    rng = random.Random(11)
    for _ in range(150):
        tool = rng.choice(TOOLS)
        arguments = tooled.conforming_arguments(rng, tool)
        broken = tooled.violating_arguments(rng, tool, arguments)
        for tools in tool_sets:
            assert judge(tools, tool, json.dumps(arguments), True, DEFAULT_POLICY) == ()
            assert judge(tools, tool, json.dumps(broken), True, DEFAULT_POLICY) != ()


def test_tooled_pairs_leave_the_base_record_alone_and_keep_the_recent_window() -> None:
    """`with_tools` copies what it changes, and the calls the benchmark contract keeps exact
    (the last two closed exchanges) keep before's text, so good compactors still pass it."""
    rng = random.Random(2)
    for _ in range(8):
        base = realistic.generate_pair(rng, compactor=rng.choice(list(realistic.GOOD_COMPACTORS)))
        snapshot_before = orjson.dumps(base)
        record = tooled.with_tools(base, rng)
        assert orjson.dumps(base) == snapshot_before
        report = check(record["before"], record["after"], CONTRACT)
        errors = {v.code for v in report.violations if v.severity == "error"}
        assert errors <= {"RET-RESULT"}, report.to_text()  # two results trading ids (SWAP_RATE)


def test_bench_toolargs_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tooled.jsonl"
    tooled.write_jsonl(path, n_pairs=5, seed=1)
    assert bench_toolargs.main(["--quick", "--corpus", str(path), "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(A) tool checks off" in out and "(B) tool_arguments + tool_call_integrity" in out
    assert "cost B / A:" in out and ("): met" in out or "): missed" in out)
    assert "effective jobs: A 1, B 1" in out
    assert "same 5 pairs: yes" in out
    schema_work = [line for line in out.splitlines() if "schema work per run (B)" in line]
    assert schema_work and "validators built" in schema_work[0]


def test_bench_report_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_report.main(["--quick", "--sizes", "4,8,12"]) == 0
    out = capsys.readouterr().out
    pages = [line.split()[0] for line in out.splitlines() if "pair pages:" in line]
    assert pages == ["4", "8", "12"]
    assert "bytes per added page: " in out
    assert "target bytes per added page, a step over the one before (2 steps: linear)" in out


def test_readme_speed_table_region_is_well_formed() -> None:
    """The generated region exists once and holds one Markdown table whose rows all have the
    header's columns (the numbers are the benchmarks' business, not the tests')."""
    from benchmarks import table

    text = table.README.read_text(encoding="utf-8")
    start, end = table.region(text)
    lines = [line for line in text[start:end].splitlines() if line.startswith("|")]
    assert lines[0] == table.HEADER.splitlines()[0] and lines[1] == table.HEADER.splitlines()[1]
    columns = lines[0].count("|")
    assert len(lines) >= 3 and all(line.count("|") == columns for line in lines)


def test_speed_table_is_rendered_from_results(tmp_path: Path) -> None:
    from benchmarks import results, table

    folder = tmp_path / "results"
    results.save(folder, "bench_demo", [1, 2], [
        results.Target("demo ratio", 0.7, 0.5, limit=0.9, note="why"),
        results.Target("demo memory", 2.0, 1.5, at_least=False),
    ], {"pairs": 3})
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{table.START}\nold\n{table.END}\n\ntail\n", encoding="utf-8")
    assert table.update(readme, folder)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# x\n\n") and text.endswith("\n\ntail\n")
    rows = [line for line in text.splitlines() if line.startswith("| bench_demo")]
    assert len(rows) == 2
    assert "| 0.70x | >= 0.50x | yes | 0.90x | 1, 2 |" in rows[0]
    assert "| 2.00x | <= 1.50x | **no** |" in rows[1]
    assert not table.update(readme, folder)  # unchanged the second time
    assert table.main(["--results", str(folder), "--readme", str(readme), "--check"]) == 0
    readme.write_text(f"{table.START}\n{table.START}\n{table.END}\n", encoding="utf-8")
    with pytest.raises(table.TableError):
        table.update(readme, folder)


def test_bench_check_huge_failing_records_run_and_fail_as_built(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_check.main(["--huge", "10,40", "--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if "us/message" in line]
    assert len(rows) == 8  # four shapes, two sizes
    findings = {(" ".join(row[:row.index("messages") - 1]), int(row[row.index("messages") - 1])):
                int(row[-2]) for row in rows}
    assert findings[("kept (control)", 41)] == findings[("kept (control)", 161)] == 0
    for shape in ("unanswered calls", "orphaned results", "one id reused"):
        # every exchange is broken, so the findings grow with the record
        assert 0 < findings[(shape, 41)] < findings[(shape, 161)]
    assert out.count("cost per message, largest / smallest") == 4


def test_bench_check_compact_of_huge_transcripts_runs_and_compacts(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_check.main(["--compact", "200,800", "--quick"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if "us/message" in line]
    assert [(row[0], row[1]) for row in rows] == [
        ("openai", "201"), ("openai", "801"), ("anthropic", "200"), ("anthropic", "800")]
    assert all(0 < int(row[-1]) < 100 for row in rows)  # kept: a suffix that fits 2000 tokens
    assert out.count("cost per message, largest / smallest") == 2


def test_stage_shares_times_the_workers_steps_and_puts_them_back(tmp_path: Path) -> None:
    """bench_audit's shares of a check-only audit: each of the worker's steps is timed where it
    runs, within the run's total, and the worker's own functions are back afterwards."""
    from benchmarks import stage_shares
    from frayproof_audit.corpus.run import worker

    logs = tmp_path / "logs.jsonl"
    logs.write_bytes(b"".join(line + b"\n" for line in realistic.iter_lines(n_pairs=12, seed=2)))
    contract = realistic.write_contract(tmp_path / "contract.yaml")
    originals = {name: getattr(worker, name) for name in stage_shares.STAGES}
    shares = stage_shares.measure(logs, contract, tmp_path, 1)
    assert {name: getattr(worker, name) for name in stage_shares.STAGES} == originals
    assert set(shares.stages) == set(stage_shares.STAGES)
    assert all(shares.stages[name] > 0 for name in ("read_shard", "parse_json_record_sized", "_load",
                                                    "check_blamed"))
    assert 0 < shares.rest_s < shares.total_s
    assert stage_shares.floor_s(shares, 1.0, 0.5) == pytest.approx(
        1.5 + shares.stages["_load"] + shares.stages["check_blamed"])
    assert "strict parsing" in shares.line() and "the rest" in shares.line()
