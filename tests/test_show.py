"""`frayproof-audit show`: a stored pair (`show OUT PAIR_ID`) read back from its input, and two
snapshot files judged on the spot (`show --before B --after A`), for every wire format with
worked examples and for a pair derived from an agent's session log; plain text when stdout is
not a terminal, colour on one; the input gone or changed since the audit said, never shown.
Through CliRunner, and as real processes (a pipe and a pseudo-terminal).
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frayproof_audit.pairview.align import align
from frayproof_audit.pairview.wire import read_messages
from frayproof_audit.snapshot import resolve_format
from tests.helpers import FIXTURES, REPO, run_cli
from tests.pair_pages_support import CODEX_PAIR, FORMATS, HOSTILE_PAIR, PairsDataset, build_pairs_dataset

ESC = "\x1b["
FORMAT_FIXTURES = FIXTURES / "formats"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> PairsDataset:
    return build_pairs_dataset(tmp_path_factory.mktemp("show"))


def _show(dataset: PairsDataset, *args: str, expect: int = 0, real: bool = False) -> tuple[str, str]:
    result = run_cli("show", dataset.out, *args, expect=expect, real=real, cwd=dataset.root)
    return result.stdout, result.stderr


def _lines_after(text: str, start: str, count: int) -> list[str]:
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.strip().startswith(start))
    return [line.strip() for line in lines[at:at + count]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stored_failing_pair_marks_the_stranded_result_and_the_call_it_lost(dataset: PairsDataset,
                                                                              fmt: str) -> None:
    out, err = _show(dataset, f"{fmt}-broken")
    assert err == "" and ESC not in out  # not a terminal: no colour
    assert out.startswith(f"pair {fmt}-broken (run formats)\n  fail: 2 error(s), 0 warning(s) · compactor "
                          f"summarize-v2 · night ")
    assert f"· format {fmt}\n" in out
    assert "  F1 ERROR TP-ORPHAN tool_pair_integrity at after[" in out
    # the stranded result is kept, with the finding's own mark and a link to the lost call ...
    result = _lines_after(out, "result [", 3)
    assert result[1] == (">> F1 ERROR TP-ORPHAN tool_pair_integrity: Tool result answers no earlier "
                         "assistant tool call.")
    assert result[2].startswith("-> its call is not in after: before[") and result[2].endswith("(dropped)")
    # ... and the call it answers was dropped, marked as what F1 points at, linked to its result
    call = _lines_after(out, "call read_file [", 3)
    assert call[1].startswith(">> F1 TP-ORPHAN points here (named by F1, at after[")
    assert call[2].startswith("-> its result: before[")
    rows = [line for line in out.splitlines() if line.startswith("  ") and line[2:3] in "=-~+S"]
    assert any(line.startswith("  S ") and "(summary, in place of before[" in line for line in rows)
    dropped = [line for line in rows if line.startswith("  - ")]
    assert len(dropped) >= 3


def test_a_pair_derived_from_an_agent_log_is_derived_again_and_shown_with_its_provenance(
        dataset: PairsDataset) -> None:
    out, _ = _show(dataset, CODEX_PAIR, expect=0)
    lines = out.splitlines()
    assert lines[0] == f"pair {CODEX_PAIR} (run codex)"
    assert "· format openai-responses" in lines[1]
    assert lines[2].startswith("  codex/sessions/2026/08/01/rollout-") and " line 25 " in lines[2]
    assert lines[3] == "  from an agent log: source_kind codex · fidelity explicit · event summarize · " \
                       "tokens_before 1010"
    assert "  S after[2]  user (summary, in place of before[1:12])" in lines
    # a Responses turn's items each hold their own part: the message its text, each call its call
    turn = [line for line in _lines_after(out, "- before[1]", 8) if not line.startswith(">>")]
    assert turn[:4] == ["- before[1]  assistant", "Let me read the test and the code.",
                        "- before[2]  function_call",
                        'call read_file [call_1] {"path":"tests/test_checkout.py"}']


def test_the_terminal_shows_log_text_with_its_control_characters_visible(dataset: PairsDataset) -> None:
    out, _ = _show(dataset, HOSTILE_PAIR)
    assert "<script>alert(1)</script>" in out  # the terminal draws no HTML: text as it is
    assert ESC not in out


def test_an_input_gone_or_changed_since_the_audit_is_said_and_its_findings_still_shown(
        dataset: PairsDataset, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    shutil.copytree(dataset.root, moved)
    corpus = moved / "corpus.jsonl"
    corpus.unlink()
    result = run_cli("show", moved / "out", "openai-broken", expect=2, cwd=moved)
    assert "messages not shown: 'corpus.jsonl' no longer exists" in result.stdout
    assert "F1 ERROR TP-ORPHAN tool_pair_integrity at after[2] (call call_1)" in result.stdout
    assert result.stderr == ("error: the messages of 'openai-broken' cannot be shown: 'corpus.jsonl' no "
                             "longer exists\n")
    lines = dataset.corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace("port = 8080", "port = 8081")
    corpus.write_text("".join(lines), encoding="utf-8")
    result = run_cli("show", moved / "out", "openai-broken", expect=2, cwd=moved)
    assert "corpus.jsonl line 2 now holds another record than the one audited (its SHA-256 differs)" \
        in result.stdout
    assert "8081" not in result.stdout and "8080" not in result.stdout
    # --source-root finds the inputs of a dataset audited elsewhere
    out = run_cli("show", dataset.out, "openai-broken", "--source-root", dataset.root, cwd=tmp_path).stdout
    assert "result [call_1] port = 8080" in out


def test_no_such_pair_and_mixed_usage_are_input_errors(dataset: PairsDataset) -> None:
    err = run_cli("show", dataset.out, "nope", expect=2, cwd=dataset.root).stderr
    assert f"no pair 'nope' in '{dataset.out}'" in err
    before = FORMAT_FIXTURES / "openai" / "before.json"
    assert "give --before and --after together" in run_cli("show", "--before", before, expect=2).stderr
    assert "--contract and --input-format go with --before/--after" in run_cli(
        "show", dataset.out, "openai-broken", "--contract", FORMAT_FIXTURES / "contract.yaml", expect=2,
        cwd=dataset.root).stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_snapshot_files_are_judged_and_shown(fmt: str) -> None:
    folder = FORMAT_FIXTURES / fmt
    contract = FORMAT_FIXTURES / "contract.yaml"
    broken = run_cli("show", "--before", folder / "before.json", "--after", folder / "broken.json",
                     "--contract", contract, "--input-format", fmt, expect=1).stdout
    assert f"  FAIL: 2 error(s), 0 warning(s) · format {fmt}\n" in broken
    assert ">> F1 ERROR TP-ORPHAN tool_pair_integrity:" in broken and "(dropped)" in broken
    passing = run_cli("show", "--before", folder / "before.json", "--after", folder / "after.json",
                      "--contract", contract, "--input-format", fmt, expect=0).stdout
    assert f"  PASS: 0 error(s), 0 warning(s) · format {fmt} · 0 of " in passing
    assert "findings" not in passing.splitlines()


def test_a_passing_pair_shows_its_surviving_mutants_with_the_rule_that_would_catch_them(
        tmp_path: Path) -> None:
    folder = FORMAT_FIXTURES / "openai"
    loose = tmp_path / "loose.yaml"
    loose.write_text("version: 1\n", encoding="utf-8")
    out = run_cli("show", "--before", folder / "before.json", "--after", folder / "after.json",
                  "--contract", loose).stdout
    assert "surviving mutants (corruptions the contract accepted)" in out
    assert "the contract rule that would catch it: " in out
    assert ">> S1 survived " in out
    assert "mutant(s) survived" in out.splitlines()[1]
    assert run_cli("show", "--before", folder / "before.json", "--after", folder / "after.json",
                   "--contract", loose, "--no-mutate").stdout.count("survived") == 0


def test_control_characters_from_a_snapshot_never_reach_the_terminal(tmp_path: Path) -> None:
    before = tmp_path / "before.json"
    after = tmp_path / "after.json"
    text = '[{"role": "user", "content": "red \\u001b[31m text\\r over \\u0007 bell"}]'
    before.write_text(text, encoding="utf-8")
    after.write_text(text, encoding="utf-8")
    out = run_cli("show", "--before", before, "--after", after, "--no-mutate", "--color").stdout
    assert "red \\x1b[31m text\\x0d over \\x07 bell" in out
    assert "\x07" not in out and "\r" not in out
    assert out.count(ESC) == out.count("\x1b")  # every escape left is one of the command's own colours


def test_a_real_process_is_plain_on_a_pipe_and_coloured_on_a_terminal(dataset: PairsDataset) -> None:
    piped = run_cli("show", dataset.out, "anthropic-broken", real=True, cwd=dataset.root)
    assert ESC not in piped.stdout and "F1 ERROR TP-ORPHAN" in piped.stdout
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "frayproof_audit", "show", str(dataset.out),
                                "anthropic-broken"], stdout=follower, stderr=subprocess.PIPE,
                               cwd=dataset.root, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    coloured = b"".join(chunks).decode("utf-8")
    assert "  F1 \x1b[1;31mERROR TP-ORPHAN\x1b[0m tool_pair_integrity" in coloured  # its badge, red
    plain = coloured.replace("\r\n", "\n")
    for code in ("\x1b[0m", "\x1b[1;31m", "\x1b[2m", "\x1b[31m", "\x1b[1m", "\x1b[35m", "\x1b[36m"):
        plain = plain.replace(code, "")
    assert plain == piped.stdout  # the same text, coloured


def test_the_alignment_reads_every_message_of_both_snapshots_once() -> None:
    for fmt in FORMATS:
        folder = FORMAT_FIXTURES / fmt
        for name in ("after.json", "broken.json"):
            raw_before = json.loads((folder / "before.json").read_text(encoding="utf-8"))
            raw_after = json.loads((folder / name).read_text(encoding="utf-8"))
            reader = resolve_format(fmt)
            before, after = reader.load_copy(raw_before), reader.load_copy(raw_after)
            old = read_messages("before", before, raw_before)
            new = read_messages("after", after, raw_after)
            rows = align(old, new)
            assert sorted(r.before for r in rows if r.before is not None) == list(range(len(old)))
            assert sorted(r.after for r in rows if r.after is not None) == list(range(len(new)))


GEMINI_BEFORE = [
    {"role": "user", "parts": [{"text": "hi"}]},
    {"role": "model", "parts": [{"text": "reading"},
                                {"functionCall": {"id": "f1", "name": "read", "args": {"p": 1}}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "f1", "name": "read", "response": {"x": 1}}}]},
    {"role": "model", "parts": [{"text": "done"}]}, {"role": "user", "parts": [{"text": "next"}]}]
LANGCHAIN_BEFORE = [
    {"type": "human", "content": "hi"}, {"type": "ai", "content": "", "tool_calls": [
        {"id": "c1", "name": "read", "args": {}}]},
    {"type": "tool", "tool_call_id": "c1", "content": "ok"}, {"type": "human", "content": "next"}]


@pytest.mark.parametrize(("fmt", "before", "lost", "stranded"), [
    ("gemini", GEMINI_BEFORE, "before[1].parts[1]", "after[0].parts[0]"),
    ("langchain", LANGCHAIN_BEFORE, "before[1].tool_calls[0]", "after[0]"),
])
def test_the_formats_without_worked_examples_are_drawn_in_their_own_coordinates(
        tmp_path: Path, fmt: str, before: list[dict[str, object]], lost: str, stranded: str) -> None:
    (tmp_path / "b.json").write_text(json.dumps(before), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps(before[2:]), encoding="utf-8")  # the call dropped
    out = run_cli("show", "--before", tmp_path / "b.json", "--after", tmp_path / "a.json", "--no-mutate",
                  "--input-format", fmt, expect=1).stdout
    assert f"  F1 ERROR TP-ORPHAN tool_pair_integrity at {stranded}\n" in out
    assert f"-> its call is not in after: {lost} (dropped)" in out
    assert f">> F1 TP-ORPHAN points here (named by F1, at {stranded})" in out


def test_a_pairs_file_written_from_an_agent_log_is_read_back_by_its_line(dataset: PairsDataset,
                                                                        tmp_path: Path) -> None:
    """`pairs -o` then `audit` of what it wrote: the record is a line of that file (its
    `source_kind` names the agent), read back as a line, not derived again as a log."""
    written = tmp_path / "pairs.jsonl"
    run_cli("pairs", dataset.root / "codex", "-o", written)
    run_cli("audit", written, "--contract", FORMAT_FIXTURES / "contract.yaml", "--out", tmp_path / "out",
            "-j", "1", "-q", "--no-mutate", "--fail-on", "none")
    out = run_cli("show", tmp_path / "out", CODEX_PAIR).stdout
    assert f"  {written} line 1 · session " in out
    assert "  from an agent log: source_kind codex · fidelity explicit" in out
    assert "messages not shown" not in out and "  S after[2]  user (summary, in place of before[1:12])" in out
