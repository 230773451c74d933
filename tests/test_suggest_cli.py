"""`frayproof-audit suggest` (issue 31 through the command line).

The corpus mixes sessiongen's good compactors with its six buggy ones (tests/suggest_support.py),
written as a night of JSON lines. What the command writes is judged by the `audit` command and
read back from its dataset, never taken from the suggestion's own account; what it reads is
shown to be what the library learns from (the same contract, byte for byte).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from frayproof_audit.contract import load_contract
from frayproof_audit.sources.codex import SUMMARY_PREFIX
from frayproof_audit.suggest import held_out, record_key, suggest
from frayproof_audit.suggest.texts import needed
from sessiongen import agent_logs
from sessiongen.realistic import BUGGY_COMPACTORS, GOOD_COMPACTORS, generate_session, logged_at
from tests.corpus_support import write_parquet
from tests.helpers import EXAMPLES, CliResult, history, run_cli
from tests.suggest_support import make_records

GOOD = "compactor=" + ",".join(GOOD_COMPACTORS)
MUTATION = ("--mutation-pairs", "6", "--max-mutants-per-pair", "0")
"""A small mutation sample with no budget, so per-operator scores compare exactly."""
NO_MUTATION = ("--mutation-pairs", "0")
MUTATION_CONTRACT = EXAMPLES / "mutation_contract.yaml"


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return make_records(7, 60, 5)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("suggest-cli")


@pytest.fixture(scope="module")
def night(folder: Path, records: list[dict[str, Any]]) -> Path:
    return _jsonl(folder / "night.jsonl", records)


@pytest.fixture(scope="module")
def suggested(folder: Path, night: Path) -> tuple[Path, CliResult]:
    contract = folder / "suggested.yaml"
    done = run_cli("suggest", night, "--good", GOOD, "-o", contract, "--compare", MUTATION_CONTRACT,
                   *MUTATION)
    return contract, done


def _statuses(out: Path) -> dict[str, str]:
    frame = pl.read_parquet(str(out / "pairs" / "**" / "*.parquet"))
    return dict(zip(frame["pair_id"].to_list(), frame["status"].to_list(), strict=True))


def test_audit_reads_the_contract_fails_every_planted_bug_and_passes_the_good_pairs(
        folder: Path, night: Path, records: list[dict[str, Any]],
        suggested: tuple[Path, CliResult]) -> None:
    contract, done = suggested
    assert f"WROTE: the suggested contract to {contract}." in done.stdout
    out = folder / "audit-out"
    run_cli("audit", night, "--contract", contract, "--out", out, "--no-mutate", "--quiet", expect=1)
    status = _statuses(out)
    assert len(status) == len(records)
    for bug in BUGGY_COMPACTORS:
        pairs = [r["pair_id"] for r in records if r["compactor"] == bug]
        assert pairs and {status[pair] for pair in pairs} == {"fail"}, bug
    good = [r for r in records if r["compactor"] in GOOD_COMPACTORS]
    learned = [r["pair_id"] for r in good if not held_out(record_key(r), 0.2)]
    held = [r["pair_id"] for r in good if held_out(record_key(r), 0.2)]
    assert len(learned) > 40 and len(held) > 5
    assert [pair for pair in learned if status[pair] != "pass"] == []
    held_failures = sum(status[pair] != "pass" for pair in held)
    assert held_failures <= len(held) - needed(0.99, len(held))
    assert f"HELD OUT: {held_failures}/{len(held)} false alarm(s)" in done.stdout


def test_compare_shows_the_mutation_score_of_each_operator_side_by_side(
        suggested: tuple[Path, CliResult], night: Path, folder: Path) -> None:
    _, done = suggested
    lines = done.stdout.splitlines()
    assert f"COMPARED with {MUTATION_CONTRACT} (current -> suggested):" in lines
    document = json.loads(run_cli("suggest", night, "--good", GOOD, "-o", folder / "again.yaml",
                                  "--compare", MUTATION_CONTRACT, *MUTATION, "--format", "json").stdout)
    mutation = document["suggestion"]["comparison"]["mutation"]
    current = {op["name"]: op for op in mutation["current"]["operators"]}
    suggested_ops = mutation["suggested"]["operators"]
    assert len(suggested_ops) >= 9 and mutation["current"]["pairs"] == mutation["suggested"]["pairs"] >= 3
    for op in suggested_ops:
        mine = f"{op['caught']}/{op['applicable']}"
        theirs = current.get(op["name"])
        shown = "-" if theirs is None else f"{theirs['caught']}/{theirs['applicable']}"
        assert f"    {op['name']}: {shown} -> {mine}" in lines
        if theirs is not None:  # at least the hand-written contract's score, operator by operator
            assert op["caught"] * theirs["applicable"] >= theirs["caught"] * op["applicable"], op["name"]
    assert mutation["suggested"]["score_percent"] >= mutation["current"]["score_percent"]
    assert document["suggestion"]["comparison"]["good_failures"]["suggested"]["count"] == 0


def test_the_same_inputs_give_the_same_bytes_in_a_real_process(
        folder: Path, records: list[dict[str, Any]], suggested: tuple[Path, CliResult]) -> None:
    contract, _ = suggested
    shuffled = list(records)
    random.Random(5).shuffle(shuffled)
    logs = folder / "shuffled"
    logs.mkdir()
    with gzip.open(logs / "a.jsonl.gz", "wb") as handle:
        handle.write(b"".join(orjson.dumps(record) + b"\n" for record in shuffled[:90]))
    _jsonl(logs / "b.jsonl", shuffled[90:])
    again = folder / "again-real.yaml"
    done = run_cli("suggest", logs, "--good", GOOD, "-o", again, "--compare", MUTATION_CONTRACT,
                   *MUTATION, real=True)
    assert done.stderr == ""
    assert again.read_bytes() == contract.read_bytes()
    assert load_contract(str(again)).fingerprint == load_contract(str(contract)).fingerprint


@pytest.fixture(scope="module")
def nights(folder: Path, records: list[dict[str, Any]]) -> tuple[Path, list[dict[str, Any]]]:
    """The records spread over three nights (2025-06-02 to -04), as epoch seconds and RFC 3339."""
    spread = []
    for number, record in enumerate(records):
        moment = logged_at(number % 3, 0.5)
        if number % 2:
            moment = dt.datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp()
        spread.append({**record, "logged_at": moment})
    return _jsonl(folder / "nights.jsonl", spread), spread


@pytest.mark.parametrize(("selector", "share"), [
    ("all", 1),
    ("night=2025-06-03", 1 / 3),
    ("night=2025-06-03..2025-06-04", 2 / 3),
    (f"passes={MUTATION_CONTRACT}", None),
    (GOOD + ";night=2025-06-02..2025-06-03", None),
])
def test_the_command_learns_what_the_library_learns_from_the_same_records(
        selector: str, share: float | None, folder: Path,
        nights: tuple[Path, list[dict[str, Any]]]) -> None:
    logs, records = nights
    output = folder / f"sel-{abs(hash(selector))}.yaml"
    done = run_cli("suggest", logs, "--good", selector, "-o", output, *NO_MUTATION, "--format", "json",
                   expect=None)
    document = json.loads(done.stdout)
    found = suggest(records, good=selector, mutation_pairs=0)
    assert done.exit_code == document["exit_code"] == found.exit_code  # a night of buggy ones too: 1
    if share is not None:
        assert abs(found.counts.good - share * len(records)) <= 1
    assert output.read_text(encoding="utf-8") == found.contract_text
    assert document["suggestion"] == json.loads(found.to_json())
    assert document["suggestion"]["counts"]["good"] > 0
    assert (document["output"], document["input_errors"]) == (str(output), [])


def test_the_json_document_says_what_was_read_and_holds_the_written_contract(
        folder: Path, night: Path) -> None:
    output = folder / "doc.yaml"
    document = json.loads(run_cli("suggest", night, "--good", GOOD, "-o", output, *NO_MUTATION,
                                  "--min-support", "0.95", "--holdout", "0.3", "--format", "json").stdout)
    assert document["kind"] == "log_suggestion" and document["schema_version"] == 1
    assert document["read"]["files"] == [str(night)] and document["read"]["input_errors"]["count"] == 0
    config = document["suggestion"]["config"]
    assert (config["good"], config["min_support"], config["holdout"], config["mutation_pairs"]) == \
        (GOOD, 0.95, 0.3, 0)
    assert document["suggestion"]["contract"] == output.read_text(encoding="utf-8")
    assert document["suggestion"]["mutation"] is None


def test_every_input_error_is_counted_and_named(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    good = [r for r in records if r["compactor"] in GOOD_COMPACTORS][:40]
    lines = [orjson.dumps(record) for record in good]
    no_after = {key: value for key, value in good[0].items() if key != "after"}
    bad_message = {**good[1], "pair_id": "bad-message",
                   "after": [{"role": "user", "content": 7}]}  # no format reads a number as content
    bad_time = {**good[2], "pair_id": "bad-time", "logged_at": "yesterday"}
    lines[3:3] = [b'{"before": [', orjson.dumps(no_after), orjson.dumps(bad_message),
                  orjson.dumps(bad_time)]
    logs = tmp_path / "night.jsonl"
    logs.write_bytes(b"\n".join(lines) + b"\n")
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", logs, "--good", "all", "-o", output, *NO_MUTATION)
    shown = [line for line in done.stdout.splitlines() if line.startswith("INPUT ERROR")]
    rows = (4, 5, 6, 7)
    assert [line.split(": ", 1)[0] for line in shown] == [f"INPUT ERROR {logs} line {n}" for n in rows]
    assert "after is missing" in shown[1] and "logged_at" in shown[3]
    assert "content" in shown[2]  # read whole, then refused by the format: suggest's unusable record
    assert "READ: 44 record(s) in 1 file(s): 40 pair(s), 4 input error(s) (9.09%)." in done.stdout
    assert output.is_file()
    document = json.loads(run_cli("suggest", logs, "--good", "all", "-o", output, *NO_MUTATION,
                                  "--format", "json").stdout)
    assert [(e["source"], e["row"]) for e in document["input_errors"]] == [(str(logs), n) for n in rows]
    assert document["suggestion"]["counts"]["unusable"] == 1


def test_too_many_input_errors_write_nothing(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    logs = tmp_path / "night.jsonl"
    good = [orjson.dumps(record) for record in records[:6]]
    logs.write_bytes(b"\n".join([*good, *[b"not json"] * 7]) + b"\n")
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", logs, "--good", "all", "-o", output, *NO_MUTATION, expect=2)
    assert "NOT SUGGESTED: 53.85% (7/13) of the records are input errors" in done.stdout
    assert not output.exists()
    run_cli("suggest", logs, "--good", "all", "-o", output, *NO_MUTATION,
            "--max-input-error-rate", "0.6")
    assert output.is_file()
    logs.write_bytes(b"not json\n{}\n")
    output.unlink()
    done = run_cli("suggest", logs, "--good", "all", "-o", output, *NO_MUTATION,
                   "--max-input-error-rate", "1", expect=2)
    assert "NOT SUGGESTED: 100.00% (2/2) of the records are input errors, no pair is left to learn from" \
        in done.stdout
    assert json.loads(run_cli("suggest", logs, "--good", "all", "-o", output, "--max-input-error-rate", "1",
                              "--format", "json", expect=2).stdout)["suggestion"] is None
    assert not output.exists()
    logs.write_bytes(b"")
    assert "the inputs hold no record" in run_cli("suggest", logs, "--good", "all", "-o", output,
                                                  expect=2).stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--good", "compactor=nope"), "no good pair to learn from"),
    (("--good", "vibes"), "good selector 'vibes'"),
    (("--good", "night=2025-06-09..2025-06-01"), "the range ends before it starts"),
    (("--good", "passes=missing.yaml"), "missing.yaml"),
    (("--good", "all", "--compare", "missing.yaml"), "compare_with"),
    (("--good", "all", "--operators", "nope"), "unknown operator(s) nope"),
    (("--good", "all", "--operators", ","), "name at least one operator"),
    (("--good", "all", "--field", "bogus=x"), "unknown field"),
])
def test_bad_input_is_exit_2_and_writes_nothing(tmp_path: Path, night: Path, args: tuple[str, ...],
                                                message: str) -> None:
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", night, "-o", output, *NO_MUTATION, *args, expect=2)
    assert "INPUT ERROR" in done.stderr and message in done.stderr
    assert not output.exists()


def test_usage_errors_and_an_unwritable_output(tmp_path: Path, night: Path) -> None:
    assert "--good" in run_cli("suggest", night, "-o", tmp_path / "c.yaml", expect=2).stderr
    assert "--min-support" in run_cli("suggest", night, "--good", "all", "-o", tmp_path / "c.yaml",
                                      "--min-support", "0", expect=2).stderr
    assert "--holdout" in run_cli("suggest", night, "--good", "all", "-o", tmp_path / "c.yaml",
                                  "--holdout", "1", expect=2).stderr
    assert "nothing' does not exist" in run_cli("suggest", tmp_path / "nothing", "--good", "all", "-o",
                                                tmp_path / "c.yaml", expect=2).stderr
    # The options are refused before any log is read (or looked for).
    assert "good selector 'vibes'" in run_cli("suggest", tmp_path / "nothing", "--good", "vibes", "-o",
                                              tmp_path / "c.yaml", expect=2).stderr
    done = run_cli("suggest", night, "--good", "all", "-o", tmp_path / "no" / "c.yaml", *NO_MUTATION,
                   expect=2)
    assert "OUTPUT ERROR: cannot write" in done.stderr


def test_a_contract_that_overfits_is_written_and_exits_1(tmp_path: Path) -> None:
    # As tests/test_suggest_honesty.py: the learned-from pairs keep three exchanges, the held-out
    # ones two, so every held-out pair fails the window learned.
    lines = []
    for number in range(60):
        key = f"pair-{number:03d}"
        before = history(5)
        for message in before:
            for call in message.get("tool_calls") or ():
                call["id"] = f"{call['id']}-{number}"
            if message["role"] == "tool":
                message["tool_call_id"] = f"{message['tool_call_id']}-{number}"
        users = [i for i, m in enumerate(before) if m["role"] == "user"]
        keep = 2 if held_out(key, 0.25) else 3
        after = [before[0], {"role": "system", "content": "Summary."}, *before[users[-1 - keep]:]]
        lines.append({"pair_id": key, "session_id": f"s{number}", "before": before, "after": after})
    logs = _jsonl(tmp_path / "night.jsonl", lines)
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", logs, "--good", "all", "-o", output, "--holdout", "0.25", *NO_MUTATION,
                   expect=1)
    assert "OVERFITS" in done.stdout and output.is_file()
    assert "WARNING: more held-out false alarms" in output.read_text(encoding="utf-8")


def test_pair_records_are_read_with_the_field_map_from_parquet(
        tmp_path: Path, records: list[dict[str, Any]]) -> None:
    chosen = [r for r in records if r["compactor"] in GOOD_COMPACTORS][:30] + \
        [r for r in records if r["compactor"] not in GOOD_COMPACTORS][:10]
    moved = [{"id": r["pair_id"], "session_id": r["session_id"], "compactor": r["compactor"],
              "logged_at": r["logged_at"], "before": r["before"], "after": r["after"]} for r in chosen]
    logs = write_parquet(tmp_path / "night" / "part-0.parquet", moved)
    config = tmp_path / "fields.yaml"
    config.write_text("fields:\n  pair_id: id\n", encoding="utf-8")
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", logs.parent, "--good", GOOD, "-o", output, "--config", config,
                   *NO_MUTATION, "--format", "json")
    assert json.loads(done.stdout)["read"]["pairs"] == 40
    assert output.read_text(encoding="utf-8") == suggest(chosen, good=GOOD, mutation_pairs=0).contract_text


def test_agents_own_logs_are_read_through_the_sources(tmp_path: Path) -> None:
    agent_logs = EXAMPLES / "agent-logs"
    output = tmp_path / "agents.yaml"
    done = run_cli("suggest", agent_logs, "--good", "all", "--holdout", "0", "-o", output, "--format", "json")
    document = json.loads(done.stdout)
    assert document["read"]["pairs"] == 3 and len(document["read"]["files"]) == 3
    rules = {rule["key"]: rule for rule in document["suggestion"]["rules"]}
    assert rules["checks.provider_validity"]["proposed"]
    # Codex's summary is the last user message: the latest request is not kept as it was.
    assert not rules["retain.latest_user_message"]["proposed"]
    assert rules["retain.latest_user_message"]["support"]["count"] == 2
    audited = run_cli("audit", agent_logs, "--contract", output, "--out", tmp_path / "out", "--no-mutate",
                      "--quiet", "--format", "json")
    summary = json.loads(audited.stdout)
    assert (summary["pairs"], summary["failed"]) == (3, 0), summary


def test_the_logs_are_read_as_the_audit_reads_them(tmp_path: Path) -> None:
    # Every input error the audit records for the example corpus (its reader's and the formats')
    # is one suggest names, at the same place, and every other record is a pair suggest reads.
    from frayproof_audit.corpus import audit
    from frayproof_audit.suggest import LogInputs, SuggestConfig, suggest_logs

    corpus = str(EXAMPLES / "corpus")
    found = suggest_logs(LogInputs((corpus,)), SuggestConfig(good="all", mutation_pairs=0))
    summary = audit([corpus], str(EXAMPLES / "audit_contract.yaml"), str(tmp_path / "out"), jobs=1,
                    mutate=False, fail_on=())
    frame = pl.read_parquet(str(tmp_path / "out" / "pairs" / "**" / "*.parquet"))
    errors = frame.filter(pl.col("status") == "input_error")
    assert sorted(zip(errors["source"].to_list(), errors["source_row"].to_list(), strict=True)) == \
        sorted((problem.source, problem.row) for problem in found.input_errors)
    assert len(found.input_errors) == summary.input_errors == 8
    assert found.suggestion is not None and found.suggestion.counts.unusable == 1  # a format's refusal
    assert found.read.rows == summary.pairs == frame.height
    names = {path.split("/")[-1] for path in found.read.files}
    assert names >= {"compactions.parquet", "compactions.jsonl.zst"}


def test_a_mixed_folder_is_read_file_by_file_and_a_file_of_two_sources_is_one_input_error(
        tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(EXAMPLES / "agent-logs", logs)
    records = (EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl").read_bytes().splitlines(True)
    (logs / "pairs.jsonl").write_bytes(b"".join(records[:5]))
    both = {"type": "response_item", "payload": {"type": "message"}, "before": [], "after": []}
    (logs / "both.jsonl").write_text(json.dumps(both) + "\n" + json.dumps(both) + "\n")
    output = tmp_path / "contract.yaml"
    done = run_cli("suggest", logs, "--good", "all", "-o", output, "--holdout", "0", *NO_MUTATION,
                   "--format", "json")
    document = json.loads(done.stdout)
    assert document["read"]["pairs"] == 3 + 5 and len(document["read"]["files"]) == 5
    [refused] = document["input_errors"]
    assert (refused["source"], refused["row"]) == (str(logs / "both.jsonl"), 1)
    assert refused["reason"].startswith("cannot tell the source of this file")
    assert (document["read"]["records"], document["suggestion"]["counts"]["records"]) == (9, 8)
    assert document["exit_code"] == 0 and output.is_file()


def _rollouts(folder: Path, count: int, seed: int, *, keep_instructions: bool) -> Path:
    """Codex rollouts of sessiongen sessions, compacted as Codex does (the user messages, then
    the summary); `keep_instructions`: with the system and developer messages kept before them."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    made = 0
    while made < count:
        before = generate_session(rng, rng.randint(10, 20), max_result=400)
        summary = f"{SUMMARY_PREFIX}\nWhat session {seed}-{made} did so far."
        kept = [m for m in before if m["role"] in ("system", "developer")] if keep_instructions else []
        after = [*kept, *[m for m in before if m["role"] == "user"], {"role": "user", "content": summary}]
        written = agent_logs.as_codex(before, after, f"0199-{seed:04d}-{made:04d}", summary=summary)
        if written is not None:
            text = "".join(f"{line}\n" for line in written.lines)
            (folder / f"rollout-{seed}-{made}.jsonl").write_text(text, encoding="utf-8")
            made += 1
    return folder


def test_a_contract_learned_from_codex_rollouts_fails_the_rollouts_that_drop_the_instructions(
        tmp_path: Path) -> None:
    good = _rollouts(tmp_path / "good", 8, 1, keep_instructions=True)
    bad = _rollouts(tmp_path / "bad", 4, 2, keep_instructions=False)
    output = tmp_path / "codex.yaml"
    done = run_cli("suggest", good, "--source", "codex", "--good", "all", "--holdout", "0", "-o", output,
                   *NO_MUTATION, "--format", "json")
    rules = {rule["key"]: rule for rule in json.loads(done.stdout)["suggestion"]["rules"]}
    assert rules["pins.developer-instructions"]["proposed"]
    # Codex's summary is the last user message: the latest request is never kept as it was.
    assert rules["retain.latest_user_message"]["support"]["count"] == 0
    audited = run_cli("audit", bad, good, "--contract", output, "--out", tmp_path / "out", "--no-mutate",
                      "--quiet", expect=1)
    assert "pass 8 · fail 4 · input_error 0" in audited.stdout
    status = _statuses(tmp_path / "out")
    assert {pair for pair, verdict in status.items() if verdict == "fail"} == \
        {pair for pair in status if pair.startswith("0199-0002-")}
