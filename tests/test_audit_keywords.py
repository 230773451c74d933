"""The library's `audit()` takes every option `AuditConfig` has, from one definition
(`RunOptions`), so an option added to the run is a keyword of `audit()` at once (issue 24: it
lacked `repair_out`)."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest

from frayproof_audit.corpus import AuditConfig, audit, read_table
from tests.corpus_support import good_lines, write_contract, write_jsonl
from tests.helpers import REPO, run_cli

SPELLED_FOR_PYTHON = {"n_jobs": "jobs"}
"""`AuditConfig` fields that `audit()` takes under another name."""
AUDIT_ONLY = {"progress"}
"""`audit()` parameters that are no option of the run."""


def _parameters() -> list[str]:
    return list(inspect.signature(audit).parameters)


def test_audit_takes_every_option_of_the_config_and_nothing_else() -> None:
    options = [SPELLED_FOR_PYTHON.get(option.name, option.name) for option in fields(AuditConfig)]
    assert sorted(_parameters()) == sorted([*options, *AUDIT_ONLY])
    assert _parameters()[:3] == ["inputs", "contract", "out"]
    assert all(parameter.kind is inspect.Parameter.KEYWORD_ONLY
               for parameter in list(inspect.signature(audit).parameters.values())[3:])


def test_an_unknown_keyword_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="job"):
        audit([str(tmp_path)], None, str(tmp_path / "out"), job=1)  # type: ignore[call-arg]
    assert not (tmp_path / "out").exists()


def test_repair_out_from_python_writes_what_the_command_line_writes(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    corpus = write_jsonl(tmp_path / "in.jsonl", good_lines(4))
    summary = audit([str(corpus)], str(contract), str(tmp_path / "lib"), jobs=1, mutate=False,
                    run_id="r", repair_out=str(tmp_path / "lib-fixed"), fail_on=["none"])
    run_cli("audit", corpus, "--contract", contract, "--out", tmp_path / "cli", "--no-mutate",
            "--jobs", "1", "--run-id", "r", "--repair-out", tmp_path / "cli-fixed", "-q",
            "--fail-on", "none")
    written = sorted(path.name for path in (tmp_path / "lib-fixed").glob("repaired-*.jsonl"))
    assert summary.failed > 0 and written == ["repaired-r-00000.jsonl"]
    for name in written:
        library = (tmp_path / "lib-fixed" / name).read_text(encoding="utf-8")
        assert library and library == (tmp_path / "cli-fixed" / name).read_text(encoding="utf-8")
    findings = read_table(tmp_path / "lib", "findings").collect()
    assert findings["repairable"].any()


def test_the_docs_name_every_keyword_of_audit() -> None:
    docs = (REPO / "docs" / "audit.md").read_text(encoding="utf-8")
    paragraph = docs.split("`audit(inputs, contract, out, ...)` takes", 1)[1].split("\n\n", 1)[0]
    missing = [name for name in _parameters()[3:] if f"`{name}`" not in paragraph]
    assert not missing, f"docs/audit.md's Python section does not name: {missing}"
