"""A new check is one module and one registry line: a throwaway check, written at test time into
a temporary module and registered by one line (the registry replaced), runs everywhere a
registered check runs, with no other file touched:

- `check` on the command line (CliRunner, and a real subprocess), its contract key accepted;
- `audit`: its findings are rows of the `findings` table with its code, and its catches are in
  the `mutants` table's `caught_by`;
- mutation: it has no re-check, so the fast path reruns it in full on every mutant (and the
  mutation-equivalence property still holds with it registered); `--verify` agrees.

Its facts of the before snapshot (`prepare`) are kept under its key (`BeforeFacts.of`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

import frayproof_audit.checks as registry
from frayproof_audit.checks.base import Check
from frayproof_audit.corpus import run_audit
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.run.audit_config import AuditConfig
from frayproof_audit.engine import check_loaded, prepare_before
from frayproof_audit.mutate import OPERATORS, mutate_pair
from frayproof_audit.mutate.fastpath import SharedPair
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.snapshot import load_list
from sessiongen import small
from sessiongen.strategies import mutation_cases
from tests.corpus_support import line, write_jsonl
from tests.helpers import REPO, history, load_module, make_contract, run_cli
from tests.test_mutation_equivalence import _judge_both_ways

NAME = "latest_request_kept"
SOURCE = f'''"""A throwaway check: before's latest request is still some message of after."""

from __future__ import annotations

from typing import Any

from frayproof_audit.checks.base import Check, Condition

NAME = "{NAME}"
LOST = Condition("XT-LOST", "The latest request of before is no message of after.")


def prepare(before: Any, contract: Any) -> Any:
    """Its before facts: the latest user message's index and content (None: no user message)."""
    index = before.last_index("user")
    return None if index is None else (index, before.views[index].content)


def find(after: Any, contract: Any, before: Any, settings: Any) -> list[Any]:
    facts = None if before is None else before.of(NAME)
    if facts is None or any(view.content == facts[1] for view in after.views):
        return []
    return [LOST.violation(NAME, settings.severity, "before", facts[0])]


CHECK = Check(name=NAME, key=NAME, conditions=(LOST,), find=find, prepare=prepare,
              summary="Before's latest request survives.", needs_before=True)
'''


def _write_module(folder: Path) -> ModuleType:
    return load_module(folder / "throwaway_check.py", SOURCE)


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return _write_module(tmp_path_factory.mktemp("throwaway"))


@contextmanager
def registered(module: ModuleType) -> Iterator[Check]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "CHECKS", (*registry.CHECKS, module.CHECK))  # the registry line
        yield module.CHECK


@pytest.fixture
def check(throwaway: ModuleType) -> Iterator[Check]:
    with registered(throwaway) as found:
        yield found


BEFORE = history(3)  # the latest request is message 13
KEPT = [BEFORE[0], *BEFORE[9:]]
LOST = BEFORE[:-1]
CONTRACT = f"version: 1\nchecks:\n  {NAME}:\n    severity: error\n"


def _files(folder: Path, after: list[dict[str, Any]]) -> list[str]:
    (folder / "before.json").write_text(json.dumps(BEFORE), encoding="utf-8")
    (folder / "after.json").write_text(json.dumps(after), encoding="utf-8")
    (folder / "contract.yaml").write_text(CONTRACT, encoding="utf-8")
    return ["--before", str(folder / "before.json"), "--after", str(folder / "after.json"),
            "--contract", str(folder / "contract.yaml")]


def test_without_its_line_the_check_does_not_exist(tmp_path: Path, throwaway: ModuleType) -> None:
    """The registry line is what makes it a check: unregistered, its contract key is unknown."""
    assert throwaway.CHECK not in registry.CHECKS
    failed = run_cli("check", *_files(tmp_path, LOST), expect=2)
    assert NAME in failed.stderr


def test_it_runs_in_check(tmp_path: Path, check: Check) -> None:
    failed = run_cli("check", *_files(tmp_path, LOST), expect=1)
    assert f"ERROR XT-LOST {NAME} before[13]" in failed.stdout
    report = json.loads(run_cli("check", *_files(tmp_path, LOST), "--format", "json", expect=1).stdout)
    assert [(v["check"], v["code"], v["message_index"]) for v in report["violations"]] == [
        (NAME, "XT-LOST", 13)]
    run_cli("check", *_files(tmp_path, KEPT), expect=0)


def test_it_runs_in_check_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """The same in a real process: the module and the registry line come first."""
    module_dir = tmp_path / "module"
    module_dir.mkdir()
    (module_dir / "throwaway_check.py").write_text(SOURCE, encoding="utf-8")
    program = ("import sys; sys.path.insert(0, sys.argv[1]); import throwaway_check; "
               "import frayproof_audit.checks as registry; "
               "registry.CHECKS = (*registry.CHECKS, throwaway_check.CHECK); "
               "from frayproof_audit.cli import main; main(sys.argv[2:], prog_name='frayproof-audit')")
    done = subprocess.run([sys.executable, "-c", program, str(module_dir), "check", *_files(tmp_path, LOST)],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert f"ERROR XT-LOST {NAME} before[13]" in done.stdout


def test_its_before_facts_are_kept_under_its_key(check: Check) -> None:
    facts = prepare_before(load_list(BEFORE), make_contract(CONTRACT))
    assert facts.of(NAME) == (13, "latest request")


def test_it_runs_in_audit_and_its_findings_are_table_rows(tmp_path: Path, check: Check) -> None:
    records = [{"pair_id": f"p{n}", "logged_at": "2025-06-02T10:00:00Z", "before": BEFORE,
                "after": LOST if n % 2 else KEPT} for n in range(4)]
    corpus = write_jsonl(tmp_path / "in.jsonl", [line(record) for record in records])
    (tmp_path / "contract.yaml").write_text(CONTRACT, encoding="utf-8")
    summary = run_audit(AuditConfig(inputs=(str(corpus),), out=str(tmp_path / "out"),
                                    contract=str(tmp_path / "contract.yaml"), n_jobs=1))
    assert (summary.passed, summary.failed) == (2, 2)
    findings = read_table(tmp_path / "out", "findings").collect()
    assert sorted(findings.select("pair_id", "check", "code", "message_index").iter_rows()) == [
        ("p1", NAME, "XT-LOST", 13), ("p3", NAME, "XT-LOST", 13)]
    mutants = read_table(tmp_path / "out", "mutants").collect()
    dropped = mutants.filter(pl.col("operator") == "drop_latest_user")
    assert dropped.height == 2 and all(NAME in caught for caught in dropped["caught_by"].to_list())


def test_mutation_reruns_it_in_full_on_every_mutant(check: Check) -> None:
    """No re-check: on every mutant of every operator, the fast path hands it the whole mutant."""
    contract = make_contract(CONTRACT)
    before, after = load_list(BEFORE), load_list(BEFORE)
    facts = prepare_before(before, contract)
    shared = SharedPair(after, contract, facts)
    assert shared.evaluator.rechecks[NAME] is None
    seen: list[int] = []
    find = check.find

    def counted(loaded: Any, *args: Any) -> Any:
        seen.append(len(loaded))
        return find(loaded, *args)

    object.__setattr__(check, "find", counted)  # the record is frozen
    judged = 0
    try:
        for name in OPERATORS:
            for group, mutant in shared.distinct(get_operator(name).find_sites(after, contract, facts)):
                seen.clear()
                report = shared.evaluate(group.first, mutant)
                assert seen == [mutant.length], name
                assert report.violations == check_loaded(before, mutant.loaded, contract).violations
                judged += 1
    finally:
        object.__setattr__(check, "find", find)
    assert judged > 10


def test_mutation_and_verify_catch_with_it(tmp_path: Path, check: Check) -> None:
    report = mutate_pair(load_list(BEFORE), load_list(KEPT), make_contract(CONTRACT), verify=True)
    caught = {mutant.operator: mutant.caught_by for mutant in report.mutants}
    assert caught["drop_latest_user"] == (NAME,)
    files = _files(tmp_path, KEPT)
    cli = ["mutate", "--input", files[1], "--after", files[3], "--contract", files[5], "--verify",
           "--format", "json"]
    document = json.loads(run_cli(*cli, expect=None).stdout)
    assert [m["reason"] for m in document["mutants"] if m["name"] == "drop_latest_user"] == [
        f"Rejected by {NAME}."]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_the_fast_path_still_equals_a_full_recheck(throwaway: ModuleType, case: small.MutationCase) -> None:
    with registered(throwaway):
        _judge_both_ways(*case)
