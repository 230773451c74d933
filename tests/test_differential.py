"""Differential test: our verdicts equal frayproof 0.1.0's on the same files.

frayproof runs in its own Python 3.12 environment (`.peer/bin/python`, or the interpreter named
by FRAYPROOF_PEER_PYTHON; the `peer_python_path` fixture skips without one, or fails under
FRAYPROOF_AUDIT_REQUIRE_PEER=1) through `tests/peer_oracle.py`, once for every job. Compared: pass or
fail and, finding by finding in order, (check, severity, snapshot, message_index, tool_call_id,
pin, rule). Input errors compare as "both input errors". Deliberate differences:

* B3 — `role: null`: frayproof raises; we treat it as a missing role. Checked as: frayproof
  raises on the file, and our verdict equals frayproof's on the same file without that key.
* B1 — nesting deeper than 512 levels: an input error for us; frayproof accepts up to its
  recursion limit and crashes beyond it.

Cases of checks frayproof does not have (tool schemas, `tool_arguments`) compare the five it
has: frayproof reads the contract without the keys it does not know, and our findings of the
other checks are left out, so adding tool schemas is shown never to change frayproof's verdicts.

FRAYPROOF_DIFF_SEED / FRAYPROOF_DIFF_CASES change the generated set (default 0 / 400).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import frayproof_audit
from frayproof_audit.checks import CHECK_NAMES, CHECKS
from sessiongen.small import GeneratedCase, differential_cases
from tests.case_data import load_cases
from tests.helpers import CHECK_KEYS, EXAMPLE_CONTRACT, FIXTURES, make_contract, verdict

ORACLE = Path(__file__).with_name("peer_oracle.py")
SEED = int(os.environ.get("FRAYPROOF_DIFF_SEED", "0"))
DEFAULT_COUNT = 400  # README.md states it; tests/test_meta.py keeps the two equal
COUNT = int(os.environ.get("FRAYPROOF_DIFF_CASES", str(DEFAULT_COUNT)))

Verdict = list[Any]
PEER_CHECK_KEYS, PEER_CHECK_NAMES = CHECK_KEYS[:5], CHECK_NAMES[:5]
"""frayproof 0.1.0's five checks; ours are registered first, in its order."""
PEER_KEYS = ("version", "format", "checks", "pins", "retain")


@dataclass
class Job:
    """One comparison: files on disk, what we say, and (filled in later) what frayproof says."""

    name: str
    after: Path
    before: Path | None = None
    contract: Path | None = None
    notes: list[str] = field(default_factory=list)
    ours: Verdict = field(default_factory=list)
    peer: Verdict = field(default_factory=list)
    peer_normalized: Verdict | None = None  # B3: frayproof on the file without `role: null`
    peer_contract: Path | None = None  # the contract without keys frayproof does not know

    def spec(self, after: Path | None = None) -> dict[str, Any]:
        contract = self.peer_contract or self.contract
        return {
            "after": str(after or self.after),
            "before": None if self.before is None else str(self.before),
            "contract": None if contract is None else str(contract),
        }


def peer_part(contract: dict[str, Any]) -> dict[str, Any]:
    """The contract as frayproof can read it: only its keys and its checks."""
    kept = {key: value for key, value in contract.items() if key in PEER_KEYS}
    if isinstance(kept.get("checks"), dict):
        kept["checks"] = {k: v for k, v in kept["checks"].items() if k in PEER_CHECK_KEYS}
    return kept


def peer_findings(ours: Verdict) -> Verdict:
    """Our verdict on frayproof's checks alone."""
    if ours[0] != "ok":
        return ours
    kept = [item for item in ours[2] if item[0] in PEER_CHECK_NAMES]
    return ["ok", all(item[1] != "error" for item in kept), kept]


def our_verdict(after: Any, before: Any, contract: Any) -> Verdict:
    try:
        if before is None:
            report = frayproof_audit.validate(after, contract)
        else:
            report = frayproof_audit.check(before, after, contract)
    except frayproof_audit.InputError as exc:
        return ["input_error", str(exc)]
    return ["ok", report.passed, [list(item) for item in verdict(report)]]


def same(ours: Verdict, theirs: Verdict) -> bool:
    if ours[0] == "input_error" or theirs[0] == "input_error":
        return ours[0] == theirs[0]
    return ours == theirs


def run_peer(python: Path, specs: list[dict[str, Any]]) -> list[Verdict]:
    done = subprocess.run(
        [str(python), str(ORACLE)], input=json.dumps(specs), capture_output=True,
        text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, f"peer oracle failed:\n{done.stderr}"
    result: list[Verdict] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, peer_python_path: Path) -> Path:
    return tmp_path_factory.mktemp("differential")


class Files:
    def __init__(self, root: Path, peer: Path | None = None) -> None:
        self.root = root
        self.peer = peer  # the frayproof interpreter `judge` asks
        self.n = 0

    def write(self, data: bytes, suffix: str) -> Path:
        self.n += 1
        path = self.root / f"{self.n:05d}{suffix}"
        path.write_bytes(data)
        return path

    def json(self, value: Any) -> Path:
        return self.write(json.dumps(value, ensure_ascii=False).encode("utf-8"), ".json")


def without_null_roles(data: bytes) -> bytes | None:
    try:
        messages = json.loads(data.decode("utf-8-sig"))
    except ValueError:
        return None
    for message in messages:
        if isinstance(message, dict) and "role" in message and message["role"] is None:
            del message["role"]
    return json.dumps(messages, ensure_ascii=False).encode("utf-8")


def judge(jobs: list[Job], files: Files) -> None:
    """Fill in our verdicts and frayproof's (one oracle run for all jobs)."""
    specs = [job.spec() for job in jobs]
    normalized_at: dict[int, int] = {}
    for index, job in enumerate(jobs):
        job.ours = our_verdict(job.after, job.before, job.contract)
        if job.peer_contract is not None:
            job.ours = peer_findings(job.ours)
        if any("B3" in note for note in job.notes):
            cleaned = without_null_roles(job.after.read_bytes())
            if cleaned is not None:
                normalized_at[index] = len(specs)
                specs.append(job.spec(files.write(cleaned, ".json")))
    assert files.peer is not None, "judging needs the peer interpreter"
    verdicts = run_peer(files.peer, specs)
    for index, job in enumerate(jobs):
        job.peer = verdicts[index]
        if index in normalized_at:
            job.peer_normalized = verdicts[normalized_at[index]]


def mismatches(jobs: list[Job]) -> list[str]:
    problems = []
    for job in jobs:
        if job.peer_normalized is not None:  # B3
            ok = job.peer[0] == "input_error" and same(job.ours, job.peer_normalized)
            expected = job.peer_normalized
        else:
            ok = same(job.ours, job.peer)
            expected = job.peer
        if not ok:
            problems.append(
                f"{job.name} {job.notes}: after={job.after} before={job.before} "
                f"contract={job.contract}\n    ours: {job.ours}\n    peer: {expected}"
            )
    return problems


def assert_all_equal(jobs: list[Job]) -> None:
    problems = mismatches(jobs)
    assert not problems, f"{len(problems)} of {len(jobs)} differ:\n" + "\n".join(problems[:15])


def test_yaml_cases_match_frayproof(workdir: Path, peer_python_path: Path) -> None:
    files = Files(workdir / "cases", peer_python_path)
    files.root.mkdir()
    jobs = []
    opt_in = {check.name for check in CHECKS if not check.enabled_by_default}
    for case in load_cases():
        if case.file in opt_in:
            continue  # a check beyond frayproof's (off by default): the peer has no such key
        if (case.contract or {}).get("format", "openai") != "openai":
            continue  # another input format: frayproof reads Chat Completions only
        contract = None
        if case.contract is not None:
            contract = files.write(json.dumps(case.contract).encode(), ".yaml")
        job = Job(case.label, files.json(case.after),
                  None if case.before is None else files.json(case.before), contract)
        if case.peer == "input-error":
            job.notes.append("B3")
        if case.contract is not None and peer_part(case.contract) != case.contract:
            job.peer_contract = files.write(json.dumps(peer_part(case.contract)).encode(), ".yaml")
        jobs.append(job)
    judge(jobs, files)
    assert_all_equal(jobs)
    # Our YAML expectations are frayproof's verdicts, and they are not vacuous.
    assert sum(1 for job in jobs if job.ours[0] == "ok" and job.ours[2]) > 100


def test_fixtures_match_frayproof(workdir: Path, peer_python_path: Path) -> None:
    files = Files(workdir / "fixtures", peer_python_path)
    files.root.mkdir()
    clean = FIXTURES / "clean_session.json"
    jobs = [Job(f"validate {path.name}", path) for path in sorted(FIXTURES.glob("*.json"))]
    for path in sorted(FIXTURES.glob("*.json")):
        jobs.append(Job(f"check clean -> {path.name}", path, clean, EXAMPLE_CONTRACT))
        jobs.append(Job(f"check {path.name} -> clean", clean, path, EXAMPLE_CONTRACT))
    judge(jobs, files)
    assert_all_equal(jobs)


def generated_jobs(files: Files, cases: list[GeneratedCase]) -> list[Job]:
    jobs = []
    for case in cases:
        after = files.write(case.after_bytes or b"", ".json")
        before = None if case.before is None else files.json(case.before)
        contract = None
        if case.contract_yaml is not None:
            contract = files.write(case.contract_yaml.encode("utf-8"), ".yaml")
        jobs.append(Job(case.name, after, before, contract, list(case.notes)))
    return jobs


def test_generated_cases_match_frayproof(workdir: Path, peer_python_path: Path) -> None:
    files = Files(workdir / "generated", peer_python_path)
    files.root.mkdir()
    jobs = generated_jobs(files, differential_cases(SEED, COUNT))
    judge(jobs, files)
    assert_all_equal(jobs)

    # The generated set must exercise what it claims to.
    outcomes = Counter(
        "input_error" if job.ours[0] == "input_error" else ("pass" if job.ours[1] else "fail")
        for job in jobs
    )
    checks_seen = Counter(f[0] for job in jobs if job.ours[0] == "ok" for f in job.ours[2])
    assert outcomes["pass"] >= COUNT // 10, outcomes
    assert outcomes["fail"] >= COUNT // 4, outcomes
    assert outcomes["input_error"] >= COUNT // 25, outcomes
    assert set(checks_seen) == {
        "tool_pair_integrity", "unique_tool_ids", "structure", "pinned_content", "retention"
    }, checks_seen
    assert sum(1 for job in jobs if job.peer_normalized is not None) >= COUNT // 50


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("duplicate key")
    return dict(pairs)


def test_list_input_equals_file_input(tmp_path: Path) -> None:
    """Our strict file parser and the list API agree on every generated case."""
    files = Files(tmp_path)
    for job in generated_jobs(files, differential_cases(SEED + 1, 150)):
        try:
            messages = json.loads(job.after.read_bytes().decode("utf-8-sig"),
                                  object_pairs_hook=no_duplicates)
        except ValueError:
            continue  # not a list the API could be handed (bad JSON, duplicate keys)
        if not isinstance(messages, list):
            continue
        before = None if job.before is None else json.loads(job.before.read_text("utf-8"))
        contract = None if job.contract is None else make_contract(job.contract.read_text())
        from_list = our_verdict(messages, before, contract)
        from_file = our_verdict(job.after, job.before, contract)
        assert same(from_list, from_file), (job.name, from_list, from_file)


def test_deep_nesting_is_an_input_error_where_frayproof_crashes_b1(workdir: Path,
                                                                   peer_python_path: Path) -> None:
    files = Files(workdir / "deep", peer_python_path)
    files.root.mkdir()
    deep = b'[{"role": "user", "content": "x", "m": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]"
    just_over = b'[{"role": "user", "content": "x", "m": ' + b"[" * 600 + b"]" * 600 + b"}]"
    jobs = [Job("deep-100k", files.write(deep, ".json")),
            Job("deep-600", files.write(just_over, ".json"))]
    judge(jobs, files)
    assert jobs[0].peer == ["crash", "RecursionError"]
    assert jobs[0].ours[0] == "input_error"
    # Between our limit (512) and frayproof's recursion limit, frayproof accepts; we refuse.
    assert jobs[1].peer == ["ok", True, []]
    assert jobs[1].ours[0] == "input_error"
