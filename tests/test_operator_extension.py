"""Adding a mutation operator is one module and one registry line, shown by doing it.

A throwaway operator (it deletes the first system message) is written into a temporary module
at test time and registered by one line, `OPERATOR_TABLE` gaining its record. It then runs in
`mutate` (CLI), in a corpus audit (the `mutants` table), in `--verify`, and the property that
the fast path equals a full recheck holds for its mutants too: its edit is an existing one
(`DeleteMessage`), whose declared effects every check's re-check already knows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.mutate import mutate_pair, operators
from frayproof_audit.mutate.operators import Operator, get_operator, operator_names
from frayproof_audit.snapshot import load_list
from sessiongen import small
from sessiongen.strategies import mutation_cases
from tests.corpus_support import line, write_jsonl
from tests.helpers import FIXTURES, REPO, load_module, make_contract, run_cli
from tests.test_mutation_equivalence import _judge_both_ways

NAME = "drop_first_system"
SOURCE = f'''"""A throwaway operator: delete the first system message of the output."""

from __future__ import annotations

from typing import Any

from frayproof_audit.mutate.edits import DeleteMessage
from frayproof_audit.mutate.operators import Candidate, Operator, site


def drop_first_system(after: Any, contract: Any, facts: Any) -> list[Candidate]:
    index = next((i for i, view in enumerate(after.views) if view.role == "system"), None)
    if index is None:
        return []
    return [Candidate("{NAME}", "Delete the first system message.", index, site(after, index),
                      DeleteMessage(index))]


OPERATOR = Operator("{NAME}", "Delete the first system message.", "No system message in the output.",
                    "A lost system prompt passed; pin it with a role: system pin.",
                    drop_first_system)
'''

SESSION = json.loads((FIXTURES / "mutation_session.json").read_text(encoding="utf-8"))
PINNED = "version: 1\npins:\n  - name: system-prompt\n    role: system\n"
UNPINNED = "version: 1\n"


def _load(folder: Path) -> ModuleType:
    return load_module(folder / "throwaway_operator.py", SOURCE)


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return _load(tmp_path_factory.mktemp("operator"))


@pytest.fixture
def operator(throwaway: ModuleType) -> Iterator[Operator]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operators, "OPERATOR_TABLE", (*operators.OPERATOR_TABLE, throwaway.OPERATOR))
        yield throwaway.OPERATOR


def _files(folder: Path, contract: str) -> list[str]:
    (folder / "session.json").write_text(json.dumps(SESSION), encoding="utf-8")
    (folder / "contract.yaml").write_text(contract, encoding="utf-8")
    return ["--input", str(folder / "session.json"), "--after", str(folder / "session.json"),
            "--contract", str(folder / "contract.yaml")]


def test_without_its_line_the_operator_does_not_exist(tmp_path: Path, throwaway: ModuleType) -> None:
    assert NAME not in operator_names()
    failed = run_cli("mutate", *_files(tmp_path, PINNED), "--operators", NAME, expect=2)
    assert NAME in failed.stderr


def test_it_runs_in_mutate_caught_by_a_pin_and_surviving_without(tmp_path: Path, operator: Operator) -> None:
    assert get_operator(NAME) is operator and operator_names()[-1] == NAME
    caught = json.loads(run_cli("mutate", *_files(tmp_path, PINNED), "--operators", NAME,
                                "--verify", "--format", "json", expect=0).stdout)
    assert [(m["name"], m["status"]) for m in caught["mutants"]] == [(NAME, "caught")]
    survived = run_cli("mutate", *_files(tmp_path, UNPINNED), "--operators", NAME, expect=1)
    assert "pin it with a role: system pin" in survived.stdout


def test_it_runs_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """The same in a real process: the module, then the one registry line."""
    module_dir = tmp_path / "module"
    module_dir.mkdir()
    (module_dir / "throwaway_operator.py").write_text(SOURCE, encoding="utf-8")
    program = ("import sys; sys.path.insert(0, sys.argv[1]); import throwaway_operator; "
               "from frayproof_audit.mutate import operators; "
               "operators.OPERATOR_TABLE = (*operators.OPERATOR_TABLE, throwaway_operator.OPERATOR); "
               "from frayproof_audit.cli import main; main(sys.argv[2:], prog_name='frayproof-audit')")
    done = subprocess.run([sys.executable, "-c", program, str(module_dir), "mutate",
                           *_files(tmp_path, UNPINNED), "--operators", NAME],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "SURVIVED drop_first_system [after[0]]: A lost system prompt passed" in done.stdout


def test_its_mutants_are_rows_of_the_audit(tmp_path: Path, operator: Operator) -> None:
    records = [{"pair_id": f"p{n}", "logged_at": "2025-06-02T10:00:00Z", "before": SESSION,
                "after": SESSION} for n in range(2)]
    corpus = write_jsonl(tmp_path / "in.jsonl", [line(record) for record in records])
    (tmp_path / "contract.yaml").write_text(PINNED, encoding="utf-8")
    summary = audit([str(corpus)], str(tmp_path / "contract.yaml"), str(tmp_path / "out"), jobs=1)
    assert summary.passed == 2
    mutants = read_table(tmp_path / "out", "mutants").collect().filter(pl.col("operator") == NAME)
    assert sorted(mutants["pair_id"].to_list()) == ["p0", "p1"]
    assert mutants["status"].to_list() == ["caught", "caught"]
    assert all("pinned_content" in caught for caught in mutants["caught_by"].to_list())


def test_the_library_reports_it_with_verify(operator: Operator) -> None:
    report = mutate_pair(load_list(SESSION), load_list(SESSION), make_contract(PINNED), verify=True)
    (mutant,) = [m for m in report.mutants if m.operator == NAME]
    assert mutant.caught_by == ("pinned_content",)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_the_fast_path_still_equals_a_full_recheck(throwaway: ModuleType, case: small.MutationCase) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operators, "OPERATOR_TABLE", (*operators.OPERATOR_TABLE, throwaway.OPERATOR))
        _judge_both_ways(*case)
